package algorithms_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// The boundary burst of seed 000: 100 requests per minute, 100 requests at
// 0:59 and 100 more at 1:01. The fixed window admits all 200, the sliding
// log exactly 100, the sliding window counter 101.
func Example_boundaryBurst() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, kind := range []algorithms.Kind{algorithms.FixedWindow, algorithms.SlidingLog, algorithms.SlidingWindow} {
		now := start
		store, _ := algorithms.NewMemoryStore(algorithms.WithClock(algorithms.ClockFunc(func() time.Time { return now })))
		limiter, _ := algorithms.NewLimiter(store, algorithms.Spec{Algorithm: kind, Limit: 100, Window: time.Minute})
		admitted := 0
		for _, at := range []time.Duration{59 * time.Second, 61 * time.Second} {
			now = start.Add(at)
			for i := 0; i < 100; i++ {
				if d, _ := limiter.Allow(context.Background(), "203.0.113.7"); d.Allowed {
					admitted++
				}
			}
		}
		fmt.Printf("%-14s admits %d\n", kind, admitted)
	}
	// Output:
	// fixed_window   admits 200
	// sliding_log    admits 100
	// sliding_window admits 101
}

// A token bucket allows a burst up to its capacity, then one request per
// refill interval; RetryAfter says exactly when.
func ExampleLimiter() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store, _ := algorithms.NewMemoryStore(algorithms.WithClock(algorithms.ClockFunc(func() time.Time { return now })))
	limiter, err := algorithms.NewLimiter(store, algorithms.Spec{
		Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Second, Burst: 3,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := 0; i < 4; i++ {
		d, _ := limiter.Allow(context.Background(), "client-1")
		fmt.Printf("allowed=%v remaining=%d retry-after=%s\n", d.Allowed, d.Remaining, d.RetryAfter)
	}
	// Output:
	// allowed=true remaining=2 retry-after=0s
	// allowed=true remaining=1 retry-after=0s
	// allowed=true remaining=0 retry-after=0s
	// allowed=false remaining=0 retry-after=100ms
}

// Validation names the field and the rule.
func ExampleSpec_Validate() {
	err := algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: time.Second, Buckets: 7}.Validate()
	fmt.Println(err)
	// Output:
	// algorithms: invalid spec: Buckets 7 does not divide Window 1s (1000000000 ns) exactly
}

// A leaky_queue sends one request a second. Three arrive together: the
// first goes at once, the others are told to wait 1 s and 2 s. The third's
// client hangs up after 500 ms: its place, the queue's last, goes back, so
// the next arrival waits 1.5 s instead of 2.5 s. Refund reports the queue
// as it stands once the place is back: 9 more requests fit, and it is
// empty in 1.5 s.
func ExampleMemoryStore_Refund() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store, _ := algorithms.NewMemoryStore(algorithms.WithClock(algorithms.ClockFunc(func() time.Time { return now })))
	defer store.Close()
	ctx := context.Background()
	check := algorithms.Check{
		Spec: algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 10 * time.Second},
		Key:  "upstream",
	}
	var third []algorithms.Decision
	for i := 1; i <= 3; i++ {
		ds, _ := store.Take(ctx, check)
		fmt.Printf("request %d waits %v\n", i, ds[0].Delay)
		third = ds
	}
	now = now.Add(500 * time.Millisecond)
	var back [1]algorithms.Refunded
	if err := store.Refund(ctx, back[:], []algorithms.Check{check}, third, 500*time.Millisecond); err != nil {
		fmt.Println(err)
	}
	fmt.Printf("given back %v, remaining %d, empty in %v\n", back[0].Given, back[0].Remaining, back[0].ResetAfter)
	ds, _ := store.Take(ctx, check)
	fmt.Printf("after the third left, request 4 waits %v\n", ds[0].Delay)
	// Output:
	// request 1 waits 0s
	// request 2 waits 1s
	// request 3 waits 2s
	// given back true, remaining 9, empty in 1.5s
	// after the third left, request 4 waits 1.5s
}
