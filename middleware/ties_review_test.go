package middleware_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNestedTieReportsLongerReset: the single-valued profiles report the
// policy with the lowest remaining, and of two with the same remaining the
// one whose allowance takes longer to come back (policy.Result.Lowest; the
// research notes' "on ties, prefer the longer t"). Two nested middlewares
// report what one middleware holding both policies reports, whichever is
// further out: a per-second and a per-minute policy of 3, each with 2
// left after the first request, report the minute (reset 60), through chi
// (r.Use and r.With) and through a ServeMux. Before, the inner middleware
// kept the outer one's values on a tie, so that an outer per-second policy
// hid the inner per-minute one: reset 1, while the RateLimit-Policy list
// (whose members may not share a quota value) named only the minute's
// window.
func TestNestedTieReportsLongerReset(t *testing.T) {
	second := func() *policy.Policy { return fixed("per-second", 3, time.Second, remote) }
	minute := func() *policy.Policy { return fixed("per-minute", 3, time.Minute, remote) }
	for _, p := range []middleware.Profile{middleware.Draft7, middleware.Draft6, middleware.Legacy, middleware.LegacyUnix} {
		for _, order := range []struct {
			name         string
			outer, inner func() *policy.Policy
		}{
			{"second outside", second, minute},
			{"minute outside", minute, second},
		} {
			t.Run(p.String()+"/"+order.name, func(t *testing.T) {
				store, clock := newStore(t)
				opts := []middleware.Option{middleware.WithHeaders(p), middleware.WithClock(clock)}
				one := middleware.MustNew(store, []*policy.Policy{order.outer(), order.inner()}, opts...)
				want := rateLimitFields(serve(one.Handler(ok), "GET", "/").Header())
				if got := want.Values("RateLimit-Reset"); p == middleware.Draft6 && !slices.Equal(got, []string{"60"}) {
					t.Fatalf("one middleware: RateLimit-Reset %q, want [60] (the minute)", got)
				}

				for _, router := range []string{"chi", "ServeMux"} {
					store, clock := newStore(t)
					opts := []middleware.Option{middleware.WithHeaders(p), middleware.WithClock(clock)}
					outer := middleware.MustNew(store, []*policy.Policy{order.outer()}, opts...)
					inner := middleware.MustNew(store, []*policy.Policy{order.inner()}, opts...)
					var h http.Handler
					if router == "chi" {
						r := chi.NewRouter()
						r.Use(outer.Handler)
						r.With(inner.Handler).Get("/", ok)
						h = r
					} else {
						mux := http.NewServeMux()
						mux.Handle("GET /", inner.Handler(ok))
						h = outer.Handler(mux)
					}
					w := serve(h, "GET", "/")
					if w.Code != http.StatusOK {
						t.Fatalf("%s: status %d", router, w.Code)
					}
					if got := rateLimitFields(w.Header()); !equalFields(got, want) {
						t.Errorf("%s, nested: %q; one middleware: %q", router, got, want)
					}
				}
			})
		}
	}
}

func equalFields(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}
