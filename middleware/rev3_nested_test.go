package middleware_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

var pMember = regexp.MustCompile(`"p";r=(\d+)`)

// TestNestedBothTightenedHeadersNeverClaimMore: one policy p (20 a
// minute) in an outer middleware and an inner one, each tightened (a
// reload, or SetLimit), the outer one further (10) than the inner one
// (15). The outer 10 is in force: after n requests no header may claim
// more than 10-n remaining for p, whichever member the inner middleware
// lets stand. Through chi and a ServeMux, IETF and Draft7.
func TestNestedBothTightenedHeadersNeverClaimMore(t *testing.T) {
	reload := func(limit int64) func(t *testing.T, m *middleware.Middleware) {
		return func(t *testing.T, m *middleware.Middleware) {
			t.Helper()
			if err := m.SetPolicies([]*policy.Policy{fixed("p", limit, time.Minute, remote)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	lower := func(limit int64) func(t *testing.T, m *middleware.Middleware) {
		return func(t *testing.T, m *middleware.Middleware) { setLimit(t, m, "p", limit) }
	}
	cases := []struct {
		name         string
		outer, inner func(t *testing.T, m *middleware.Middleware)
	}{
		{"outer SetLimit 10, inner reloaded 15", lower(10), reload(15)},
		{"outer reloaded 10, inner reloaded 15", reload(10), reload(15)},
		{"outer SetLimit 10, inner SetLimit 15", lower(10), lower(15)},
		{"outer reloaded 10, inner SetLimit 15", reload(10), lower(15)},
	}
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, name := range storetest.Names {
		for _, tc := range cases {
			for _, prof := range []middleware.Profile{middleware.IETF, middleware.Draft7} {
				for _, mux := range []string{"chi", "ServeMux"} {
					t.Run(fmt.Sprintf("%s/%s/%v/%s", name, tc.name, prof, mux), func(t *testing.T) {
						clock := algotest.NewClock(t0)
						store := storetest.New(t, name, clock)
						opts := []middleware.Option{middleware.WithClock(clock), middleware.WithHeaders(prof), quiet}
						p := fixed("p", 20, time.Minute, remote)
						outer := middleware.MustNew(store, []*policy.Policy{p}, opts...)
						inner := middleware.MustNew(store, []*policy.Policy{p}, opts...)
						h := nestedRouter(mux, outer, inner)
						if got := admittedOf(h, 3); got != 3 {
							t.Fatalf("before the change: %d of 3 admitted", got)
						}
						tc.outer(t, outer)
						tc.inner(t, inner)
						for n := 4; n <= 11; n++ {
							w := serve(h, "GET", "/")
							want := int64(10 - n)
							if n > 10 {
								if w.Code != http.StatusTooManyRequests {
									t.Errorf("request %d: %d, want 429", n, w.Code)
								}
								want = 0
							} else if w.Code != http.StatusOK {
								t.Errorf("request %d: %d, want 200 (%v)", n, w.Code, w.Header())
							}
							got := int64(-1)
							if prof == middleware.IETF {
								for _, v := range w.Header().Values("RateLimit") {
									for _, m := range pMember.FindAllStringSubmatch(v, -1) {
										r, _ := strconv.ParseInt(m[1], 10, 64)
										if got < 0 || r < got {
											got = r
										}
									}
								}
							} else {
								m := regexp.MustCompile(`remaining=(\d+)`).FindStringSubmatch(w.Header().Get("RateLimit"))
								if m != nil {
									got, _ = strconv.ParseInt(m[1], 10, 64)
								}
							}
							if got < 0 || got > want {
								t.Errorf("request %d (%d): lowest remaining of p %d, want at most %d (RateLimit %q, RateLimit-Policy %q)",
									n, w.Code, got, want, w.Header().Values("RateLimit"), w.Header().Values("RateLimit-Policy"))
							}
						}
					})
				}
			}
		}
	}
}

// TestNestedInnerTightenedOtherKeyKeepsOuterMember: the outer middleware
// keys p by client address, the inner one by X-User, and the inner copy
// is reloaded to 4. The outer p (20 a minute for the address, 18 used
// by user a) is another state than the inner one of user b: the inner
// member does not hold it and must not replace it, or the headers claim
// 3 left where the address has 1.
func TestNestedInnerTightenedOtherKeyKeepsOuterMember(t *testing.T) {
	user := keyfunc.Must(keyfunc.Header("X-User"))
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, name := range storetest.Names {
		for _, prof := range []middleware.Profile{middleware.IETF, middleware.Draft7} {
			for _, mux := range []string{"chi", "ServeMux"} {
				t.Run(fmt.Sprintf("%s/%v/%s", name, prof, mux), func(t *testing.T) {
					clock := algotest.NewClock(t0)
					store := storetest.New(t, name, clock)
					opts := []middleware.Option{middleware.WithClock(clock), middleware.WithHeaders(prof), quiet}
					outer := middleware.MustNew(store, []*policy.Policy{fixed("p", 20, time.Minute, remote)}, opts...)
					inner := middleware.MustNew(store, []*policy.Policy{fixed("p", 20, time.Minute, user)}, opts...)
					h := nestedRouter(mux, outer, inner)
					for i := range 18 {
						if w := serve(h, "GET", "/", "X-User", "a"); w.Code != http.StatusOK {
							t.Fatalf("request %d of user a: %d", i+1, w.Code)
						}
					}
					if err := inner.SetPolicies([]*policy.Policy{fixed("p", 4, time.Minute, user)}); err != nil {
						t.Fatal(err)
					}
					w := serve(h, "GET", "/", "X-User", "b")
					if w.Code != http.StatusOK {
						t.Fatalf("user b: %d", w.Code)
					}
					got := int64(-1)
					if prof == middleware.IETF {
						for _, v := range w.Header().Values("RateLimit") {
							for _, m := range pMember.FindAllStringSubmatch(v, -1) {
								r, _ := strconv.ParseInt(m[1], 10, 64)
								if got < 0 || r < got {
									got = r
								}
							}
						}
					} else if m := regexp.MustCompile(`remaining=(\d+)`).FindStringSubmatch(w.Header().Get("RateLimit")); m != nil {
						got, _ = strconv.ParseInt(m[1], 10, 64)
					}
					if got < 0 || got > 1 {
						t.Errorf("user b: lowest remaining of p %d, want at most 1 (RateLimit %q, RateLimit-Policy %q)",
							got, w.Header().Values("RateLimit"), w.Header().Values("RateLimit-Policy"))
					}
				})
			}
		}
	}
}
