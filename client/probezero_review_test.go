package client_test

import (
	"context"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// A probe refused with a Retry-After that asks for no wait ("0", or an
// HTTP-date already past: a server whose clock lags, or an answer slow to
// arrive) learns no more than one refused without a Retry-After: such a
// Retry-After is no usable one (the retry gets the backoff, see
// WithBackoff). So, as for a refusal that says nothing of how long, the
// probe keeps its role through its retry and the others wait on; before,
// the cut was lifted at that refusal, and the requests waiting for the
// probe all went at once, into more refusals.
func TestProbeRefusedWithAZeroRetryAfterKeepsItsRole(t *testing.T) {
	for name, ra := range map[string]func(now time.Time) string{
		"0":         func(time.Time) string { return "0" },
		"date past": func(now time.Time) string { return now.Add(-time.Second).UTC().Format(http.TimeFormat) },
	} {
		t.Run(name, func(t *testing.T) {
			clock := newFakeClock()
			var mu sync.Mutex
			var order []string
			srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				order = append(order, r.Header.Get("X-Caller"))
				mu.Unlock()
				switch n {
				case 1:
					refuseForTheHour(w, clock.Now(), "Retry-After")
				case 2:
					awaitSleepers(t, clock, 4, "the others waiting for the probe")
					w.Header().Set("Retry-After", ra(clock.Now()))
					w.WriteHeader(http.StatusTooManyRequests)
				default:
					// Still refusing at 61s; admitting once the probe's
					// backoff has passed.
					if clock.Now().Sub(t0) == 61*time.Second {
						w.WriteHeader(http.StatusTooManyRequests)
						return
					}
					io.WriteString(w, "ok")
				}
			})
			_, tr := newClient(t, clock, client.WithBackoff(time.Second, time.Second), client.WithRandom(rand.NewPCG(1, 2)))
			refusedThenCut(t, clock, tr, srv.URL)
			results := make([]result, 5)
			clock.drive(t, 5, func(i int) {
				results[i] = call(context.Background(), tr, srv.URL, strconv.Itoa(i))
			})
			mu.Lock()
			defer mu.Unlock()
			if len(order) < 3 || order[2] != order[1] {
				t.Errorf("callers in arrival order %v: the refused probe's retry must come next, alone", order)
			}
			if len(order) != 7 {
				t.Errorf("%d requests reached the server (%v), want 7: first, the probe twice, four others once", len(order), order)
			}
			if got, want := tally(results), map[string]int{"200": 5}; !maps.Equal(got, want) {
				t.Errorf("results %v, want %v", got, want)
			}
		})
	}
}
