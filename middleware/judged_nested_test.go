package middleware_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNestedLoweredCopyJudgesOuterCount: one policy (100 a minute, of
// each window kind) given to two nested middlewares: the one further out
// (enforcing, or in shadow mode) at its configured 100, the one further
// in lowered to 50 (SetLimit, or a reload at 50), guarded by the 100. The
// one further out counts each request under the 100, so the one further
// in leaves its guard out (counted once), but judges that state at its 50
// all the same, from the decision further out: a client that used 40
// before the change gets 10 more, not 50 (its own 50's fresh counters).
// The 11th, counted under the 100 further out, is refused further in by
// the guard checked there (the state past 50: a denied Take counts
// nothing): its member r=0 and Retry-After are the wait until the 100's
// state, holding 51, has room for one below 50 (fixed_window: the
// minute's end, 50 s; sliding_window: the next minute, where the 51 weigh
// 51·(60−e)/60, at most 49 from e = 60·2/51 s: 52.35 s; sliding_log: 60 s
// and a nanosecond; sliding_buckets (six of 10 s): 60 s). Each admitted
// response's member further in reports the 100's state at 50: 9, then 8,
// down to 0. The response reports p once, as the one further in decided
// it: the member further out, the same state at its 100 (49 left on the
// 429), is not the limit in force, and its member goes, in
// RateLimit-Policy too. Through chi and a ServeMux.
func TestNestedLoweredCopyJudgesOuterCount(t *testing.T) {
	kinds := []struct {
		spec algorithms.Spec
		t    string
	}{
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Minute}, "50"},
		{algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 100, Window: time.Minute}, "53"},
		{algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 100, Window: time.Minute}, "61"},
		{algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 100, Window: time.Minute, Buckets: 6}, "60"},
	}
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, k := range kinds {
		for _, shadow := range []bool{false, true} {
			for _, how := range []string{"SetLimit", "reload"} {
				for _, mux := range []string{"chi", "ServeMux"} {
					mode := "enforcing"
					if shadow {
						mode = "shadow"
					}
					t.Run(string(k.spec.Algorithm)+"/"+mode+"/"+how+"/"+mux, func(t *testing.T) {
						store, clock := newStore(t)
						clock.Advance(10 * time.Second)
						pol := func(limit int64) *policy.Policy {
							return policy.Must(policy.New("p", at(k.spec, limit), constKey))
						}
						opts := []middleware.Option{middleware.WithClock(clock), quiet}
						if shadow {
							opts = append(opts, middleware.WithShadow(nil))
						}
						outer := middleware.MustNew(store, []*policy.Policy{pol(100)}, opts...)
						inner := middleware.MustNew(store, []*policy.Policy{pol(100)}, middleware.WithClock(clock), quiet)
						h := nestedRouter(mux, outer, inner)
						if got := admittedOf(h, 40); got != 40 {
							t.Fatalf("at 100: %d of 40 admitted", got)
						}
						switch how {
						case "SetLimit":
							setLimit(t, inner, "p", 50)
						case "reload":
							if err := inner.SetPolicies([]*policy.Policy{pol(50)}); err != nil {
								t.Fatal(err)
							}
						}
						const pols = `"p";q=50;w=60`
						for i := range 10 {
							w := serve(h, "GET", "/")
							rl := strings.Join(w.Header().Values("RateLimit"), ", ")
							inner := `"p";r=` + strconv.Itoa(9-i) + ";t="
							if w.Code != http.StatusOK || strings.Join(w.Header().Values("RateLimit-Policy"), ", ") != pols || !strings.HasPrefix(rl, inner) || strings.Contains(rl, ", ") {
								t.Fatalf("request %d at 50: %d, RateLimit-Policy %q, RateLimit %q; want 200, %q, the inner member %s… alone",
									i+1, w.Code, w.Header().Values("RateLimit-Policy"), rl, pols, inner)
							}
						}
						w := serve(h, "GET", "/")
						rl := strings.Join(w.Header().Values("RateLimit"), ", ")
						want := `"p";r=0;t=` + k.t
						if w.Code != http.StatusTooManyRequests || strings.Join(w.Header().Values("RateLimit-Policy"), ", ") != pols ||
							rl != want || w.Header().Get("Retry-After") != k.t {
							t.Errorf("request 11 at 50: %d, RateLimit-Policy %q, RateLimit %q, Retry-After %q; want 429, %q, %q, %q",
								w.Code, w.Header().Values("RateLimit-Policy"), rl, w.Header().Get("Retry-After"), pols, want, k.t)
						}
					})
				}
			}
		}
	}
}

