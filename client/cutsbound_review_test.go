package client_test

import (
	"fmt"
	"net/http"
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
