package middleware_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNestedRefusalReportsOuterGiveBack: a middleware further out whose
// policy does not count the inner middleware's refusal (policy.CountIf:
// two-min counts successes only) gives the refused request's unit back,
// and now does so as the refusal's status is written, before its headers
// go out: the 429's RateLimit line of two-min reports the unit back
// (r=1), as the store has it, in agreement with Retry-After (59 s, the
// inner policy's: two-min does not hold the retry back). The line said
// r=0;t=119, the outer policy as the refused request had left it before
// the give-back, which told the client to wait two minutes that
// Retry-After and the store did not. The same with a deny handler that
// writes its own 429. Through chi and a ServeMux, on an injected clock.
func TestNestedRefusalReportsOuterGiveBack(t *testing.T) {
	for _, hook := range []bool{false, true} {
		for i, mux := range []string{"chi", "ServeMux"} {
			name := mux
			if hook {
				name += ", deny handler"
			}
			t.Run(name, func(t *testing.T) {
				store, clock := newStore(t)
				clock.Set(t0.Add(time.Duration(4+4*i) * time.Minute)) // a two-minute boundary
				outer := middleware.MustNew(store, []*policy.Policy{fixed("two-min", 2, 2*time.Minute, constKey, policy.CountIf(policy.CountSucceeded))}, middleware.WithClock(clock))
				opts := []middleware.Option{middleware.WithClock(clock)}
				if hook {
					opts = append(opts, middleware.WithDenyHandler(func(w http.ResponseWriter, r *http.Request, res *middleware.Result) {
						w.WriteHeader(http.StatusTooManyRequests)
					}))
				}
				inner := middleware.MustNew(store, []*policy.Policy{fixed("minute", 1, time.Minute, constKey)}, opts...)
				h := nestedRouter(mux, outer, inner)
				first := serve(h, "GET", "/")
				if got, want := strings.Join(first.Header().Values("RateLimit"), " | "), `"two-min";r=1;t=120 | "minute";r=0;t=60`; first.Code != 200 || got != want {
					t.Errorf("first request: %d, RateLimit %q; want 200, %q", first.Code, got, want)
				}
				clock.Advance(time.Second)
				w := serve(h, "GET", "/")
				if got, want := strings.Join(w.Header().Values("RateLimit"), " | "), `"two-min";r=1;t=119 | "minute";r=0;t=59`; w.Code != 429 || got != want {
					t.Errorf("refused request: %d, RateLimit %q; want 429, %q", w.Code, got, want)
				}
				if !hook && w.Header().Get("Retry-After") != "59" {
					t.Errorf("Retry-After %q, want 59", w.Header().Get("Retry-After"))
				}
				if st := outer.Stats(); st.GivenBack != 1 {
					t.Errorf("outer's GivenBack %d, want 1", st.GivenBack)
				}
				retryAdmittedAt(t, "", h, clock, 59*time.Second)
			})
		}
	}
}

// TestGiveBackReportedWhenHeadersUnsent: a response whose handler wrote
// nothing leaves net/http to send its headers once the handler has
// returned, after the give-back: the IETF line of a policy that does not
// count it (login counts failures only) reports the unit back, r=3 of 3,
// where it said r=2. A handler that writes its response sends the headers
// with its status, before it returns and the give-back is made: that line
// reports the request counted (r=2), as documented, although the store
// has the unit back, as the next response shows. The inner middleware's
// line (a policy that counts every response) is as decided in both.
// Through chi and a ServeMux, on an injected clock.
func TestGiveBackReportedWhenHeadersUnsent(t *testing.T) {
	quiet := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			store, clock := newStore(t)
			outer := middleware.MustNew(store, []*policy.Policy{fixed("login", 3, time.Minute, constKey, policy.CountIf(policy.CountFailed))}, middleware.WithClock(clock))
			inner := middleware.MustNew(store, []*policy.Policy{fixed("minute", 10, time.Minute, constKey)}, middleware.WithClock(clock))
			var h http.Handler
			if mux == "chi" {
				r := chi.NewRouter()
				r.Use(outer.Handler)
				r.With(inner.Handler).Get("/quiet", quiet)
				r.With(inner.Handler).Get("/ok", ok)
				h = r
			} else {
				sm := http.NewServeMux()
				sm.Handle("GET /quiet", inner.Handler(quiet))
				sm.Handle("GET /ok", inner.Handler(ok))
				h = outer.Handler(sm)
			}
			for _, step := range []struct{ path, want string }{
				{"/quiet", `"login";r=3;t=0 | "minute";r=9;t=60`},
				{"/ok", `"login";r=2;t=59 | "minute";r=8;t=59`},
				{"/quiet", `"login";r=3;t=0 | "minute";r=7;t=58`},
			} {
				w := serve(h, "GET", step.path)
				if got := strings.Join(w.Result().Header.Values("RateLimit"), " | "); w.Code != 200 || got != step.want {
					t.Errorf("GET %s: %d, RateLimit %q; want 200, %q", step.path, w.Code, got, step.want)
				}
				clock.Advance(time.Second)
			}
			if st := outer.Stats(); st.GivenBack != 3 {
				t.Errorf("outer's GivenBack %d, want 3", st.GivenBack)
			}
		})
	}
}

// TestNestedFailClosedReportsOuterGiveBack: the 503 of a middleware further
// in whose store failed (FailClosed) is no success, so the policy further
// out that counts successes only gives its unit back as the 503 is
// written: its line reports the allowance whole (r=2, t=0), not r=1.
func TestNestedFailClosedReportsOuterGiveBack(t *testing.T) {
	store, clock := newStore(t)
	outer := middleware.MustNew(store, []*policy.Policy{fixed("two-min", 2, 2*time.Minute, constKey, policy.CountIf(policy.CountSucceeded))}, middleware.WithClock(clock))
	inner := middleware.MustNew(&failing{}, []*policy.Policy{fixed("minute", 1, time.Minute, constKey)},
		middleware.WithClock(clock), middleware.OnStoreError(middleware.FailClosed(time.Second)), middleware.WithBreaker(0, 0))
	h := nestedRouter("ServeMux", outer, inner)
	for range 3 {
		w := serve(h, "GET", "/")
		if w.Code != 503 || w.Header().Get("RateLimit") != `"two-min";r=2;t=0` || w.Header().Get("Retry-After") != "1" {
			t.Errorf("%d RateLimit %q Retry-After %q, want 503 %q 1", w.Code, w.Header().Get("RateLimit"), w.Header().Get("Retry-After"), `"two-min";r=2;t=0`)
		}
		clock.Advance(time.Second)
	}
}
