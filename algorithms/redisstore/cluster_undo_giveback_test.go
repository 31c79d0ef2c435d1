package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestClusterUndoOfAnOlderReservationThenGiveBack is trace (a) of
// TestGiveBackOutOfOrderNeverOverAdmits with the older Take a cross-slot
// reservation undone instead of given back. The bucket (5 a minute, burst
// 7) is fresh; a cross-slot Take of L (cost 2) and y at +0 s reserves L
// and loses y, and between the reservation and its undo another instance
// takes B, 2 of L (its decision counts the reservation's 2 ahead of it).
// Then 3 at +20 s, and B given back at +30 s, waited 30 s. Without the
// reservation and B the bucket is full at 0 and 20 s and holds 4.83 at
// 30 s: a Take of 5 there is denied. A give-back that reckoned B's units
// from its decision, 2 units behind the reservation's, would give back
// what the undo already moved up and admit it (6 tokens; so it did before
// the undo noted a give-back on the key, lua/notes.lua): B, decided
// before the undo's instant, gives back only what its own units have not
// refilled, nothing at +30 s.
func TestClusterUndoOfAnOlderReservationThenGiveBack(t *testing.T) {
	for _, sp := range []algorithms.Spec{
		{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Minute, Burst: 7},
		{Algorithm: algorithms.LeakyBucket, Limit: 5, Window: time.Minute, Burst: 7},
	} {
		t.Run(string(sp.Algorithm), func(t *testing.T) {
			u := newUndoRun(t, sp)
			m, other := u.m, u.other
			ctx := context.Background()
			y := algorithms.Check{Spec: oneAnHour, Key: "route-/login"}
			client := sharedCluster(t)
			client.AddHook(u.lose(t, y))
			b := u.L
			b.Cost = 2
			var bd []algorithms.Decision
			client.AddHook(&callModeHook{mode: "2", key: u.lkey, do: func() {
				d, err := other.Take(ctx, b)
				if err != nil || !d[0].Allowed {
					t.Errorf("B between the reservation and its undo: %+v, %v; want admitted", d, err)
					return
				}
				bd = d
			}})
			s, err := redisstore.New(client, redisstore.WithClock(m.clk), redisstore.WithPrefix(u.prefix))
			if err != nil {
				t.Fatal(err)
			}
			r := u.L
			r.Cost = 2
			d, err := s.Take(ctx, r, y)
			if err != nil || !d[0].Allowed || d[1].Allowed || bd == nil {
				t.Fatalf("Take(L, y) = %+v, %v (B taken between: %v); want L passing, y denied, L's reservation undone", d, err, bd != nil)
			}
			m.clk.t = m.base.Add(20 * time.Second)
			c := u.L
			c.Cost = 3
			if d, err := other.Take(ctx, c); err != nil || !d[0].Allowed {
				t.Fatalf("3 at +20 s: %+v, %v; want admitted", d, err)
			}
			m.clk.t = m.base.Add(30 * time.Second)
			dst := make([]algorithms.Refunded, 1)
			if err := other.GiveBack(ctx, dst, []algorithms.Check{b}, bd, 30*time.Second); err != nil {
				t.Fatal(err)
			}
			probe := u.L
			probe.Cost = 5
			if d, err := other.Take(ctx, probe); err != nil || d[0].Allowed {
				t.Errorf("5 at +30 s after B's give-back: %+v, %v; want denied, as without the reservation and B (4.83 left)", d, err)
			}
		})
	}
}
