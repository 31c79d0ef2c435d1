package middleware_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// flapping is a store that fails while down is set.
type flapping struct {
	algorithms.Store
	down atomic.Bool
}

func (f *flapping) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	if f.down.Load() {
		return nil, errDown
	}
	return f.Store.Take(ctx, checks...)
}

// TestStoreFailureLoggedByDefault: DESIGN.md's "fail open (default, logged
// and counted)". A middleware built without an observer logs each change
// of its failure State on slog.Default (a warning when the store starts
// failing, information when it answers again), at most one record a
// second, the changes left out counted in the next record; with WithLogger
// the LogObserver logs them instead, once, and with another observer
// (metrics) the observer is told and nothing is logged.
func TestStoreFailureLoggedByDefault(t *testing.T) {
	buf := defaultLogTo(t)

	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	mem, _ := newStore(t)
	store := &flapping{Store: mem}
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 100, time.Minute, remote)},
		middleware.WithClock(clock), middleware.WithBreaker(0, 0))
	h := m.Handler(ok)
	const msg = "ratekeeper: failure state changed"

	serve(h, "GET", "/")
	if recs := logRecords(t, buf, msg); len(recs) != 0 {
		t.Fatalf("a healthy store logged %v", recs)
	}
	store.down.Store(true)
	if w := serve(h, "GET", "/"); w.Code != 200 {
		t.Fatalf("fail open answered %d", w.Code)
	}
	recs := logRecords(t, buf, msg)
	if len(recs) != 1 || recs[0]["level"] != "WARN" || recs[0]["from"] != "healthy" || recs[0]["to"] != "open" {
		t.Fatalf("records %v; want one warning, healthy to open", recs)
	}
	// Flapping within the second: back, down, back. Not logged yet.
	store.down.Store(false)
	serve(h, "GET", "/")
	store.down.Store(true)
	serve(h, "GET", "/")
	store.down.Store(false)
	clock.Advance(time.Second - time.Nanosecond)
	serve(h, "GET", "/")
	if recs := logRecords(t, buf, msg); len(recs) != 1 {
		t.Fatalf("%d records within the second, want the first alone: %v", len(recs), recs)
	}
	// A second after the first record, the next change is logged with the
	// three left out.
	clock.Advance(time.Nanosecond)
	store.down.Store(true)
	serve(h, "GET", "/")
	recs = logRecords(t, buf, msg)
	if len(recs) != 2 || recs[1]["to"] != "open" || recs[1]["changes_not_logged"] != float64(3) {
		t.Fatalf("records %v; want a second one, to open, with changes_not_logged 3", recs)
	}
	clock.Advance(time.Second)
	store.down.Store(false)
	serve(h, "GET", "/")
	recs = logRecords(t, buf, msg)
	if len(recs) != 3 || recs[2]["level"] != "INFO" || recs[2]["to"] != "healthy" || recs[2]["changes_not_logged"] != nil {
		t.Fatalf("records %v; want a third, information, to healthy, nothing left out", recs)
	}

	// With WithLogger, its LogObserver logs each change; slog.Default gets
	// nothing more.
	buf.Reset()
	var own bytes.Buffer
	m2 := middleware.MustNew(store, []*policy.Policy{fixed("p", 100, time.Minute, remote)},
		middleware.WithClock(clock), middleware.WithBreaker(0, 0), middleware.WithLogger(slog.New(slog.NewJSONHandler(&own, nil))))
	h2 := m2.Handler(ok)
	store.down.Store(true)
	serve(h2, "GET", "/")
	if recs := logRecords(t, buf, msg); len(recs) != 0 {
		t.Errorf("with WithLogger, slog.Default got %v", recs)
	}
	if recs := logRecords(t, &own, msg); len(recs) != 1 {
		t.Errorf("with WithLogger, its logger got %v; want the change once", recs)
	}

	rec := &stateRecorder{}
	m3 := middleware.MustNew(store, []*policy.Policy{fixed("p", 100, time.Minute, remote)},
		middleware.WithClock(clock), middleware.WithBreaker(0, 0), middleware.WithObserver(rec))
	store.down.Store(false)
	serve(m3.Handler(ok), "GET", "/")
	store.down.Store(true)
	serve(m3.Handler(ok), "GET", "/")
	if recs := logRecords(t, buf, msg); len(recs) != 0 || len(rec.changes) != 1 {
		t.Errorf("with an observer: slog.Default got %v, the observer %v; want nothing logged, one change told", recs, rec.changes)
	}
}

// stateRecorder is an Observer keeping the changes of state it is told.
type stateRecorder struct{ changes []string }

func (s *stateRecorder) ObserveRequest(middleware.Event) {}
func (s *stateRecorder) ObserveState(from, to middleware.State) {
	s.changes = append(s.changes, from.String()+">"+to.String())
}
func (s *stateRecorder) ObserveLimit(string, int64, int64) {}
