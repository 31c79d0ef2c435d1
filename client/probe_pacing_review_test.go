package client_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// With pacing, a request handed the probe's role after it waited for the
// probe's answer had its turn in the queue while it waited: it must take a
// new one, not go at the instant the role comes to it. Here (1 request a
// second) the probe, sent at 61s, is refused without a word on how long and
// keeps its role for its retry, which takes the turn at 63s (the other
// request had 62s, and waits for the probe's answer since). The retry is
// refused again and gives up (its one retry spent), handing the role on:
// the other request must leave at its next turn, 64s, not at 63s with the
// retry, two requests in one instant to a server asking for one a second.
// (Found by a chaos run in virtual time checking the spacing of every
// request the server received.)
func TestHandedProbeTakesANewTurn(t *testing.T) {
	clock := newFakeClock()
	probeIn := make(chan struct{})
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 1:
			refuseForTheHour(w, clock.Now(), "Retry-After")
		case 2:
			close(probeIn)
			w.WriteHeader(http.StatusServiceUnavailable)
		case 3:
			// The probe's retry: the other waits for its answer.
			awaitSleepers(t, clock, 1, "the other waiting for the probe's answer")
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			io.WriteString(w, "ok")
		}
	})
	_, tr := newClient(t, clock, client.WithRate(1, time.Second), client.WithRetries(1), client.WithBackoff(time.Millisecond, time.Millisecond))
	refusedThenCut(t, clock, tr, srv.URL)
	results := make([]result, 2)
	clock.drive(t, 2, func(i int) {
		if i == 1 {
			// The other comes once the probe is out.
			if _, ok := hangguard.Within(probeIn, 5*time.Second); !ok {
				t.Error("the probe did not reach the server")
				return
			}
		}
		results[i] = call(context.Background(), tr, srv.URL, "")
	})
	want := []time.Duration{0, 61 * time.Second, 63 * time.Second, 64 * time.Second}
	if at := srv.arrivals(); !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v: the request handed the probe's role went without a turn", at, want)
	}
	if results[0].status != http.StatusServiceUnavailable || results[1].status != http.StatusOK {
		t.Errorf("results %+v, want the probe's 503 and the other's 200", results)
	}
}