// TestNestedOuterJudgedOwnSpecMerged: a policy of 4 a minute runs lowered
// to 2 by SetLimit further out (guarded by its 4, judged at 2), and
// further in reloaded from 10 to 4 (guarded by the 10, judged at 4): the
// one further out counts the request under the 4, the Spec of the copy
// further in, which decides it under its guard, the 10, alone, with the
// decision further out under the 4 merged in (see
// nested.Ops.DropOwn, MergeOwn), and lists the policy once. Further
// out enforcing, that decision is the 4's state judged at 2, the limit
// it holds the client to: the member reports it, q=2 with r=1, r=0,
// then its 429 (q=2), not the q=4 further in, which binds nothing there
// (it reported q=4 and the 2's r before the 429). In shadow mode
// it holds the client to nothing, and the 4's state is read at 4, the
// limit enforced further in: r=3, 2, 1, 0, then the 429 further in
// (q=4). Through chi and a ServeMux.
func TestNestedOuterJudgedOwnSpecMerged(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, shadow := range []bool{false, true} {
		for _, mux := range []string{"chi", "ServeMux"} {
			mode := "enforcing"
			want := []string{"200 q=2 r=1", "200 q=2 r=0", "429 q=2 r=0"}
			if shadow {
				mode = "shadow"
				want = []string{"200 q=4 r=3", "200 q=4 r=2", "200 q=4 r=1", "200 q=4 r=0", "429 q=4 r=0"}
			}
			t.Run(mode+"/"+mux, func(t *testing.T) {
				store, clock := newStore(t) // a minute's start
				opts := []middleware.Option{middleware.WithClock(clock), quiet}
				if shadow {
					opts = append(opts, middleware.WithShadow(nil))
				}
				outer := middleware.MustNew(store, []*policy.Policy{fixed("p", 4, time.Minute, constKey)}, opts...)
				setLimit(t, outer, "p", 2)
				inner := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, constKey)}, middleware.WithClock(clock), quiet)
				if err := inner.SetPolicies([]*policy.Policy{fixed("p", 4, time.Minute, constKey)}); err != nil {
					t.Fatal(err)
				}
				h := nestedRouter(mux, outer, inner)
				for i, wt := range want {
					var code int
					var q, r string
					if _, err := fmt.Sscanf(wt, "%d q=%s r=%s", &code, &q, &r); err != nil {
						t.Fatal(err)
					}
					w := serve(h, "GET", "/")
					pol, rl := strings.Join(w.Header().Values("RateLimit-Policy"), ", "), strings.Join(w.Header().Values("RateLimit"), ", ")
					wantRA := ""
					if code == http.StatusTooManyRequests {
						wantRA = "60"
					}
					if w.Code != code || pol != `"p";q=`+q+`;w=60` || rl != `"p";r=`+r+`;t=60` || w.Header().Get("Retry-After") != wantRA {
						t.Errorf("request %d: %d, RateLimit-Policy %q, RateLimit %q, Retry-After %q; want %d, q=%s, r=%s, %q",
							i+1, w.Code, pol, rl, w.Header().Get("Retry-After"), code, q, r, wantRA)
					}
				}
			})
		}
	}
}
