package algorithms_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// A login policy counts failed attempts: five per quarter of an hour. Once
// the user signs in, the application resets the count, and the next
// failure finds the whole allowance again. Another user's count is kept.
func ExampleLimiter_Reset() {
	ctx := context.Background()
	store, _ := algorithms.NewMemoryStore()
	failures, _ := algorithms.NewLimiter(store, algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 5, Window: 15 * time.Minute})
	for range 5 {
		failures.Allow(ctx, "alice")
	}
	failures.Allow(ctx, "bob")
	d, _ := failures.Allow(ctx, "alice")
	fmt.Println("alice's sixth failure allowed:", d.Allowed)

	// alice signs in.
	if err := failures.Reset(ctx, "alice"); err != nil {
		fmt.Println(err)
		return
	}
	d, _ = failures.Allow(ctx, "alice")
	fmt.Println("after the reset:", d.Allowed, d.Remaining, "left")
	d, _ = failures.Allow(ctx, "bob")
	fmt.Println("bob:", d.Remaining, "left")

	// A store that cannot forget keys says so.
	other, _ := algorithms.NewLimiter(onlyTake{store}, failures.Spec())
	err := other.Reset(ctx, "alice")
	fmt.Println(errors.Is(err, errors.ErrUnsupported))
	// Output:
	// alice's sixth failure allowed: false
	// after the reset: true 4 left
	// bob: 3 left
	// true
}

// onlyTake is a Store with Take alone.
type onlyTake struct{ s algorithms.Store }

func (o onlyTake) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	return o.s.Take(ctx, checks...)
}
