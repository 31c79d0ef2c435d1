package middleware_test

import (
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// guardRemR matches the remaining quota of a RateLimit field.
var guardRemR = regexp.MustCompile(`;r=(\d+)`)

// TestReloadGuardHeadersTruthful: while a reload's guard stands, the
// headers a client reads are the stricter of the two Specs and true: the
// r of a response is how many more requests are admitted at once, and a
// retry exactly Retry-After after a 429 is admitted, if nothing else
// arrived. A token_bucket whose burst a reload lowers, and a fixed_window
// whose window it lengthens, each emptied before the reload, also while
// held below its limit by SetLimit (three checks a request); through chi
// and a ServeMux, on the memory store and on Redis.
func TestReloadGuardHeadersTruthful(t *testing.T) {
	cases := []struct {
		name     string
		from, to algorithms.Spec
		lower    int64 // set by SetLimit before the client's requests, if not 0
	}{
		{"token_bucket burst lowered",
			algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 20, Window: time.Minute},
			algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 20, Window: time.Minute, Burst: 10}, 0},
		{"fixed_window window lengthened",
			algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute},
			algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}, 0},
		{"fixed_window limit lowered",
			algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute},
			algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Minute}, 0},
		{"sliding_buckets finer",
			algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 10, Window: time.Minute, Buckets: 2},
			algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 10, Window: time.Minute, Buckets: 6}, 0},
		{"leaky_bucket window lengthened",
			algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 10, Window: time.Minute},
			algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 10, Window: 2 * time.Minute}, 0},
		{"token_bucket burst lowered, held at 10 by SetLimit",
			algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 20, Window: time.Minute},
			algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 20, Window: time.Minute, Burst: 10}, 10},
		{"fixed_window window lengthened, held at 8 by SetLimit",
			algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute},
			algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}, 8},
	}
	for _, name := range storetest.Names {
		for _, tc := range cases {
			for _, router := range []string{"chi", "mux"} {
				t.Run(fmt.Sprintf("%s/%s/%s", name, tc.name, router), func(t *testing.T) {
					clock := algotest.NewClock(t0)
					store := storetest.New(t, name, clock)
					m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("p", tc.from, remote))}, middleware.WithClock(clock))
					h := routed(router, m)
					use := tc.from.Capacity()
					if tc.lower != 0 {
						if err := m.SetLimit("p", tc.lower); err != nil {
							t.Fatal(err)
						}
						use = tc.lower
					}
					clock.Advance(25 * time.Second)
					for range use {
						if w := serve(h, "GET", "/"); w.Code != http.StatusOK {
							t.Fatalf("under %v: %d", tc.from, w.Code)
						}
					}
					if err := m.SetPolicies([]*policy.Policy{policy.Must(policy.New("p", tc.to, remote))}); err != nil {
						t.Fatal(err)
					}
					if _, ok := guardOf(m); !ok {
						t.Fatalf("reloaded as %v: no guard", tc.to)
					}
					// Emptied before the reload: refused at once, as the
					// replaced Spec, or the lowered one in force, refuses
					// it (TestReloadTightenedWhileLowered). (Not a window
					// kind lowered by SetLimit whose window the reload
					// lengthens: its replaced Spec is judged at its own
					// limit; see SetPolicies.)
					if w := serve(h, "GET", "/"); (tc.lower == 0 || !tc.from.Algorithm.Windowed()) && w.Code != http.StatusTooManyRequests {
						t.Fatalf("at the reload to %v: %d (RateLimit %q), want 429: the replaced %v is empty",
							tc.to, w.Code, w.Header().Get("RateLimit"), tc.from)
					}
					// A client that believes the headers: it sends r more
					// at once, then, refused, waits Retry-After.
					var since time.Duration
					for step := 0; step < 12 && since < 3*time.Minute; step++ {
						w := serve(h, "GET", "/")
						switch w.Code {
						case http.StatusTooManyRequests:
							ra := w.Header().Get("Retry-After")
							f, err := strconv.ParseFloat(ra, 64)
							if err != nil || f <= 0 {
								t.Fatalf("%s after the reload: 429 with Retry-After %q", since, ra)
							}
							d := time.Duration(math.Ceil(f * 1e9))
							if d > time.Second {
								// Not a wait too long either: just before it,
								// still refused.
								clock.Advance(d - time.Second)
								if w := serve(h, "GET", "/"); w.Code != http.StatusTooManyRequests {
									t.Fatalf("%s after the reload: admitted %s before the Retry-After %q", since+d-time.Second, time.Second, ra)
								}
								clock.Advance(time.Second)
							} else {
								clock.Advance(d)
							}
							since += d
							if w := serve(h, "GET", "/"); w.Code != http.StatusOK {
								t.Fatalf("%s after the reload: the retry after Retry-After %q answered %d (RateLimit %q)",
									since, ra, w.Code, w.Header().Get("RateLimit"))
							} else {
								w0 := w
								r := remainingOf(t, w0)
								for i := range r {
									if w := serve(h, "GET", "/"); w.Code != http.StatusOK {
										t.Fatalf("%s after the reload: r=%d reported (RateLimit %q), request %d of them answered %d (RateLimit %q)",
											since, r, w0.Header().Get("RateLimit"), i+1, w.Code, w.Header().Get("RateLimit"))
									}
								}
							}
						case http.StatusOK:
							r := remainingOf(t, w)
							for i := range r {
								if w2 := serve(h, "GET", "/"); w2.Code != http.StatusOK {
									t.Fatalf("%s after the reload: r=%d reported (RateLimit %q), request %d of them answered %d",
										since, r, w.Header().Get("RateLimit"), i+1, w2.Code)
								}
							}
						default:
							t.Fatalf("status %d", w.Code)
						}
					}
				})
			}
		}
	}
}

// remainingOf returns the r of w's RateLimit field.
func remainingOf(t *testing.T, w interface{ Header() http.Header }) int {
	t.Helper()
	rl := w.Header().Get("RateLimit")
	mm := guardRemR.FindStringSubmatch(rl)
	if mm == nil {
		t.Fatalf("no r in RateLimit %q", rl)
	}
	n, _ := strconv.Atoi(mm[1])
	return n
}
