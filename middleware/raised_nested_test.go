package middleware_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
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

// TestSharedPolicyOuterRaisedHeaders: as TestSharedPolicyOuterRaised, a
// policy of 5 a minute given to two nested middlewares, the one further
// out raising it to 8 (SetLimit, or a reload), the one further in
// enforcing it at 5. The response reports the policy once, and as it is
// in force for the request: at the 5 the one further in holds the
// client to, with r = 5 - used (the one further out counts every
// request it admits, up to its 8), not the 8 further out (q=8,
// r = 8 - used) while the one further in is under its limit, nor both
// members once it refuses (requests 6 to 8, which the one further out
// counts). The single-valued profiles report it so too (Legacy here).
// With the one further out in shadow mode, the one further in is the
// only limit in force: the same headers. Through chi and a ServeMux, on
// the memory store and on Redis, on an injected clock 10 s into a
// minute (t=50).
func TestSharedPolicyOuterRaisedHeaders(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, name := range storetest.Names {
		for _, how := range []string{"SetLimit", "reload"} {
			for _, shadow := range []bool{false, true} {
				for _, prof := range []middleware.Profile{middleware.IETF, middleware.Legacy} {
					for _, mux := range []string{"chi", "ServeMux"} {
						t.Run(fmt.Sprintf("%s/%s/outer-shadow=%v/%v/%s", name, how, shadow, prof, mux), func(t *testing.T) {
							clock := algotest.NewClock(t0.Add(10 * time.Second))
							store := storetest.New(t, name, clock)
							oo := []middleware.Option{middleware.WithClock(clock), quiet, middleware.WithHeaders(prof)}
							if shadow {
								oo = append(oo, middleware.WithShadow(nil))
							}
							outer := middleware.MustNew(store, []*policy.Policy{fixed("p", 5, time.Minute, constKey)}, oo...)
							inner := middleware.MustNew(store, []*policy.Policy{fixed("p", 5, time.Minute, constKey)},
								middleware.WithClock(clock), quiet, middleware.WithHeaders(prof))
							if how == "SetLimit" {
								setLimit(t, outer, "p", 8)
							} else if err := outer.SetPolicies([]*policy.Policy{fixed("p", 8, time.Minute, constKey)}); err != nil {
								t.Fatal(err)
							}
							h := nestedRouter(mux, outer, inner)
							// The one further out counts up to its 8, the
							// requests the one further in refuses too.
							const limit, raised = 5, 8
							for used := 1; used <= raised; used++ {
								w := serve(h, "GET", "/")
								code, left := http.StatusOK, limit-used
								if left < 0 {
									code, left = http.StatusTooManyRequests, 0
								}
								if w.Code != code {
									t.Errorf("request %d: %d, want %d", used, w.Code, code)
								}
								if code == http.StatusTooManyRequests && w.Header().Get("Retry-After") != "50" {
									t.Errorf("request %d: Retry-After %q, want 50", used, w.Header().Get("Retry-After"))
								}
								want := map[string][]string{
									"RateLimit-Policy": {`"p";q=5;w=60`},
									"RateLimit":        {`"p";r=` + strconv.Itoa(left) + `;t=50`},
								}
								if prof == middleware.Legacy {
									want = map[string][]string{
										"X-RateLimit-Limit":     {"5"},
										"X-RateLimit-Remaining": {strconv.Itoa(left)},
										"X-RateLimit-Reset":     {"50"},
									}
								}
								for k, v := range want {
									if got := w.Header().Values(k); !slices.Equal(got, v) {
										t.Errorf("request %d: %s %q, want %q", used, k, got, v)
									}
								}
							}
						})
					}
				}
			}
		}
	}
}
