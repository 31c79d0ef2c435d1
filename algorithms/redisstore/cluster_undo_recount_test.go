package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestClusterUndoRecountsInTheDecidedWindow: a fixed_window or
// sliding_window key L (6 a minute) holds units taken at +10 s (6 for a
// fixed_window, window 0 full; 2 for a sliding_window). Cross-slot T1 at
// +61.001 s reserves a unit of L, moving it to window 1; T2 at +59 s (a
// clock behind: it read the shared clock first and reached Redis after
// T1) reserves a unit too, decided in window 1 where L is, and wins its
// race: admitted. T1 loses its race for y1 and is undone, counting T2's
// reservation again on L as before T1. T2 was admitted against window 1's
// count, never against window 0's: it must stay counted in window 1.
// Counted again at its own instant, in window 0, a fixed_window L held 7
// units in window 0 and none in window 1, where a Take of 6 at +62 s was
// then admitted: 7 units in window 1 for T2's answer, in either window for
// the store's (the failure of TestClusterConcurrentCrossSlotTakes, seed
// 1796502170916507986: "L admitted more than fixed_window allows: 17 units
// in window ..."); a sliding_window admitted a Take of 5 at +119 s, T2's
// unit gone with window 0: 2·(1/60) + 6 units, over 6.
func TestClusterUndoRecountsInTheDecidedWindow(t *testing.T) {
	for _, c := range []struct {
		sp        algorithms.Spec
		fill      int64         // units taken at +10 s
		reset     time.Duration // T2's ResetAfter, decided in window 1
		probe     time.Duration // a Take of probeCost there is denied
		probeCost int64
		probeLeft int64 // with this Remaining
	}{
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 6, Window: time.Minute}, 6, 61 * time.Second, 62 * time.Second, 6, 5},
		{algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 6, Window: time.Minute}, 2, 121 * time.Second, 119 * time.Second, 5, 4},
	} {
		sp := c.sp
		t.Run(string(sp.Algorithm), func(t *testing.T) {
			u := newUndoRun(t, sp)
			ys := []algorithms.Check{{}, {Spec: oneAnHour, Key: "route-/login"}, {Spec: oneAnHour, Key: "user-2"}}
			chain := newReservationChain(t, u, 2, ys, []time.Duration{0, 61*time.Second + time.Millisecond, 59 * time.Second}, map[int]bool{2: true}, nil)
			take := u.m.taker(u.other, "other")
			fill := u.L
			fill.Cost = c.fill
			take(10*time.Second, fill)
			chain.run(t, []int{1})
			for i := 1; i <= 2; i++ {
				if chain.errs[i] != nil {
					t.Fatalf("T%d: %v", i, chain.errs[i])
				}
			}
			if d := chain.ds[1]; !d[0].Allowed || d[1].Allowed {
				t.Fatalf("T1 = %+v; want L passing and y1 lost", d)
			}
			// T2 decided in window 1 (+60 s to +120 s), from +59 s.
			if d := chain.ds[2]; !d[0].Allowed || !d[1].Allowed || d[0].ResetAfter != c.reset {
				t.Fatalf("T2 = %+v; want both admitted, L's ResetAfter %v (decided in window 1)", d, c.reset)
			}
			probe := u.L
			probe.Cost = c.probeCost
			u.m.clk.t = u.m.base.Add(c.probe)
			d, err := u.other.Take(context.Background(), probe)
			if err != nil {
				t.Fatal(err)
			}
			if d[0].Allowed || d[0].Remaining != c.probeLeft {
				t.Fatalf("Take(L cost %d) at +%v = %+v; want denied, Remaining %d: T2's unit counted in window 1", c.probeCost, c.probe, d[0], c.probeLeft)
			}
		})
	}
}
