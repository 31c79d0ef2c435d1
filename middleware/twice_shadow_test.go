package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestSharedPolicyShadowDenialListedOnce: a middleware in shadow mode
// further out that denies a request counts nothing (a Take is all or
// nothing), so the one further in decides the policy they share again
// (TestSharedPolicyCountsOnceWithShadow). Its decision is the one that
// counted, and the one enforced: the response reports the policy once, as
// that one decided it. The IETF fields listed it twice, a member in the
// shadow one's field line and another in the inner one's, in RateLimit and
// RateLimit-Policy; when the shadow one denied for a policy of its own,
// the two members of the shared policy even disagreed (r=4 there, 3 here).
// The shadow one's other members stay, and a field line left empty is
// dropped: a shadow middleware nested in itself reports the second
// decision alone. Through chi and a ServeMux, on an injected clock.
func TestSharedPolicyShadowDenialListedOnce(t *testing.T) {
	for _, tt := range []struct {
		name        string
		outerOwn    bool // the shadow one also has a policy of its own, of limit 1
		innerShadow bool
		self        bool   // one shadow middleware, with the policies of both, nested in itself
		requests    int    // the last one is checked
		status      int    // of the last request
		rateLimit   string // the RateLimit lines of the last response, joined by " | "
		policies    string // its RateLimit-Policy lines, joined by " | "
		violated    string // the 429's violated-policies
	}{
		{
			name:      "shadow one denies for the shared policy",
			requests:  6,
			status:    http.StatusTooManyRequests,
			rateLimit: `"per-min";r=0;t=55, "login";r=5;t=55`,
			policies:  `"per-min";q=5;w=60, "login";q=10;w=60`,
			violated:  `"violated-policies":["per-min"]`,
		},
		{
			name:      "shadow one denies for a policy of its own",
			outerOwn:  true,
			requests:  2,
			status:    http.StatusOK,
			rateLimit: `"outer";r=0;t=59 | "per-min";r=3;t=59, "login";r=8;t=59`,
			policies:  `"outer";q=1;w=60 | "per-min";q=5;w=60, "login";q=10;w=60`,
		},
		{
			name:        "both in shadow mode",
			innerShadow: true,
			requests:    6,
			status:      http.StatusOK,
			rateLimit:   `"per-min";r=0;t=55, "login";r=5;t=55`,
			policies:    `"per-min";q=5;w=60, "login";q=10;w=60`,
		},
		{
			name:      "shadow middleware nested in itself",
			self:      true,
			requests:  6,
			status:    http.StatusOK,
			rateLimit: `"per-min";r=0;t=55, "login";r=5;t=55`,
			policies:  `"per-min";q=5;w=60, "login";q=10;w=60`,
		},
	} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(tt.name+"/"+mux, func(t *testing.T) {
				store, clock := newStore(t)
				shared := fixed("per-min", 5, time.Minute, constKey)
				outerPolicies := []*policy.Policy{shared}
				if tt.outerOwn {
					outerPolicies = append([]*policy.Policy{fixed("outer", 1, time.Minute, constKey)}, outerPolicies...)
				}
				outer := middleware.MustNew(store, outerPolicies, middleware.WithClock(clock), middleware.WithShadow(nil))
				innerOpts := []middleware.Option{middleware.WithClock(clock)}
				if tt.innerShadow {
					innerOpts = append(innerOpts, middleware.WithShadow(nil))
				}
				inner := middleware.MustNew(store, []*policy.Policy{shared, fixed("login", 10, time.Minute, constKey)}, innerOpts...)
				if tt.self {
					outer = middleware.MustNew(store, []*policy.Policy{shared, fixed("login", 10, time.Minute, constKey)},
						middleware.WithClock(clock), middleware.WithShadow(nil))
					inner = outer
				}
				w := serveEverySecond(nestedRouter(mux, outer, inner), clock, tt.requests)
				checkIETFLines(t, w, tt.status, tt.rateLimit, tt.policies)
				if tt.violated != "" && (!strings.Contains(w.Body.String(), tt.violated) || strings.Count(w.Body.String(), "per-min") != 2) {
					t.Errorf("body %s, want per-min named once in the detail and once in %s", w.Body, tt.violated)
				}
			})
		}
	}
}

