package middleware_test

import (
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/algorithms"
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

// TestNestedReportsAsOneMiddleware: while every request is admitted,
// policies spread over nested middlewares (chi's r.Use, one policy each)
// report in each single-valued profile what one middleware holding them
// all reports: the same values (the same policy, ties included) and the
// same RateLimit-Policy list (its field lines joined). Random policies of
// four kinds, windows of seconds and minutes, limits of 20 to 24, and up
// to 15 requests at random times, seeded: before ties went to the longer
// reset, the second sequence already differed (a tie of remaining 18
// reported the 2 s sliding window nested, the 2 min sliding log in one).
func TestNestedReportsAsOneMiddleware(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []algorithms.Kind{algorithms.FixedWindow, algorithms.SlidingWindow, algorithms.TokenBucket, algorithms.SlidingLog}
	profiles := []middleware.Profile{middleware.Draft7, middleware.Draft6, middleware.Legacy, middleware.LegacyUnix}
	for iter := range 500 {
		var specs []algorithms.Spec
		for range 2 + rng.IntN(2) {
			specs = append(specs, algorithms.Spec{Algorithm: kinds[rng.IntN(len(kinds))], Limit: int64(20 + rng.IntN(5)),
				Window: time.Duration(1+rng.IntN(3)) * []time.Duration{time.Second, time.Minute}[rng.IntN(2)]})
		}
		p := profiles[rng.IntN(len(profiles))]
		steps := make([]time.Duration, 1+rng.IntN(15))
		for i := range steps {
			steps[i] = time.Duration(rng.IntN(1500)) * time.Millisecond
		}
		run := func(nested bool) []http.Header {
			store, clock := newStore(t)
			var ps []*policy.Policy
			for i, spec := range specs {
				ps = append(ps, policy.Must(policy.New("p"+strconv.Itoa(i), spec, remote)))
			}
			opts := []middleware.Option{middleware.WithHeaders(p), middleware.WithClock(clock)}
			r := chi.NewRouter()
			if nested {
				for _, pol := range ps {
					r.Use(middleware.MustNew(store, []*policy.Policy{pol}, opts...).Handler)
				}
			} else {
				r.Use(middleware.MustNew(store, ps, opts...).Handler)
			}
			r.Get("/", ok)
			var out []http.Header
			for i, s := range steps {
				clock.Advance(s)
				w := serve(r, "GET", "/")
				if w.Code != http.StatusOK {
					t.Fatalf("sequence %d, request %d: %d, want every request admitted", iter, i, w.Code)
				}
				f := rateLimitFields(w.Header())
				for k, v := range f {
					f[k] = []string{strings.Join(v, ", ")}
				}
				out = append(out, f)
			}
			return out
		}
		one, nested := run(false), run(true)
		for i := range one {
			if !equalFields(one[i], nested[i]) {
				t.Fatalf("sequence %d (%s, %+v), request %d: one middleware %q, nested %q", iter, p, specs, i, one[i], nested[i])
			}
		}
	}
}
