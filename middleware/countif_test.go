package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCountFailedOnSystemClock gives back successful logins on the system
// clock, where the middleware's reckoning of the Take (waited read from
// before the Take to before the give-back) is off from the store's by the
// calls' latencies: the Take's log instant, window and bucket are still
// found, for every kind whose window no test run straddles (fixed_window
// is left out: a run across its boundary would start afresh), and the
// failures are still limited. (With a give-back that took the newest log
// instant at or before the reckoning, one that reckoned early by the Take's
// latency missed its own instant: a success stayed counted, and in a run
// the fifth failure was refused.)
func TestCountFailedOnSystemClock(t *testing.T) {
	for _, spec := range []algorithms.Spec{
		{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Hour},
		{Algorithm: algorithms.SlidingWindow, Limit: 5, Window: time.Hour},
		{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: time.Hour, Buckets: 60},
		{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Hour},
		{Algorithm: algorithms.LeakyBucket, Limit: 5, Window: time.Hour},
	} {
		t.Run(string(spec.Algorithm), func(t *testing.T) {
			store, err := algorithms.NewMemoryStore()
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			user := keyfunc.Must(keyfunc.Header("X-User"))
			m := middleware.MustNew(store, []*policy.Policy{
				policy.Must(policy.New("login", spec, user, policy.CountIf(policy.CountFailed))),
			})
			mux := http.NewServeMux()
			mux.Handle("POST /login", m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("X-Password") != "secret" {
					w.WriteHeader(http.StatusForbidden)
				}
			})))
			try := func(password string) int {
				r := httptest.NewRequest("POST", "/login", nil)
				r.Header.Set("X-User", "ann")
				r.Header.Set("X-Password", password)
				w := httptest.NewRecorder()
				mux.ServeHTTP(w, r)
				return w.Code
			}
			for i := range 20 {
				if code := try("secret"); code != http.StatusOK {
					t.Fatalf("success %d: %d, want 200", i, code)
				}
			}
			for i := range 5 {
				if code := try("wrong"); code != http.StatusForbidden {
					t.Fatalf("failure %d: %d, want 403", i, code)
				}
			}
			if code := try("secret"); code != http.StatusTooManyRequests {
				t.Errorf("after five failures: %d, want 429", code)
			}
			if got := m.Stats().GivenBack; got != 20 {
				t.Errorf("GivenBack = %d, want 20", got)
			}
		})
	}
}
