package algorithms_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// Peek tells a client's standing without spending any of it: a status
// endpoint reports what the next request would get.
func ExampleLimiter_Peek() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store, _ := algorithms.NewMemoryStore(algorithms.WithClock(algorithms.ClockFunc(func() time.Time { return now })))
	limiter, _ := algorithms.NewLimiter(store, algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Minute})
	ctx := context.Background()
	for range 3 {
		p, _ := limiter.Peek(ctx, "client-1", 1)
		d, _ := limiter.Allow(ctx, "client-1")
		fmt.Printf("peek: allowed=%v remaining=%d; allow: allowed=%v remaining=%d retry-after=%s\n",
			p.Allowed, p.Remaining, d.Allowed, d.Remaining, d.RetryAfter)
	}
	fmt.Println("keys held:", store.Len())
	// Output:
	// peek: allowed=true remaining=2; allow: allowed=true remaining=1 retry-after=0s
	// peek: allowed=true remaining=1; allow: allowed=true remaining=0 retry-after=0s
	// peek: allowed=false remaining=0; allow: allowed=false remaining=0 retry-after=1m0s
	// keys held: 1
}
