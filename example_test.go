package ratekeeper_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// The in-memory store decides directly, as the package doc shows: a sliding window of
// 100 a minute admits 100 requests at once, and tells the 101st when the
// same request would be admitted. The clock is frozen 20 s into a minute:
// the 100 weigh on the next minute in proportion to what is left of it, so
// the 101st fits once 0.6 s of the next minute has passed, 40.6 s on.
func Example() {
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0)) // 22:13:20 UTC
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		panic(err)
	}
	defer store.Close()
	spec := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 100, Window: time.Minute}
	ctx := context.Background()
	admitted := 0
	var d algorithms.Decision
	for range 101 {
		d, err = store.TakeOne(ctx, algorithms.Check{Spec: spec, Key: "203.0.113.7"})
		if err != nil {
			panic(err)
		}
		if d.Allowed {
			admitted++
		}
	}
	fmt.Println("admitted:", admitted)
	fmt.Println("101st allowed:", d.Allowed, "retry after:", d.RetryAfter)
	clock.Advance(d.RetryAfter)
	d, _ = store.TakeOne(ctx, algorithms.Check{Spec: spec, Key: "203.0.113.7"})
	fmt.Println("after the wait:", d.Allowed)
	// Output:
	// admitted: 100
	// 101st allowed: false retry after: 40.6s
	// after the wait: true
}

// Example_middleware wraps a ServeMux: 2 requests a minute per client IP
// (a sliding window counter, PerMinute's default), 20 s into a minute. The
// first request weighs on the window until the end of the next minute,
// 100 s on; with both spent, one fits again once they weigh 1 between
// them, 30 s into the next minute, 70 s on: the third is answered 429
// with Retry-After 70.
func Example_middleware() {
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		panic(err)
	}
	defer store.Close()
	ip := keyfunc.Must(keyfunc.IP())
	limit := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.PerMinute("per-minute", 2, ip)),
	}, middleware.WithClock(clock))

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hello") })
	h := limit.Handler(mux)
	for range 3 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		fmt.Printf("%d RateLimit: %s Retry-After: %q\n", w.Code, w.Header().Get("RateLimit"), w.Header().Get("Retry-After"))
	}
	// Output:
	// 200 RateLimit: "per-minute";r=1;t=100 Retry-After: ""
	// 200 RateLimit: "per-minute";r=0;t=70 Retry-After: ""
	// 429 RateLimit: "per-minute";r=0;t=70 Retry-After: "70"
}
