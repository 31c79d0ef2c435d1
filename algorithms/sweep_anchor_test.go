package algorithms_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestSweepKeepsAnAnchorAheadOfTheClock: a window kind's key whose units
// were all given back still knows its window (or sub-window); a request at
// an earlier instant (a clock stepped back) is decided in that window. A
// sweep at such an earlier instant must not drop the key as idle: the fresh
// key it leaves would count the next request in the earlier window, and a
// request once the clock is back admits it again.
func TestSweepKeepsAnAnchorAheadOfTheClock(t *testing.T) {
	specs := []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Minute},
		{Algorithm: algorithms.SlidingWindow, Limit: 1, Window: time.Minute},
		{Algorithm: algorithms.SlidingBuckets, Limit: 1, Window: time.Minute, Buckets: 2},
	}
	for _, spec := range specs {
		t.Run(string(spec.Algorithm), func(t *testing.T) {
			run := func(sweep bool) string {
				start := time.Unix(1_800_000_000, 0).Truncate(time.Hour) // a window start
				clock := algotest.NewClock(start.Add(30 * time.Second))
				s := newMemoryStore(t, algorithms.WithClock(clock))
				ctx := t.Context()
				c := algorithms.Check{Spec: spec, Key: "k"}
				ds, err := s.Take(ctx, c)
				if err != nil || !ds[0].Allowed {
					t.Fatalf("first Take: %v %v", ds, err)
				}
				var out [1]algorithms.Refunded
				if err := s.GiveBack(ctx, out[:], []algorithms.Check{c}, ds, 0); err != nil || !out[0].Given {
					t.Fatalf("GiveBack: %+v %v", out, err)
				}
				clock.Set(start.Add(-50 * time.Second)) // stepped back, into the previous window
				if sweep {
					s.Sweep()
				}
				var log string
				for _, at := range []time.Duration{-50 * time.Second, 40 * time.Second} {
					clock.Set(start.Add(at))
					ds, err := s.Take(ctx, c)
					if err != nil {
						t.Fatal(err)
					}
					log += fmt.Sprintf("at %v: %+v\n", at, ds[0])
				}
				return log
			}
			kept, swept := run(false), run(true)
			if kept != swept {
				t.Errorf("a sweep changed the decisions:\nwithout it:\n%swith it:\n%s", kept, swept)
			}
		})
	}
}