// TestSharedPolicyShadowDenialUnlistedThenHeld: the member a middleware
// further in removed from the line of one in shadow mode further out
// (TestSharedPolicyShadowDenialListedOnce) is passed over when a third
// one, further in still, holds the request and counts the lines written
// before its hold from its end: the shadow one's other member is counted
// after the hold (t=110, 120 s less the 10 s hold), as the middle one's
// line is. The shadow one's line was read as if the removed member were
// still there, and so left as written (t=120).
func TestSharedPolicyShadowDenialUnlistedThenHeld(t *testing.T) {
	store, clock := newStore(t) // t0 is a two-minute boundary
	shared := fixed("per-min", 5, time.Minute, remote)
	outer := middleware.MustNew(store, []*policy.Policy{shared, fixed("outer", 1, 2*time.Minute, remote)},
		middleware.WithClock(clock), middleware.WithShadow(nil))
	mid := middleware.MustNew(store, []*policy.Policy{shared}, middleware.WithClock(clock))
	inner := middleware.MustNew(store, []*policy.Policy{queueEvery("q10", 10*time.Second)}, middleware.WithClock(clock), advancing(clock))
	h := outer.Handler(mid.Handler(inner.Handler(ok)))
	serve(h, "GET", "/") // counted by the shadow one, departs at once
	w := serve(h, "GET", "/")
	if w.Code != http.StatusOK || !clock.Now().Equal(t0.Add(10*time.Second)) {
		t.Fatalf("second request: %d at %s; want 200 after a hold of 10 s", w.Code, clock.Now().Sub(t0))
	}
	if got, want := strings.Join(w.Header().Values("RateLimit"), " | "), `"outer";r=0;t=110 | "per-min";r=3;t=50 | "q10";r=5;t=0`; got != want {
		t.Errorf("RateLimit %q, want %q", got, want)
	}
	if got, want := strings.Join(w.Header().Values("RateLimit-Policy"), " | "), `"outer";q=1;w=120 | "per-min";q=5;w=60 | "q10";q=7;w=10`; got != want {
		t.Errorf("RateLimit-Policy %q, want %q", got, want)
	}
}

// TestSharedPolicyShadowOuterRetryAfterThreeLevels: of three nested
// middlewares, the outer one in shadow mode counts a policy it shares with
// the middle one, which leaves it out (TestSharedPolicyCountsOnceWithShadow)
// and enforces it on the retry: the shadow one denies it then without
// counting, and the middle one decides it. So a 429 that the inner one
// answers for a policy of its own, when the shadow one admitted the
// request with the shared policy's last unit, waits for that policy too:
// 119 s, not the inner policy's 59, at which the retry was refused again
// by the middle one. With or without a policy of the middle one's own
// (without, it decides nothing and passes the request on as it came). A
// middle one in shadow mode enforces nothing on the retry: the 429 waits
// for the inner policy alone, 59 s. Through chi and a ServeMux, on an
// injected clock.
func TestSharedPolicyShadowOuterRetryAfterThreeLevels(t *testing.T) {
	for _, tt := range []struct {
		name              string
		midOwn, midShadow bool
		retryAfter        time.Duration
	}{
		{"middle one", false, false, 119 * time.Second},
		{"middle one with a policy of its own", true, false, 119 * time.Second},
		{"middle one in shadow mode", false, true, 59 * time.Second},
	} {
		for i, mux := range []string{"chi", "ServeMux"} {
			t.Run(tt.name+"/"+mux, func(t *testing.T) {
				store, clock := newStore(t)
				clock.Set(t0.Add(time.Duration(4+4*i) * time.Minute)) // a two-minute boundary
				shared := fixed("two-min", 2, 2*time.Minute, constKey)
				outer := middleware.MustNew(store, []*policy.Policy{shared}, middleware.WithClock(clock), middleware.WithShadow(nil))
				midPolicies := []*policy.Policy{shared}
				if tt.midOwn {
					midPolicies = append(midPolicies, fixed("hour", 100, time.Hour, constKey))
				}
				midOpts := []middleware.Option{middleware.WithClock(clock)}
				if tt.midShadow {
					midOpts = append(midOpts, middleware.WithShadow(nil))
				}
				mid := middleware.MustNew(store, midPolicies, midOpts...)
				inner := middleware.MustNew(store, []*policy.Policy{fixed("minute", 1, time.Minute, constKey)}, middleware.WithClock(clock))
				var h http.Handler
				if mux == "chi" {
					r := chi.NewRouter()
					r.Use(outer.Handler, mid.Handler)
					r.With(inner.Handler).Get("/", ok)
					h = r
				} else {
					sm := http.NewServeMux()
					sm.Handle("GET /", inner.Handler(ok))
					h = outer.Handler(mid.Handler(sm))
				}
				w := admitThenDeny(t, mux, h, clock)
				if got, want := w.Header().Get("Retry-After"), strconv.Itoa(int(tt.retryAfter/time.Second)); got != want {
					t.Errorf("Retry-After %q, want %s (RateLimit %q)", got, want, w.Header().Values("RateLimit"))
				}
				retryAdmittedAt(t, mux, h, clock, tt.retryAfter)
			})
		}
	}
}

// serveEverySecond sends n GET / requests to h, one a second on clock, and
// returns the last one's response.
func serveEverySecond(h http.Handler, clock *algotest.Clock, n int) *httptest.ResponseRecorder {
	var w *httptest.ResponseRecorder
	for range n {
		w = serve(h, "GET", "/")
		clock.Advance(time.Second)
	}
	return w
}

// checkIETFLines reports a response w whose status, RateLimit and
// RateLimit-Policy lines (the field lines joined with " | ") are not the
// ones wanted.
func checkIETFLines(t *testing.T, w *httptest.ResponseRecorder, status int, rateLimit, policies string) {
	t.Helper()
	if w.Code != status {
		t.Errorf("last request: %d, want %d", w.Code, status)
	}
	if got := strings.Join(w.Header().Values("RateLimit"), " | "); got != rateLimit {
		t.Errorf("RateLimit %q, want %q", got, rateLimit)
	}
	if got := strings.Join(w.Header().Values("RateLimit-Policy"), " | "); got != policies {
		t.Errorf("RateLimit-Policy %q, want %q", got, policies)
	}
}
