package algorithms

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestManySpecsLookedUpBySpec: a store whose limits changed many times
// (reloads, adaptive limits, SetLimit on a live middleware) holds a table
// per Spec in each shard, and a single check looked for its own through
// all of them: 5.4 us a Take with a thousand old Specs, where 0.3 us with
// none. Beyond scanTables a shard finds tables by Spec; each Spec keeps
// its own state, through the single-check and the batch paths.
func TestManySpecsLookedUpBySpec(t *testing.T) {
	s, err := NewMemoryStore(WithClock(ClockFunc(func() time.Time { return time.Unix(1_700_000_000, 0) })))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	const specs = 40
	spec := func(i int) Spec {
		return Spec{Algorithm: []Kind{FixedWindow, SlidingWindow, TokenBucket, SlidingLog}[i%4], Limit: int64(10 + i), Window: time.Minute}
	}
	for i := range specs {
		if _, err := s.TakeOne(ctx, Check{Spec: spec(i), Key: "k"}); err != nil {
			t.Fatal(err)
		}
	}
	indexed := 0
	for i := range s.shards {
		if s.shards[i].idx.Load() != nil {
			indexed++
		}
	}
	if indexed == 0 {
		t.Fatalf("no shard indexes its %d tables", specs)
	}
	// Each Spec has counted one request of key k: one more each, alone
	// and then two at a time, leaves limit-2 and limit-3 (limit-4 for the
	// first of a pair, taken twice).
	for i := range specs {
		d, err := s.TakeOne(ctx, Check{Spec: spec(i), Key: "k"})
		if err != nil {
			t.Fatal(err)
		}
		if want := spec(i).Limit - 2; d.Remaining != want {
			t.Errorf("spec %d: Remaining %d, want %d", i, d.Remaining, want)
		}
	}
	for i := 0; i+1 < specs; i += 2 {
		ds, err := s.Take(ctx, Check{Spec: spec(i), Key: "k"}, Check{Spec: spec(i + 1), Key: "k"})
		if err != nil {
			t.Fatal(err)
		}
		for j, d := range ds {
			if want := spec(i+j).Limit - 3; d.Remaining != want {
				t.Errorf("spec %d in a Take of two: Remaining %d, want %d", i+j, d.Remaining, want)
			}
		}
	}
	if n := s.Len(); n != specs {
		t.Errorf("Len %d, want %d (one key per Spec)", n, specs)
	}
}

// BenchmarkTakeOneManySpecs decides a single check on a held key beside
// other Specs' tables, as a long-lived process whose limits changed holds
// them.
func BenchmarkTakeOneManySpecs(b *testing.B) {
	for _, old := range []int{0, 100, 1000} {
		b.Run(fmt.Sprintf("old=%d", old), func(b *testing.B) {
			s, err := NewMemoryStore()
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			for i := range old {
				if _, err := s.TakeOne(ctx, Check{Spec: Spec{Algorithm: FixedWindow, Limit: int64(1000 + i), Window: time.Minute}, Key: "k"}); err != nil {
					b.Fatal(err)
				}
			}
			// Two live Specs, alternating, so that the shard's latest
			// table is the other one half the time.
			live := [2]Check{
				{Spec: Spec{Algorithm: SlidingWindow, Limit: MaxLimit, Window: time.Second}, Key: "k"},
				{Spec: Spec{Algorithm: FixedWindow, Limit: MaxLimit, Window: time.Hour}, Key: "k"},
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := s.TakeOne(ctx, live[i&1]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
