package algorithms_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// plainStore is a Store that is neither a Refunder nor a GiveBacker.
type plainStore struct{ algorithms.Store }

// TestLimiterRefundNGiveBackNCheckCost: RefundN and GiveBackN check n as
// AllowN does, whatever the Spec's kind and whether or not the store can
// give anything back: a negative n, or one above the capacity, is a
// *CostError, not a silent no-op.
func TestLimiterRefundNGiveBackNCheckCost(t *testing.T) {
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(newManualClock(time.Unix(1_700_000_000, 0))))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	ctx := context.Background()
	specs := []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Minute},
		{Algorithm: algorithms.TokenBucket, Limit: 2, Window: time.Minute},
		{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: time.Second},
	}
	for _, store := range []algorithms.Store{mem, plainStore{mem}} {
		for _, spec := range specs {
			l, err := algorithms.NewLimiter(store, spec)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int64{-1, spec.Capacity() + 1} {
				var ce *algorithms.CostError
				if _, err := l.AllowN(ctx, "k", n); !errors.As(err, &ce) {
					t.Fatalf("%T %s: AllowN(%d) = %v, want a *CostError", store, spec, n, err)
				}
				if _, err := l.RefundN(ctx, "k", n, 0); !errors.As(err, &ce) {
					t.Errorf("%T %s: RefundN(%d) = %v, want a *CostError as AllowN(%d)", store, spec, n, err, n)
				}
				if _, err := l.GiveBackN(ctx, "k", n, algorithms.Decision{Allowed: true}, 0); !errors.As(err, &ce) {
					t.Errorf("%T %s: GiveBackN(%d) = %v, want a *CostError as AllowN(%d)", store, spec, n, err, n)
				}
			}
		}
	}
}
