package middleware_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNestedGiveBackOfRaisedCopyJudgedAtInner: login (5 a minute,
// counting failures only) in two nested middlewares, raised to 8 by
// SetLimit further out: the one further in, at 5, leaves it out as a
// repeat and restates the member further out at its 5 ("login";q=5,
// r = 5 - used). A response whose headers are still unsent when its unit
// comes back (a handler that wrote nothing) has that member revised
// after the give-back: its r must be the room left at the 5 in force,
// not at the 8 (r=7;t=50 after one failure, where 4 more failures are
// admitted: the unit given back was one, the member rose by four). Through
// chi and a ServeMux, on an injected clock.
func TestNestedGiveBackOfRaisedCopyJudgedAtInner(t *testing.T) {
	quiet := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	fail := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusUnauthorized) })
	for _, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			store, clock := newStore(t)
			clock.Advance(10 * time.Second)
			login := func() *policy.Policy {
				return fixed("login", 5, time.Minute, constKey, policy.CountIf(policy.CountFailed))
			}
			outer := middleware.MustNew(store, []*policy.Policy{login()}, middleware.WithClock(clock), middleware.WithErrorHandler(func(*http.Request, error) {}))
			inner := middleware.MustNew(store, []*policy.Policy{login()}, middleware.WithClock(clock))
			setLimit(t, outer, "login", 8)
			var h http.Handler
			if mux == "chi" {
				r := chi.NewRouter()
				r.Use(outer.Handler)
				r.With(inner.Handler).Get("/quiet", quiet)
				r.With(inner.Handler).Get("/fail", fail)
				h = r
			} else {
				sm := http.NewServeMux()
				sm.Handle("GET /quiet", inner.Handler(quiet))
				sm.Handle("GET /fail", inner.Handler(fail))
				h = outer.Handler(sm)
			}
			for _, step := range []struct {
				path        string
				code        int
				line, quota string
			}{
				{"/fail", http.StatusUnauthorized, `"login";r=4;t=50`, `"login";q=5;w=60`},
				{"/quiet", http.StatusOK, `"login";r=4;t=50`, `"login";q=5;w=60`},
			} {
				w := serve(h, "GET", step.path)
				if got, quota := w.Result().Header.Get("RateLimit"), w.Result().Header.Get("RateLimit-Policy"); w.Code != step.code || got != step.line || quota != step.quota {
					t.Errorf("GET %s: %d, RateLimit %q, RateLimit-Policy %q; want %d, %q, %q", step.path, w.Code, got, quota, step.code, step.line, step.quota)
				}
			}
			admitted := 0
			for range 8 {
				if serve(h, "GET", "/fail").Code == http.StatusUnauthorized {
					admitted++
				}
			}
			if admitted != 4 {
				t.Errorf("%d more failures admitted, want the 4 reported", admitted)
			}
		})
	}
}
