package middleware_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestStoreRecoveryLoggedByDefault: a store that fails and answers again
// within the second of the failure's record (the recovery left out, at
// most one record a second) has its recovery logged on slog.Default by
// the first request the store answers after that second, so that the
// log's last record tells the State the middleware is in: it was left
// "to open" for as long as the store stayed healthy. Through a ServeMux,
// on an injected clock.
func TestStoreRecoveryLoggedByDefault(t *testing.T) {
	buf := defaultLogTo(t)
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	m, store, h := flappingServer(t, "ServeMux", clock, 0)
	const msg = "ratekeeper: failure state changed"

	store.down.Store(true)
	serve(h, "GET", "/")
	clock.Advance(100 * time.Millisecond)
	store.down.Store(false)
	serve(h, "GET", "/") // back within the second: left out
	if recs := logRecords(t, buf, msg); len(recs) != 1 || recs[0]["to"] != "open" {
		t.Fatalf("records %v; want the failure alone", recs)
	}
	clock.Advance(900*time.Millisecond - time.Nanosecond)
	serve(h, "GET", "/")
	if recs := logRecords(t, buf, msg); len(recs) != 1 {
		t.Fatalf("records %v within the second; want the failure alone", recs)
	}
	clock.Advance(time.Nanosecond)
	serve(h, "GET", "/")
	recs := logRecords(t, buf, msg)
	if len(recs) != 2 || recs[1]["level"] != "INFO" || recs[1]["from"] != "open" || recs[1]["to"] != "healthy" || recs[1]["changes_not_logged"] != float64(1) {
		t.Fatalf("records %v; want a second, information, open to healthy, with the change left out counted", recs)
	}
	if m.State() != middleware.StateHealthy {
		t.Fatalf("State %v, want healthy", m.State())
	}
	clock.Advance(100 * time.Second)
	for range 10 {
		serve(h, "GET", "/")
	}
	if recs := logRecords(t, buf, msg); len(recs) != 2 {
		t.Fatalf("records %v; want no more once settled", recs)
	}

	// Flapping that ends where the last record went: nothing more to log.
	store.down.Store(true)
	serve(h, "GET", "/") // logged: to open
	store.down.Store(false)
	serve(h, "GET", "/") // left out: to healthy
	store.down.Store(true)
	serve(h, "GET", "/") // left out: to open
	clock.Advance(2 * time.Second)
	if recs := logRecords(t, buf, msg); len(recs) != 3 || recs[2]["to"] != "open" {
		t.Fatalf("records %v; want a third, to open", recs)
	}
	store.down.Store(true)
	serve(h, "GET", "/")
	if recs := logRecords(t, buf, msg); len(recs) != 3 {
		t.Fatalf("records %v; want none more: the State is the one last logged", recs)
	}
}

// flappingServer returns a middleware of one fixed_window policy of 1000
// a minute on a flapping memory store, on clock, with its breaker opening
// after breakAfter failures for an hour (0: none), and the handler of a
// router (chi or ServeMux) serving it.
func flappingServer(t *testing.T, mux string, clock *algotest.Clock, breakAfter int) (*middleware.Middleware, *flapping, http.Handler) {
	t.Helper()
	mem, _ := newStore(t)
	store := &flapping{Store: mem}
	cooldown := time.Hour
	if breakAfter == 0 {
		cooldown = 0
	}
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 1000, time.Minute, remote)},
		middleware.WithClock(clock), middleware.WithBreaker(breakAfter, cooldown))
	return m, store, routedBy(mux, m)
}
