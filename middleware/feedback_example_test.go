package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// A handler in front of the middleware that refuses requests itself, here
// an authentication middleware answering 401 to those without a token,
// tells the Feedback of each as the middleware tells it of those it
// refuses: it calls the Refused method of the adaptive.Controller. The
// service failed in the first minute; since then only requests without a
// token came, none reaching the middleware. Told of them, the Controller
// judges each minute as it ends, as a ticker's Evaluate would: it lowers
// its level for the failing minute, and raises it back for the healthy
// ones. Without the call it would judge nothing (its level left at 1,
// the failing minute unjudged) until a request reached the middleware,
// which it would then decide at that stale level. A fake clock stands in
// for the minutes passing.
func ExampleMiddleware_SetFeedback_refusedInFront() {
	clock := algotest.NewClock(time.Unix(0, 0))
	store, _ := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	defer store.Close()
	m := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.PerHour("api", 100, keyfunc.Global())),
	}, middleware.WithClock(clock))
	ctrl, _ := adaptive.New(m, adaptive.Config{Baseline: 20 * time.Millisecond, Clock: clock})
	m.SetFeedback(ctrl)

	authenticate := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") == "" {
				ctrl.Refused() // refused before the middleware, which cannot tell it
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	failing := true
	handler := authenticate(m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing {
			clock.Advance(100 * time.Millisecond) // slow
			w.WriteHeader(http.StatusBadGateway)  // and failing
		}
	})))
	serve := func(token string) int {
		r := httptest.NewRequest("GET", "/", nil)
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, r)
		return w.Code
	}

	for range 20 {
		serve("secret") // a slow and failing first minute
	}
	failing = false
	for minute := 1; minute <= 3; minute++ {
		clock.Set(time.Unix(int64(minute)*60, 0))
		status := serve("") // no token
		fmt.Printf("minute %d: %d, level %v\n", minute, status, ctrl.Level())
	}
	// Output:
	// minute 1: 401, level 0.8
	// minute 2: 401, level 0.9
	// minute 3: 401, level 1
}
