package algorithms_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// noDecision is a Store that answers a Take with no decision.
type noDecision struct{ algorithms.Store }

func (noDecision) Take(context.Context, ...algorithms.Check) ([]algorithms.Decision, error) {
	return nil, nil
}

// TestLimiterEdges: AllowN(0) is a *CostError for cost 0; a store other
// than the memory store decides through Take, and one that answers no
// decision is an error; a cost of exactly the capacity is taken by
// RefundN and GiveBackN; their store's errors are theirs.
func TestLimiterEdges(t *testing.T) {
	ctx := context.Background()
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(newManualClock(time.Unix(1_700_000_000, 0))))
	if err != nil {
		t.Fatal(err)
	}
	spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 2, Window: time.Second, MaxDelay: time.Second}
	l, err := algorithms.NewLimiter(plainStore{mem}, spec)
	if err != nil {
		t.Fatal(err)
	}
	var ce *algorithms.CostError
	if _, err := l.AllowN(ctx, "k", 0); !errors.As(err, &ce) || ce.Cost != 0 {
		t.Errorf("AllowN(0) = %v, want a *CostError of cost 0", err)
	}
	if d, err := l.AllowN(ctx, "k", 1); err != nil || !d.Allowed {
		t.Errorf("AllowN(1) through a plain store = %+v, %v; want admitted", d, err)
	}
	none, err := algorithms.NewLimiter(noDecision{mem}, spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := none.AllowN(ctx, "k", 1); err == nil || err.Error() != "algorithms: store returned no decision" {
		t.Errorf("AllowN through a store answering nothing: %v, want \"algorithms: store returned no decision\"", err)
	}

	full, err := algorithms.NewLimiter(mem, spec)
	if err != nil {
		t.Fatal(err)
	}
	c := spec.Capacity()
	if _, err := full.RefundN(ctx, "k", c, 0); err != nil {
		t.Errorf("RefundN(capacity %d) = %v, want it taken", c, err)
	}
	if _, err := full.GiveBackN(ctx, "k", c, algorithms.Decision{Allowed: true}, 0); err != nil {
		t.Errorf("GiveBackN(capacity %d) = %v, want it taken", c, err)
	}
	mem.Close()
	if _, err := full.RefundN(ctx, "k", 1, 0); !errors.Is(err, algorithms.ErrClosed) {
		t.Errorf("RefundN on a closed store = %v, want ErrClosed", err)
	}
	if _, err := full.GiveBackN(ctx, "k", 1, algorithms.Decision{Allowed: true}, 0); !errors.Is(err, algorithms.ErrClosed) {
		t.Errorf("GiveBackN on a closed store = %v, want ErrClosed", err)
	}
}
