package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// nested3Router serves GET / with ok through outer, mid and inner: outer
// and mid as chi's r.Use and inner as r.With, or outer and mid around a
// ServeMux whose route holds inner.
func nested3Router(mux string, outer, mid, inner *middleware.Middleware) http.Handler {
	if mux == "chi" {
		r := chi.NewRouter()
		r.Use(outer.Handler, mid.Handler)
		r.With(inner.Handler).Get("/", ok)
		return r
	}
	sm := http.NewServeMux()
	sm.Handle("GET /", inner.Handler(ok))
	return outer.Handler(mid.Handler(sm))
}

// TestSharedGuardCountedOnceBehindShadowDenial: one policy (10 a minute)
// given to three nested middlewares: an enforcing one further out, at its
// configured 10; a shadow one in the middle at 8, which also has a policy
// of its own (1 a minute) and so denies, counting nothing, from the second
// request on; an enforcing one further in, at 8 too and guarded by the 10
// (lowered by SetLimit, or reloaded from 10 to 8). The one further in
// decides the 8 itself when the shadow one denied it, but the outer one
// counted the 10 already: its guard under the 10 must be left out, or
// every request counts twice there. Eight requests in a minute pass (the
// 8), the ninth is refused. It admitted 5: the guard dropped for the
// enforcing one further out was taken back because the shadow one in
// between denied its copy of the 8. Through chi and a ServeMux.
func TestSharedGuardCountedOnceBehindShadowDenial(t *testing.T) {
	for _, tt := range []struct {
		name   string
		mid    func(t *testing.T, m *middleware.Middleware) // the shadow one's copy at 8
		inner  func(t *testing.T, m *middleware.Middleware) // the inner one's guarded 8
		midAt8 bool                                         // the shadow one is configured at 8
	}{
		{
			name:   "inner lowered by SetLimit, shadow built at 8",
			midAt8: true,
			inner:  func(t *testing.T, m *middleware.Middleware) { setLimit(t, m, "p", 8) },
		},
		{
			name:  "inner lowered by SetLimit, shadow lowered by SetLimit",
			mid:   func(t *testing.T, m *middleware.Middleware) { setLimit(t, m, "p", 8) },
			inner: func(t *testing.T, m *middleware.Middleware) { setLimit(t, m, "p", 8) },
		},
		{
			name:   "inner reloaded from 10 to 8, shadow built at 8",
			midAt8: true,
			inner: func(t *testing.T, m *middleware.Middleware) {
				if err := m.SetPolicies([]*policy.Policy{fixed("p", 8, time.Minute, constKey)}); err != nil {
					t.Fatal(err)
				}
			},
		},
	} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(tt.name+"/"+mux, func(t *testing.T) {
				store, clock := newStore(t)
				quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
				outer := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, constKey)}, middleware.WithClock(clock), quiet)
				midLimit := int64(10)
				if tt.midAt8 {
					midLimit = 8
				}
				mid := middleware.MustNew(store, []*policy.Policy{fixed("p", midLimit, time.Minute, constKey), fixed("own", 1, time.Minute, constKey)},
					middleware.WithClock(clock), middleware.WithShadow(nil), quiet)
				inner := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, constKey)}, middleware.WithClock(clock), quiet)
				if tt.mid != nil {
					tt.mid(t, mid)
				}
				tt.inner(t, inner)
				if gs := inner.Set().Policy(0).Guards(); len(gs) != 1 || gs[0].Limit != 10 {
					t.Fatalf("inner guards %v, want the 10", gs)
				}
				h := nested3Router(mux, outer, mid, inner)
				clock.Advance(time.Second)
				if got := admittedOf(h, 9); got != 8 {
					t.Errorf("%d of 9 admitted in a minute, want 8 (the inner 8, each request counted once under the 10)", got)
				}
				ten := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, constKey)}, middleware.WithClock(clock))
				res, err := ten.Peek(httptest.NewRequest("GET", "/", nil))
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Decision(0).Remaining; got != 1 {
					t.Errorf("the 10 after 9 requests: %d left, want 1", got)
				}
			})
		}
	}
}

func setLimit(t *testing.T, m *middleware.Middleware, name string, limit int64) {
	t.Helper()
	if err := m.SetLimit(name, limit); err != nil {
		t.Fatal(err)
	}
}
