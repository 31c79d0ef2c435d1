package client_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// A server decides how long its key stays cut: a Retry-After (or a reset)
// of up to a year, whatever WithMaxRetryAfter. Every other record of a
// key (its hold, its line, its place at a gate, its queue in the store)
// goes once the key is idle, but a cut was kept until the end the server
// announced. A Transport calling hosts it does not choose (a crawler, a
// webhook sender: wildcard DNS gives a server as many hosts as it likes)
// kept some 230 bytes for each host that once answered so, for a year.
//
// The record now keeps at most client.MaxIdleCuts keys that nothing
// waits on (no hold in force, no probe out, no request waiting for one's
// answer): the keys so cut long ago are forgotten once there are more,
// and the record stays within that bound and twice the keys in use.
func TestCutRecordBounded(t *testing.T) {
	tr, err := client.New(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if client.MaxIdleCuts != 16384 {
		t.Errorf("MaxIdleCuts = %d, WithProactive's doc says 16384", client.MaxIdleCuts)
	}
	year := http.Header{"Retry-After": {"31536000"}}
	now := t0
	// Round after round of hosts refusing for a year, a minute's hold
	// (the default maximum) each, the hosts of a round never called again.
	const perRound = client.MaxIdleCuts / 2
	for round := range 8 {
		for k := range perRound {
			tr.Observe(fmt.Sprintf("r%d-h%d.example", round, k), year, now)
		}
		keys, n := tr.Cuts()
		if int64(keys) != n {
			t.Fatalf("round %d: %d keys recorded, the fast path counts %d", round, keys, n)
		}
		// The keys held now (this round's) and those kept idle.
		if bound := client.MaxIdleCuts + 2*perRound; keys > bound {
			t.Fatalf("round %d: %d keys recorded as cut, want at most %d (%d idle kept, twice the %d held)",
				round, keys, bound, client.MaxIdleCuts, perRound)
		}
		now = now.Add(2 * time.Minute) // every hold so far has passed
	}
}

// A bounded record must not forget a key while requests are on their
// way to it: those asleep on its cut hold wake as it ends, and only then
// take their roles (one the probe, the others waiting for its answer). A
// sweep in between (responses for other hosts filling the record) found
// the key idle, its hold no longer in force and no probe out yet, and
// forgot it: every request woken went at once, into the refusal the
// server announced for the hour. Here two requests wait on the cut
// minute; as the first is about to take its role, 16384 other hosts are
// cut. The probe must be alone at the server, the other asleep until its
// answer.
func TestCutKeptForTheRequestsItsHoldWakes(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 1:
			refuseForTheHour(w, clock.Now(), "Retry-After")
		case 2:
			awaitSleepers(t, clock, 1, "the probe at the server")
			io.WriteString(w, "ok")
		default:
			io.WriteString(w, "ok")
		}
	})
	_, tr := newClient(t, clock, client.WithMaxWait(5*time.Minute))
	if got := call(context.Background(), tr, srv.URL, "first"); got.err != nil || got.status != http.StatusTooManyRequests {
		t.Fatalf("first request: got %d %v, want the 429", got.status, got.err)
	}
	var once sync.Once
	defer client.BeforeProbeEnter(func() {
		once.Do(func() {
			year := http.Header{"Retry-After": {"31536000"}}
			now := clock.Now()
			for k := range client.MaxIdleCuts {
				tr.Observe(fmt.Sprintf("h%d.example", k), year, now)
			}
		})
	})()
	results := make([]result, 2)
	clock.drive(t, 2, func(i int) {
		results[i] = call(context.Background(), tr, srv.URL, strconv.Itoa(i))
	})
	if at, want := srv.arrivals(), []time.Duration{0, time.Minute, time.Minute}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
	if got, want := tally(results), map[string]int{"200": 2}; !maps.Equal(got, want) {
		t.Errorf("results %v, want %v", got, want)
	}
}
