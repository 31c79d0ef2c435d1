package middleware_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestSharedPolicyRaisedReloadedHeaders: a policy given to nested
// middlewares, raised further out (SetLimit) and then reloaded in every
// one of them (the one further out keeps its raised share of the new
// limit), so that the copies further in are guarded by the Spec the
// reload replaced, which holds the requests of before it. The response
// reports the policy once, at the limit in force (the lowest), with what
// is left there counting every request of the window, before the reload
// too: not the room left under the new Spec alone (r=5 of 6 where 2
// were used), nor, refusing, the limit of the copy further out (a
// single-valued limit=16 where 4 refused). Through three middlewares, a
// copy lowered in the middle to the Spec the reload replaced is the
// limit in force: the one further in must not restate the member
// further out above it. Through chi and a ServeMux.
func TestSharedPolicyRaisedReloadedHeaders(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	// Steps run by two cases each, under two profiles. raisedReloaded: 8
	// a minute, raised to 14 further out; one request; a reload to 6 (10
	// further out): 2 of the 6 used.
	raisedReloaded := func(t *testing.T, ms []*middleware.Middleware, h http.Handler, clock *algotest.Clock) {
		setLimit(t, ms[0], "p", 14)
		serve(h, "GET", "/")
		reloadAll(t, ms, 6)
	}
	// raisedReloadedRefused: four requests of 2 a minute, raised to 8
	// further out; a reload to 4 (16 further out): the request further in
	// is refused at 4.
	raisedReloadedRefused := func(t *testing.T, ms []*middleware.Middleware, h http.Handler, clock *algotest.Clock) {
		reloadAll(t, ms, 2)
		setLimit(t, ms[0], "p", 8)
		for range 4 {
			serve(h, "GET", "/")
		}
		reloadAll(t, ms, 4)
	}
	for _, tt := range []struct {
		name    string
		prof    middleware.Profile
		layers  int
		steps   func(t *testing.T, ms []*middleware.Middleware, h http.Handler, clock *algotest.Clock)
		status  int
		headers map[string][]string
	}{
		{
			name: "raised out, reloaded, IETF", prof: middleware.IETF, layers: 2, steps: raisedReloaded,
			status:  http.StatusOK,
			headers: map[string][]string{"RateLimit-Policy": {`"p";q=6;w=60`}, "RateLimit": {`"p";r=4;t=60`}},
		},
		{
			name: "raised out, reloaded, Legacy", prof: middleware.Legacy, layers: 2, steps: raisedReloaded,
			status:  http.StatusOK,
			headers: map[string][]string{"X-RateLimit-Limit": {"6"}, "X-RateLimit-Remaining": {"4"}},
		},
		{
			name: "raised out, reloaded, refused, Draft7", prof: middleware.Draft7, layers: 3, steps: raisedReloadedRefused,
			status:  http.StatusTooManyRequests,
			headers: map[string][]string{"RateLimit-Policy": {"4;w=60"}, "RateLimit": {"limit=4, remaining=0, reset=60"}},
		},
		{
			name: "raised out, reloaded, refused, IETF", prof: middleware.IETF, layers: 3, steps: raisedReloadedRefused,
			status:  http.StatusTooManyRequests,
			headers: map[string][]string{"RateLimit-Policy": {`"p";q=4;w=60`}, "RateLimit": {`"p";r=0;t=60`}, "Retry-After": {"60"}},
		},
		{
			// 5 a minute, raised to 10 further out and 6 in the middle,
			// reloaded at 8 (16 and 9): the one further in holds 8.
			name: "two raised out, reloaded, Draft6", prof: middleware.Draft6, layers: 3,
			steps: func(t *testing.T, ms []*middleware.Middleware, h http.Handler, clock *algotest.Clock) {
				reloadAll(t, ms, 5)
				setLimit(t, ms[0], "p", 10)
				setLimit(t, ms[1], "p", 6)
				reloadAll(t, ms, 8)
			},
			status:  http.StatusOK,
			headers: map[string][]string{"RateLimit-Policy": {"8;w=60"}, "RateLimit-Limit": {"8"}, "RateLimit-Remaining": {"7"}},
		},
		{
			// 3 a minute: 7 further out, 1 in the middle (lowered);
			// three minutes later, reloaded at 11 (25 and 3): the 3 is
			// in force, beside the 11 further in.
			name: "raised out, lowered in the middle, reloaded, IETF", prof: middleware.IETF, layers: 3,
			steps: func(t *testing.T, ms []*middleware.Middleware, h http.Handler, clock *algotest.Clock) {
				reloadAll(t, ms, 3)
				setLimit(t, ms[1], "p", 1)
				setLimit(t, ms[0], "p", 7)
				clock.Advance(3 * time.Minute)
				reloadAll(t, ms, 11)
			},
			status:  http.StatusOK,
			headers: map[string][]string{"RateLimit-Policy": {`"p";q=3;w=60`}, "RateLimit": {`"p";r=2;t=60`}},
		},
		{
			// 4 a minute, reloaded at 8 three minutes later: 28 further
			// out (SetLimit 14 before), 8 in the middle, 4 further in
			// (SetLimit: the Spec the reload replaced).
			name: "raised out, lowered in to the replaced Spec, Draft7", prof: middleware.Draft7, layers: 3,
			steps: func(t *testing.T, ms []*middleware.Middleware, h http.Handler, clock *algotest.Clock) {
				reloadAll(t, ms, 4)
				clock.Advance(3 * time.Minute)
				setLimit(t, ms[0], "p", 14)
				reloadAll(t, ms, 8)
				setLimit(t, ms[2], "p", 4)
			},
			status:  http.StatusOK,
			headers: map[string][]string{"RateLimit-Policy": {"4;w=60"}, "RateLimit": {"limit=4, remaining=3, reset=60"}},
		},
		{
			// 8 a minute, reloaded at 5 (its SetLimit 14 in the middle
			// becomes 8, the Spec the reload replaced), 12 further out:
			// the one at 5 further in holds the client, and refuses
			// past it.
			name: "two raised out to the replaced Spec, Draft6", prof: middleware.Draft6, layers: 3,
			steps: func(t *testing.T, ms []*middleware.Middleware, h http.Handler, clock *algotest.Clock) {
				setLimit(t, ms[1], "p", 14)
				reloadAll(t, ms, 5)
				setLimit(t, ms[0], "p", 12)
				for range 5 {
					serve(h, "GET", "/")
				}
			},
			status:  http.StatusTooManyRequests,
			headers: map[string][]string{"RateLimit-Policy": {"5;w=60"}, "RateLimit-Limit": {"5"}, "RateLimit-Remaining": {"0"}},
		},
	} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(fmt.Sprintf("%s/%s", tt.name, mux), func(t *testing.T) {
				store, clock := newStore(t)
				ms := make([]*middleware.Middleware, tt.layers)
				for i := range ms {
					ms[i] = middleware.MustNew(store, []*policy.Policy{fixed("p", 8, time.Minute, constKey)},
						middleware.WithClock(clock), quiet, middleware.WithHeaders(tt.prof))
				}
				var h http.Handler
				if tt.layers == 2 {
					h = nestedRouter(mux, ms[0], ms[1])
				} else {
					h = nested3Router(mux, ms[0], ms[1], ms[2])
				}
				tt.steps(t, ms, h, clock)
				w := serve(h, "GET", "/")
				if w.Code != tt.status {
					t.Errorf("%d, want %d", w.Code, tt.status)
				}
				for k, v := range tt.headers {
					if got := w.Header().Values(k); !slices.Equal(got, v) {
						t.Errorf("%s %q, want %q", k, got, v)
					}
				}
			})
		}
	}
}

// reloadAll reloads the policy "p" at limit in each of ms.
func reloadAll(t *testing.T, ms []*middleware.Middleware, limit int64) {
	t.Helper()
	for _, m := range ms {
		if err := m.SetPolicies([]*policy.Policy{fixed("p", limit, time.Minute, constKey)}); err != nil {
			t.Fatal(err)
		}
	}
}
