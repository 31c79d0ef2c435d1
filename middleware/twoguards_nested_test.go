package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNestedTwoGuardsCountOnce: one policy (10 a minute) given to two
// nested middlewares, one of which is reloaded at 5 and lowered by
// SetLimit to 2 during the reload's guard: its copy is guarded by its
// configured 5 and by the replaced 10, the very state the other
// middleware counts under its Spec. Each state a request reaches must be
// counted once: a client that used 1 of the 10 gets 1 more (the 10 judged
// at the lowered 2), not none (the 10 counted twice per request), and the
// configured 5 holds that one. Whichever middleware is the reloaded one,
// chi and ServeMux alike.
func TestNestedTwoGuardsCountOnce(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		for _, reloadInner := range []bool{true, false} {
			name := mux + "/outer reloaded"
			if reloadInner {
				name = mux + "/inner reloaded"
			}
			t.Run(name, func(t *testing.T) {
				store, clock := newStore(t)
				p := fixed("p", 10, time.Minute, remote)
				quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
				outer := middleware.MustNew(store, []*policy.Policy{p}, middleware.WithClock(clock), quiet)
				inner := middleware.MustNew(store, []*policy.Policy{p}, middleware.WithClock(clock), quiet)
				h := nestedRouter(mux, outer, inner)
				clock.Advance(10 * time.Second)
				if got := admittedOf(h, 1); got != 1 {
					t.Fatalf("before the reload: %d of 1 admitted", got)
				}
				m := outer
				if reloadInner {
					m = inner
				}
				if err := m.SetPolicies([]*policy.Policy{fixed("p", 5, time.Minute, remote)}); err != nil {
					t.Fatal(err)
				}
				if err := m.SetLimit("p", 2); err != nil {
					t.Fatal(err)
				}
				if gs := m.Set().Policy(0).Guards(); len(gs) != 2 {
					t.Fatalf("guards %v, want two (the configured 5, the replaced 10)", gs)
				}
				if got := admittedOf(h, 3); got != 1 {
					t.Errorf("at 2, 1 of the 10 used: %d of 3 admitted, want 1 (each request counted once under the 10, judged at 2)", got)
				}
				five := middleware.MustNew(store, []*policy.Policy{fixed("p", 5, time.Minute, remote)}, middleware.WithClock(clock))
				res, err := five.Peek(httptest.NewRequest("GET", "/", nil))
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Decision(0).Remaining; got != 4 {
					t.Errorf("the configured 5 after 1 admitted at 2: %d left, want 4", got)
				}
			})
		}
	}
}
