package middleware_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNestedMergedDecisionCountedAfterHold: a middleware further in that
// takes into its own decision of a policy the decision a middleware
// further out made of it (a guard of a copy lowered or raised here,
// judged from that decision; a policy's own Spec counted there while a
// reload's guard is checked here; a copy lowered and folded there whose
// Spec is built here; a copy raised there, restated at the limit here)
// must count that decision's waits from now when a leaky_queue held the
// request in between, as retimeOuter counts the lines written then, and
// as the middleware counts its own after a hold. The policy w, six a
// minute on a fixed window, is met by two middlewares; a queue of one per
// 10 s, in a middleware between them or beside w in the outer one, holds
// the second request 10 s: its w members and values must report the
// window's end 50 s away. They reported 60, the wait as the middleware
// further out decided it, 10 s before.
func TestNestedMergedDecisionCountedAfterHold(t *testing.T) {
	for _, tc := range []struct {
		name string
		// inner and outer build the two middlewares' w and change it.
		inner, outer     func(m *middleware.Middleware)
		innerW           int64 // the limit w is built at further in
		between, besides string
		draft7           string
	}{
		{
			// The member further in, which judges the 6's state at
			// its 3, replaces the one further out (the same policy
			// at a limit not in force): w is reported once.
			name:    "guard of a copy lowered further in",
			inner:   func(m *middleware.Middleware) { mustSetLimit(m, 3) },
			between: `"q";r=5;t=0 | "w";r=1;t=50`,
			besides: `"q";r=5;t=0 | "w";r=1;t=50`,
			draft7:  "limit=3, remaining=1, reset=50",
		},
		{
			// Each middleware writes its member of w, and the one
			// further out, the lower (r=4 of the 6, not r=7 of the
			// 9), stands for the policy: a name has one member.
			name:    "guard of a copy raised further in",
			inner:   func(m *middleware.Middleware) { mustSetLimit(m, 9) },
			between: `"w";r=4;t=50 | "q";r=5;t=0`,
			besides: `"w";r=4;t=50, "q";r=5;t=0`,
			draft7:  "limit=6, remaining=4, reset=50",
		},
		{
			name:   "own Spec counted further out, a reload's guard further in",
			innerW: 12,
			inner: func(m *middleware.Middleware) {
				if err := m.SetPolicies([]*policy.Policy{fixed("w", 6, time.Minute, remote)}); err != nil {
					panic(err)
				}
			},
			between: `"q";r=5;t=0 | "w";r=4;t=50`,
			besides: `"q";r=5;t=0 | "w";r=4;t=50`,
			draft7:  "limit=6, remaining=4, reset=50",
		},
		{
			name:    "copy lowered and folded further out, built further in",
			innerW:  3,
			outer:   func(m *middleware.Middleware) { mustSetLimit(m, 3) },
			between: `"q";r=5;t=0 | "w";r=1;t=50`,
			besides: `"q";r=5;t=0 | "w";r=1;t=50`,
			draft7:  "limit=3, remaining=1, reset=50",
		},
		{
			name:    "copy raised further out, restated further in",
			outer:   func(m *middleware.Middleware) { mustSetLimit(m, 9) },
			between: `"w";r=4;t=50 | "q";r=5;t=0`,
			besides: `"w";r=4;t=50, "q";r=5;t=0`,
			draft7:  "limit=6, remaining=4, reset=50",
		},
	} {
		for _, where := range []string{"queue between", "queue besides"} {
			for _, p := range []middleware.Profile{middleware.IETF, middleware.Draft7} {
				t.Run(tc.name+"/"+where+"/"+p.String(), func(t *testing.T) {
					store, clock := newStore(t)
					var log []string
					q := queueEvery("q", 10*time.Second)
					opts := []middleware.Option{middleware.WithHeaders(p), middleware.WithClock(clock), logHolds("queue", clock, &log)}
					outerPolicies := []*policy.Policy{fixed("w", 6, time.Minute, remote)}
					if where == "queue besides" {
						outerPolicies = append(outerPolicies, q)
					}
					innerW := int64(6)
					if tc.innerW != 0 {
						innerW = tc.innerW
					}
					outer := middleware.MustNew(store, outerPolicies, opts...)
					inner := middleware.MustNew(store, []*policy.Policy{fixed("w", innerW, time.Minute, remote)}, opts...)
					if tc.outer != nil {
						tc.outer(outer)
					}
					if tc.inner != nil {
						tc.inner(inner)
					}
					h := inner.Handler(ok)
					if where == "queue between" {
						h = middleware.MustNew(store, []*policy.Policy{q}, opts...).Handler(h)
					}
					h = outer.Handler(h)
					serve(h, "GET", "/") // departs at once
					log = nil
					w := serve(h, "GET", "/")
					if w.Code != http.StatusOK || len(log) != 1 || log[0] != "queue 10s" {
						t.Fatalf("second request: %d, holds %q; want 200 after one hold of 10 s", w.Code, log)
					}
					want := tc.between
					if where == "queue besides" {
						want = tc.besides
					}
					if p == middleware.Draft7 {
						want = tc.draft7
					}
					if got := headerLines(w.Header(), "RateLimit"); got != want {
						t.Errorf("RateLimit %q, want %q", got, want)
					}
				})
			}
		}
	}
}

// mustSetLimit sets the limit of m's policy w.
func mustSetLimit(m *middleware.Middleware, limit int64) {
	if err := m.SetLimit("w", limit); err != nil {
		panic(err)
	}
}
