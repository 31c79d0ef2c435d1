package algorithms

import (
	"context"
	"testing"
	"time"
)

// TestSystemClockStoreDecidesAtThePresent pins the system-clock store's
// reading of the time, on both of its paths (TakeOne's, in line, and the
// one of a Take of several checks): a store made ten hours ago decides at
// the present, not ten hours off it. A sliding_log key allowed one unit per
// hour that one path has just admitted is denied by the other, which it
// would not be if either path put the instant hours away from the other's.
// (The store is backdated by moving its anchor, as if made then.)
func TestSystemClockStoreDecidesAtThePresent(t *testing.T) {
	ctx := context.Background()
	spec := Spec{Algorithm: SlidingLog, Limit: 1, Window: time.Hour}
	one := func(s *MemoryStore, key string) Decision {
		d, err := s.TakeOne(ctx, Check{Spec: spec, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	many := func(s *MemoryStore, key string) Decision {
		ds, err := s.Take(ctx, Check{Spec: spec, Key: key}, Check{Spec: spec, Key: key + "-other"})
		if err != nil {
			t.Fatal(err)
		}
		return ds[0]
	}
	for _, tc := range []struct {
		name          string
		first, second func(*MemoryStore, string) Decision
	}{
		{"TakeOne then Take", one, many},
		{"Take then TakeOne", many, one},
	} {
		s, err := NewMemoryStore()
		if err != nil {
			t.Fatal(err)
		}
		if !s.mono {
			t.Fatal("the system-clock store does not read the monotonic clock")
		}
		s.base = s.base.Add(-10 * time.Hour)
		s.baseNs = s.base.UnixNano()
		if d := tc.first(s, "k"); !d.Allowed {
			t.Fatalf("%s: first request denied: %+v", tc.name, d)
		}
		if d := tc.second(s, "k"); d.Allowed || d.RetryAfter <= 59*time.Minute {
			t.Errorf("%s: second request within the hour = %+v, want denied for about an hour", tc.name, d)
		}
	}
}
