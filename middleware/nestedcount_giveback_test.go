package middleware_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// nestedCountKinds are the kinds whose copy lowered further in a
// middleware further out counts the request under
// (Event.CountedFurtherOut), 4 a minute; lowered to 2 further in. (A
// leaky_queue copy holds the request in a queue of its own, and counts
// it there again: it is not one of them.)
var nestedCountKinds = []algorithms.Spec{
	{Algorithm: algorithms.FixedWindow, Limit: 4, Window: time.Minute},
	{Algorithm: algorithms.SlidingWindow, Limit: 4, Window: time.Minute},
	{Algorithm: algorithms.SlidingLog, Limit: 4, Window: time.Minute},
	{Algorithm: algorithms.SlidingBuckets, Limit: 4, Window: time.Minute, Buckets: 6},
	{Algorithm: algorithms.TokenBucket, Limit: 4, Window: time.Minute},
	{Algorithm: algorithms.LeakyBucket, Limit: 4, Window: time.Minute},
}

// lowerInner lowers the inner middleware's copy of the policy named name
// (spec, keyed by remote, built with opts) to 2, as how says: "SetLimit"
// (as package middleware/adaptive does), "reload" (SetPolicies with the
// policy at 2, keep before it), or "not lowered".
func lowerInner(t *testing.T, inner *middleware.Middleware, how, name string, spec algorithms.Spec, keep []*policy.Policy, opts ...policy.Option) {
	t.Helper()
	switch how {
	case "SetLimit":
		setLimit(t, inner, name, 2)
	case "reload":
		lowered := spec
		lowered.Limit = 2
		ps := append(keep[:len(keep):len(keep)], policy.Must(policy.New(name, lowered, remote, opts...)))
		if err := inner.SetPolicies(ps); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNestedLoweredCopyGiveBackObservedOnce: one policy that does not
// count successful responses (login, policy.CountIf(CountFailed)) given
// to two nested middlewares that report to one observer, the inner one's
// copy lowered by SetLimit or a reload, or not lowered. Three 200s are
// admitted and each one's units go back in both middlewares: each is one
// request of login, counted allowed once (by the outer middleware,
// which counted its units) and given back once. The observer was told
// the give-back of each middleware, twice per request once the copy is
// lowered (given_back 6), where it counted the request allowed once: a
// policy a middleware further out counted the request under is one that
// middleware reports the give-back of too. The inner middleware's own
// policy (own, CountIf too) is given back once per request whatever
// happens to login. A route policy that does not apply comes first in
// the inner Set, so that a policy's index in the Result is not its bit
// in the Set. Each middleware's Stats.GivenBack counts the requests it
// gave back units of: 3 each. The same with the outer middleware in
// shadow mode, which counts the requests it admits as any other does.
// Every kind but leaky_queue, through chi and a ServeMux, on an injected
// clock.
func TestNestedLoweredCopyGiveBackObservedOnce(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	failed := policy.CountIf(policy.CountFailed)
	for _, spec := range nestedCountKinds {
		for _, how := range []string{"not lowered", "SetLimit", "reload", "SetLimit, outer in shadow mode"} {
			for _, mux := range []string{"chi", "ServeMux"} {
				t.Run(string(spec.Algorithm)+"/"+how+"/"+mux, func(t *testing.T) {
					store, clock := newStore(t)
					obs := newCountingObserver()
					login := policy.Must(policy.New("login", spec, remote, failed))
					route := fixed("route", 10, time.Minute, remote, policy.WithRoutes("POST /elsewhere"))
					own := fixed("own", 10, time.Minute, remote, failed)
					outerOpts := []middleware.Option{middleware.WithObserver(obs), middleware.WithClock(clock), quiet}
					lower := how
					if how == "SetLimit, outer in shadow mode" {
						outerOpts = append(outerOpts, middleware.WithShadow(nil))
						lower = "SetLimit"
					}
					outer := middleware.MustNew(store, []*policy.Policy{login}, outerOpts...)
					inner := middleware.MustNew(store, []*policy.Policy{route, own, login}, middleware.WithObserver(obs), middleware.WithClock(clock), quiet)
					lowerInner(t, inner, lower, "login", spec, []*policy.Policy{route, own}, failed)
					h := nestedVia(mux, outer, inner, nil, ok)
					for i := range 3 {
						if w := serve(h, "GET", "/"); w.Code != http.StatusOK {
							t.Fatalf("request %d: status %d, want 200", i+1, w.Code)
						}
						clock.Advance(time.Second)
					}
					if got, want := obs.String(), "login/allowed 3, login/given_back 3, own/allowed 3, own/given_back 3"; got != want {
						t.Errorf("observed %q, want %q", got, want)
					}
					if got, want := [2]int64{outer.Stats().GivenBack, inner.Stats().GivenBack}, [2]int64{3, 3}; got != want {
						t.Errorf("Stats().GivenBack of outer, inner %v, want %v", got, want)
					}
				})
			}
		}
	}
}
