package adaptive_test

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

// A level lowered until it denies every request climbs back while the
// service stays healthy: fed by the middleware, the Controller hears of
// the requests it denies too, and the first one after each minute judges
// it, as a ticker's Evaluate would have. Here every client shares one key
// of 100 an hour, used up to the lowered 80; a fake clock stands in for
// the minutes passing.
func ExampleController_Refused() {
	clock := algotest.NewClock(time.Unix(0, 0))
	store, _ := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	defer store.Close()
	m := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.PerHour("api", 100, keyfunc.Global())),
	}, middleware.WithClock(clock))
	c, _ := adaptive.New(m, adaptive.Config{Baseline: 20 * time.Millisecond, Clock: clock})
	m.SetFeedback(c) // the requests it passes on, and those it refuses

	failing := true
	handler := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing {
			clock.Advance(100 * time.Millisecond) // slow
			w.WriteHeader(http.StatusBadGateway)  // and failing
		}
	}))
	serve := func(n int) (admitted int) {
		for range n {
			w := httptest.NewRecorder()
			handler.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
			if w.Code != http.StatusTooManyRequests {
				admitted++
			}
		}
		return admitted
	}

	serve(20) // a slow and failing first minute
	failing = false
	for minute := 1; minute <= 4; minute++ {
		clock.Set(time.Unix(int64(minute)*60, 0))
		admitted := serve(100)
		fmt.Printf("minute %d: %d of 100 admitted, level %v\n", minute, admitted, c.Level())
	}
	// Output:
	// minute 1: 60 of 100 admitted, level 0.8
	// minute 2: 10 of 100 admitted, level 0.9
	// minute 3: 10 of 100 admitted, level 1
	// minute 4: 0 of 100 admitted, level 1
}
