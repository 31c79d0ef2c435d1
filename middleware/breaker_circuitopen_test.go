package middleware_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// errCircuitOpen is a store's refusal of a call it did not send, its own
// breaker open for the part of the backend the call needed, as the Redis
// store returns it for a Cluster node whose circuit is open.
var errCircuitOpen = fmt.Errorf("redisstore: take: %w", algorithms.ErrCircuitOpen)

// TestBreakerStoreCircuitOpenIsNeither: a store whose own breaker refused
// the call (algorithms.ErrCircuitOpen) said nothing of the backend the
// other keys need (a Redis Cluster's other masters), and added no latency
// to save: the middleware's breaker neither counts it as a failure nor as
// an answer. A run of them longer than the threshold leaves the breaker
// closed, the next request decided by the store; between two failures it
// does not end their run. Each such request gets the failure mode and is
// counted in StoreErrors.
func TestBreakerStoreCircuitOpenIsNeither(t *testing.T) {
	t.Run("a run of them", func(t *testing.T) {
		mem, clock := newStore(t)
		s := &scripted{mem: mem, fail: []error{errCircuitOpen, errCircuitOpen, errCircuitOpen, errCircuitOpen, errCircuitOpen}}
		var errs []error
		m := middleware.MustNew(s, []*policy.Policy{fixed("p", 100, time.Minute, remote)},
			middleware.WithBreaker(2, 10*time.Second), middleware.WithClock(clock),
			middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))
		h := m.Handler(ok)
		for i := range 5 {
			if w := serve(h, "GET", "/"); w.Code != 200 || w.Header().Get("RateLimit") != "" {
				t.Errorf("request %d: %d RateLimit %q; want the failure mode (open: 200, no header)", i, w.Code, w.Header().Get("RateLimit"))
			}
		}
		w := serve(h, "GET", "/")
		if w.Code != 200 || w.Header().Get("RateLimit") != `"p";r=99;t=60` || s.calls != 6 {
			t.Errorf("the request after them: %d RateLimit %q, %d store calls; want it decided by the store (6 calls)",
				w.Code, w.Header().Get("RateLimit"), s.calls)
		}
		if st := m.Stats(); st.BreakerOpen != 0 || st.StoreErrors != 5 || st.FailedOpen != 5 || len(errs) != 5 {
			t.Errorf("stats %+v, %d errors reported; want the breaker never open, 5 store errors, 5 failed open, 5 reported", st, len(errs))
		}
		if m.State() != middleware.StateHealthy {
			t.Errorf("state %v, want %v", m.State(), middleware.StateHealthy)
		}
	})
	t.Run("between two failures", func(t *testing.T) {
		mem, clock := newStore(t)
		s := &scripted{mem: mem, fail: []error{errDown, errCircuitOpen, errDown}}
		m := middleware.MustNew(s, []*policy.Policy{fixed("p", 100, time.Minute, remote)},
			middleware.WithBreaker(2, 10*time.Second), middleware.WithClock(clock))
		h := m.Handler(ok)
		for range 3 {
			serve(h, "GET", "/")
		}
		serve(h, "GET", "/") // kept from the store: the second failure in a row opened it
		if st := m.Stats(); st.BreakerOpen != 1 || s.calls != 3 {
			t.Errorf("after a failure, a refusal of the store's own breaker, a failure: %d store calls (want 3), stats %+v; want the breaker open", s.calls, st)
		}
	})
}
