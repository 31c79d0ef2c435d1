package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestBucketClockYearsBackAtTheHighestRate: a bucket at the highest rates
// the bounds allow (10^9 per millisecond), decided at an instant years
// before its state (a host clock reset to an old date), has a deficit
// whose count of units, D·L/W, passes 2^64. The decision must still be a
// denial with exact durations, from TakeOne, Take and the Limiter, not a
// panic in the 128-by-64-bit division.
func TestBucketClockYearsBackAtTheHighestRate(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, spec := range []algorithms.Spec{
		{Algorithm: algorithms.TokenBucket, Limit: algorithms.MaxLimit, Window: algorithms.MinWindow},
		{Algorithm: algorithms.LeakyBucket, Limit: algorithms.MaxLimit, Window: algorithms.MinWindow},
		{Algorithm: algorithms.TokenBucket, Limit: algorithms.MaxLimit, Window: 100 * time.Millisecond},
	} {
		for _, back := range []time.Duration{365 * 24 * time.Hour, 60 * 365 * 24 * time.Hour} {
			t.Run(spec.String()+"/"+back.String(), func(t *testing.T) {
				clock := algotest.NewClock(now)
				s := newMemoryStore(t, algorithms.WithClock(clock))
				c := algorithms.Check{Spec: spec, Key: "k", Cost: 1}
				if d, err := s.TakeOne(t.Context(), c); err != nil || !d.Allowed {
					t.Fatalf("first TakeOne: %+v, %v", d, err)
				}
				clock.Set(now.Add(-back))
				model := algotest.NewModel()
				if _, err := model.TakeAt(now, c); err != nil {
					t.Fatal(err)
				}
				want, err := model.TakeAt(now.Add(-back), c)
				if err != nil {
					t.Fatal(err)
				}
				var got algorithms.Decision
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("TakeOne %v before the key's state panicked: %v", back, r)
						}
					}()
					got, err = s.TakeOne(t.Context(), c)
				}()
				if err != nil || got != want[0] {
					t.Fatalf("TakeOne %v back: %+v, %v; the model's %+v", back, got, err, want[0])
				}
				ds, err := s.Take(t.Context(), c, algorithms.Check{Spec: spec, Key: "other"})
				if err != nil || ds[0] != want[0] {
					t.Fatalf("Take %v back: %+v, %v; the model's %+v", back, ds, err, want[0])
				}
			})
		}
	}
}
