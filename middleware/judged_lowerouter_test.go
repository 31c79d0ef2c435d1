package middleware_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNestedOuterJudgedLowerReported: one policy (100 a minute, fixed
// window) given to two nested middlewares, each lowered by SetLimit: the
// one further out (enforcing, or in shadow mode) to 45, the one further in
// to 50. Both are guarded by the 100, which the one further out counts the
// request under (judged at 45), so the one further in leaves that guard
// out; but the state still holds the client at 50 there: a client that
// used 40 has 9 left at 50 after one more request, not the 49 of the
// fresh counters of the 50. The member further in reports r=9 (then 8,
// and so on), and the 100's state, judged at 50, refuses the 11th when the
// one further out is in shadow mode (which refuses from the 6th, at its
// 45, counting nothing). Where the one further out enforces its 45, the
// lower limit, its member (r=4, then 3, and so on) is the more
// constraining, and stands for p in place of the one further in (a name
// has one member); in shadow mode it enforces nothing, and the member
// further in, which holds the 100's state as it is in force, replaces
// it. Either way the response reports p once. Through chi and a
// ServeMux, on the memory store and on Redis.
func TestNestedOuterJudgedLowerReported(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Minute}
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, name := range storetest.Names {
		for _, shadow := range []bool{false, true} {
			for _, mux := range []string{"chi", "ServeMux"} {
				mode := "enforcing"
				if shadow {
					mode = "shadow"
				}
				t.Run(name+"/"+mode+"/"+mux, func(t *testing.T) {
					clock := algotest.NewClock(t0.Add(10 * time.Second))
					store := storetest.New(t, name, clock)
					opts := []middleware.Option{middleware.WithClock(clock), quiet}
					if shadow {
						opts = append(opts, middleware.WithShadow(nil))
					}
					outer := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("p", spec, constKey))}, opts...)
					inner := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("p", spec, constKey))}, middleware.WithClock(clock), quiet)
					h := nestedRouter(mux, outer, inner)
					if got := admittedOf(h, 40); got != 40 {
						t.Fatalf("at 100: %d of 40 admitted", got)
					}
					setLimit(t, outer, "p", 45)
					setLimit(t, inner, "p", 50)
					n := 5 // the one further out refuses the 6th
					if shadow {
						n = 10
					}
					for i := range n {
						w := serve(h, "GET", "/")
						rl := w.Header().Values("RateLimit")
						// In shadow mode, the member further in replaces
						// the one further out: from the 6th, which it
						// denies (counting nothing), the request is
						// decided here alone; before, the decision here
						// holds its state as it is in force. Enforcing,
						// the member further out, at 45, stands.
						want, which := `"p";r=`+strconv.Itoa(4-i)+";t=50", "out"
						if shadow {
							want, which = `"p";r=`+strconv.Itoa(9-i)+";t=50", "in"
						}
						if w.Code != http.StatusOK || len(rl) != 1 || rl[0] != want {
							t.Fatalf("request %d at 50: %d, RateLimit %q; want 200 and the member further %s alone, %s", i+1, w.Code, strings.Join(rl, ", "), which, want)
						}
					}
					w := serve(h, "GET", "/")
					if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "50" {
						t.Errorf("request %d: %d, Retry-After %q; want 429, 50", n+1, w.Code, w.Header().Get("Retry-After"))
					}
				})
			}
		}
	}
}
