package middleware_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestSharedPolicyOuterRaised: a policy given to two nested middlewares
// (5 a minute), whose limit one of them raises to 8 (SetLimit above the
// configured limit, or a reload within its guard's time), is judged
// there on the 5's counters at 8: the other one, which counts under the
// 5's, must still hold a client at 5, counting what the one further out
// counted. Its Spec is a guard of the raised copy further out, which
// the one further in took for the same policy and left out: 8 of 10
// passed both (5 before the raise was judged on the 5's counters). The
// one raised further in is held to 5 by the one further out, unless
// that one is in shadow mode. Through chi and a ServeMux, on an
// injected clock.
func TestSharedPolicyOuterRaised(t *testing.T) {
	for _, raised := range []string{"outer", "inner"} {
		for _, how := range []string{"SetLimit", "reload"} {
			for _, shadow := range []bool{false, true} {
				for _, mux := range []string{"chi", "ServeMux"} {
					t.Run(fmt.Sprintf("%s/%s/shadow=%v/%s", raised, how, shadow, mux), func(t *testing.T) {
						store, clock := newStore(t)
						quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
						oo := []middleware.Option{middleware.WithClock(clock), quiet}
						if shadow {
							oo = append(oo, middleware.WithShadow(nil))
						}
						outer := middleware.MustNew(store, []*policy.Policy{fixed("p", 5, time.Minute, constKey)}, oo...)
						inner := middleware.MustNew(store, []*policy.Policy{fixed("p", 5, time.Minute, constKey)}, middleware.WithClock(clock), quiet)
						clock.Advance(time.Second)
						m := outer
						if raised == "inner" {
							m = inner
						}
						if how == "SetLimit" {
							if err := m.SetLimit("p", 8); err != nil {
								t.Fatal(err)
							}
						} else if err := m.SetPolicies([]*policy.Policy{fixed("p", 8, time.Minute, constKey)}); err != nil {
							t.Fatal(err)
						}
						want := 5
						if shadow && raised == "inner" {
							want = 8
						}
						if got := admittedOf(nestedRouter(mux, outer, inner), 10); got != want {
							t.Errorf("%s raised to 8 by %s: %d of 10 admitted in a minute, want %d", raised, how, got, want)
						}
					})
				}
			}
		}
	}
}
