package otelmetrics_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// delayingStore answers every check with a Delay of an hour, which a
// fixed_window policy cannot give; it forwards Take alone.
type delayingStore struct{ mem *algorithms.MemoryStore }

func (s delayingStore) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	ds, err := s.mem.Take(ctx, checks...)
	for i := range ds {
		ds[i].Delay = time.Hour
	}
	return ds, err
}

// TestInvalidDecisionIsAStoreError: prommetrics' test of the same name,
// through otelmetrics: a store answer the middleware refuses (a Delay on
// a fixed_window) and fails closed on is one ratekeeper.errors{kind=store}
// under the policy, and no ratekeeper.requests.
func TestInvalidDecisionIsAStoreError(t *testing.T) {
	obs, reader := newObserver(t)
	m := middleware.MustNew(delayingStore{memStore(t)}, []*policy.Policy{fixed("per-ip", 10, remote)}, middleware.WithObserver(obs),
		middleware.OnStoreError(middleware.FailClosed(time.Second)), middleware.WithErrorHandler(func(*http.Request, error) {}))
	if code := get(router(m), "/"); code != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", code)
	}
	if got := m.Stats().StoreErrors; got != 1 {
		t.Fatalf("Stats().StoreErrors = %d, want 1", got)
	}
	points, _ := collect(t, reader)
	wantLines(t, "nonzero counters", nonzero(points, "ratekeeper.errors")+nonzero(points, "ratekeeper.requests"),
		"ratekeeper.errors{kind=store,policy=per-ip} 1")
}
