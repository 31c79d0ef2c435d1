package middleware_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCountFailedFailuresRefillWhileSuccessesRun: a login limited to 5 a
// minute (a unit refills in 12 s) that counts failed logins only, whose
// handler takes 2 s. Four failures, then 30 successful logins one after
// the other (60 s), then five failures: the world in which the successes
// never counted holds 5 units by then (the four failures refilled at
// 56 s), so the five are answered 403, none 429. A bucket give-back
// gives back up to the success's cost of the deficit its decision
// reckons at its Take, less the 2 s of refill since: the success's unit
// is the last of that deficit, so it comes back whole and the failures'
// deficit goes on refilling under the successes, as if they had never
// come. (A rule that
// gave back only what the success's own unit had not refilled, 12 s less
// the 2 s, lost the 2 s of the failures' refill that each success ran
// through: while successes followed one another the failures never
// refilled, and the client was refused its second failure after a minute
// of successes.) Through chi and ServeMux, on the memory store and on
// Redis, for token_bucket and leaky_bucket.
func TestCountFailedFailuresRefillWhileSuccessesRun(t *testing.T) {
	for _, kind := range []algorithms.Kind{algorithms.TokenBucket, algorithms.LeakyBucket} {
		for _, name := range storetest.Names {
			for _, router := range []string{"chi", "ServeMux"} {
				t.Run(string(kind)+"/"+name+"/"+router, func(t *testing.T) {
					clock := algotest.NewClock(t0)
					store := storetest.New(t, name, clock)
					spec := algorithms.Spec{Algorithm: kind, Limit: 5, Window: time.Minute}
					m := middleware.MustNew(store, []*policy.Policy{
						policy.Must(policy.New("login", spec, user, policy.CountIf(policy.CountFailed))),
					}, middleware.WithClock(clock))
					login := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						clock.Advance(2 * time.Second) // the handler's time
						if r.Header.Get("X-Password") != "secret" {
							w.WriteHeader(http.StatusForbidden)
						}
					})
					var h http.Handler
					if router == "chi" {
						r := chi.NewRouter()
						r.Use(m.Handler)
						r.Post("/login", login)
						h = r
					} else {
						mux := http.NewServeMux()
						mux.Handle("POST /login", m.Handler(login))
						h = mux
					}
					try := func(password string) int {
						return serve(h, "POST", "/login", "X-User", "ann", "X-Password", password).Code
					}
					for i := range 4 {
						if code := try("wrong"); code != http.StatusForbidden {
							t.Fatalf("failure %d: %d, want 403", i+1, code)
						}
					}
					for i := range 30 {
						if code := try("secret"); code != http.StatusOK {
							t.Fatalf("success %d: %d, want 200", i+1, code)
						}
					}
					var codes []int
					for range 5 {
						codes = append(codes, try("wrong"))
					}
					for i, code := range codes {
						if code != http.StatusForbidden {
							t.Fatalf("after 60 s of successes, failures answered %v, want five 403 (failure %d was refused: the four failures 56 s and more ago had not refilled)", codes, i+1)
						}
					}
				})
			}
		}
	}
}
