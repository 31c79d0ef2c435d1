package algorithms_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// takeOnly is a Store that is not a Peeker.
type takeOnly struct{ algorithms.Store }

// TestLimiterPeekUnsupported: Limiter.Peek on a store that is not a Peeker
// fails with an error wrapping errors.ErrUnsupported, and checks n as
// AllowN does.
func TestLimiterPeekUnsupported(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Second}
	l, err := algorithms.NewLimiter(takeOnly{newMemoryStore(t)}, spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Peek(t.Context(), "k", 1); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Peek on a store that is not a Peeker: %v, want errors.ErrUnsupported", err)
	}
	if _, err := l.Peek(t.Context(), "k", 0); !errors.Is(err, algorithms.ErrInvalidCost) {
		t.Fatalf("Peek(n=0): %v, want a *CostError", err)
	}
}

// TestLimiterPeek: Limiter.Peek reports what AllowN would, consumes
// nothing, and checks n as AllowN does.
func TestLimiterPeek(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := newMemoryStore(t, algorithms.WithClock(algorithms.ClockFunc(func() time.Time { return now })))
	spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: time.Second, MaxDelay: 250 * time.Millisecond}
	l, err := algorithms.NewLimiter(s, spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 4 {
		p, err := l.Peek(ctx, "k", 1)
		if err != nil {
			t.Fatal(err)
		}
		d, err := l.Allow(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		if p.Allowed != d.Allowed || p.Delay != d.Delay || (!d.Allowed && p != d) {
			t.Fatalf("request %d: Peek %+v, Allow %+v", i, p, d)
		}
	}
	if _, err := l.Peek(ctx, "k", spec.Capacity()+1); !errors.Is(err, algorithms.ErrInvalidCost) {
		t.Fatalf("Peek above the capacity: %v, want a *CostError", err)
	}
}

// TestMemoryPeekNoAlloc: a Peek of a held key of a fixed-size kind, of a
// sliding_log, or of a sliding_buckets whose ring the Peek's instant (its
// Take's) would not roll, does not allocate.
func TestMemoryPeekNoAlloc(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := newMemoryStore(t, algorithms.WithClock(algorithms.ClockFunc(func() time.Time { return now })))
	checks := []algorithms.Check{
		{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Second}, Key: "k"},
		{Spec: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Second}, Key: "k"},
		{Spec: algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Second}, Key: "k"},
		{Spec: algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: time.Second, Buckets: 5}, Key: "k"},
	}
	if _, err := s.Take(t.Context(), checks...); err != nil {
		t.Fatal(err)
	}
	dst := make([]algorithms.Decision, len(checks))
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		if err := s.Peek(ctx, dst, checks); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Peek of held keys: %v allocations, want 0", allocs)
	}
}
