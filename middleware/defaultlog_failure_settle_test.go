package middleware_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestStoreFailureAfterRecoveryLoggedByDefault: a store that answers again
// (the recovery logged) and fails once more within the second of that
// record, and then stays down, has its failure logged on slog.Default by
// the first request after that second, so that the log's last record tells
// the State the middleware is in: it was left "to healthy" for as long as
// the store stayed down (limits lifted unseen, as DESIGN.md's logged fail
// open is meant to show). With and without the breaker (whose open
// circuit answers the requests itself), through chi and a ServeMux, on an
// injected clock.
func TestStoreFailureAfterRecoveryLoggedByDefault(t *testing.T) {
	const msg = "ratekeeper: failure state changed"
	for _, mux := range []string{"chi", "ServeMux"} {
		for _, breakAfter := range []int{0, 2} {
			t.Run(fmt.Sprintf("%s/breaker %d", mux, breakAfter), func(t *testing.T) {
				buf := defaultLogTo(t)
				clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
				m, store, h := flappingServer(t, mux, clock, breakAfter)

				store.down.Store(true)
				serve(h, "GET", "/") // logged: to open
				clock.Advance(2 * time.Second)
				store.down.Store(false)
				serve(h, "GET", "/") // logged: to healthy
				clock.Advance(100 * time.Millisecond)
				store.down.Store(true)
				serve(h, "GET", "/") // down again within the second: left out
				if recs := logRecords(t, buf, msg); len(recs) != 2 || recs[1]["to"] != "healthy" {
					t.Fatalf("records %v; want the failure and the recovery", recs)
				}
				clock.Advance(900*time.Millisecond - time.Nanosecond)
				serve(h, "GET", "/")
				if recs := logRecords(t, buf, msg); len(recs) != 2 {
					t.Fatalf("records %v within the second; want two", recs)
				}
				clock.Advance(time.Nanosecond)
				for range 5 {
					serve(h, "GET", "/")
					clock.Advance(time.Second)
				}
				if m.State() != middleware.StateFailingOpen {
					t.Fatalf("State %v, want open", m.State())
				}
				recs := logRecords(t, buf, msg)
				if len(recs) != 3 || recs[2]["from"] != "healthy" || recs[2]["to"] != "open" || recs[2]["changes_not_logged"] != float64(1) {
					t.Fatalf("records %v; want a third, healthy to open, with the change left out counted (the store down for 5s, the last record 'to healthy')", recs)
				}
			})
		}
	}
}

// TestStateLogFlappingConcurrent: requests from several goroutines through
// chi while the store flaps and the clock moves (run it with -race). Every
// record logged on slog.Default is a change (from is not to), one that
// follows the last record's State when no change was left out between
// them; and once the store settles, up or down, a second later the last
// record tells the State.
func TestStateLogFlappingConcurrent(t *testing.T) {
	const msg = "ratekeeper: failure state changed"
	buf := defaultLogTo(t)
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	mem, _ := newStore(t)
	store := &flapping{Store: mem}
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 1_000_000, time.Minute, remote)},
		middleware.WithClock(clock), middleware.WithBreaker(0, 0))
	h := routedBy("chi", m)
	check := func(settled string) {
		t.Helper()
		recs := logRecords(t, buf, msg)
		for i, rec := range recs {
			if rec["from"] == rec["to"] {
				t.Fatalf("record %d %v: not a change", i, rec)
			}
			if _, left := rec["changes_not_logged"]; i > 0 && !left && rec["from"] != recs[i-1]["to"] {
				t.Fatalf("record %d %v follows %v with no change left out between", i, rec, recs[i-1])
			}
		}
		if len(recs) == 0 {
			t.Fatalf("no record; want the last to %s", settled)
		}
		if last := recs[len(recs)-1]; last["to"] != settled {
			t.Fatalf("%d records, the last %v; want it to %s", len(recs), last, settled)
		}
	}
	for round := range 20 {
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 200 {
					// The store flips between the requests of the
					// goroutines, and the clock moves.
					store.down.Store((g+i)%3 == 0)
					clock.Advance(time.Duration((g*i)%7) * time.Millisecond)
					serve(h, "GET", "/")
				}
			})
		}
		wg.Wait()
		down := round%2 == 1
		store.down.Store(down)
		serve(h, "GET", "/")
		clock.Advance(time.Second)
		serve(h, "GET", "/")
		if down {
			check("open")
		} else {
			check("healthy")
		}
	}
}
