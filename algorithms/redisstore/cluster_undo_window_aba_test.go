package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestClusterUndoWindowTakenAndGivenBackBetween: between a cross-slot
// Take's reservation of a fixed_window or sliding_window key L and its
// undo, another instance takes a unit of L in the reservation's window
// and gives it back: L then holds, as a string, what the reservation
// wrote, though a request was counted in that window since (an admitted
// Take moves L to its window in any world). The undo must take the
// reserved unit back in that window, not give L its value of before the
// reservation (an earlier window, with its units): a Take at +31 s (a
// clock behind) is then decided as the Model decides it. L: 10 a minute,
// 5 units taken at +30 s.
//
// The undo told "nothing written since" by the value alone, and the Take
// given back left the very string the reservation wrote: it gave L its
// old value back (fixed_window at +31 s: redis Remaining 4, model 9;
// sliding_window: ResetAfter 1m29s, NextAfter 39s, model 2m29s, 41s). The
// reservation's record in L's value now says it: the Take wrote L's state
// alone (lua/cluster.lua).
func TestClusterUndoWindowTakenAndGivenBackBetween(t *testing.T) {
	for _, sp := range []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute},
		{Algorithm: algorithms.SlidingWindow, Limit: 10, Window: time.Minute},
	} {
		t.Run(string(sp.Algorithm), func(t *testing.T) { takenAndGivenBackRun(t, sp, 30*time.Second, 5) })
	}
}

// takenAndGivenBackRun: L of spec sp counts cost units taken at +at; then
// a cross-slot Take of L and y at +61.001 s reserves L, and between the
// reservation and its undo another instance takes a unit of L and gives
// it back; a Take of L at +31 s (a clock behind) and the ones after are
// then decided as the Model decides them.
func takenAndGivenBackRun(t *testing.T, sp algorithms.Spec, at time.Duration, cost int64) {
	u := newUndoRun(t, sp)
	m, other, L := u.m, u.other, u.L
	ctx := context.Background()
	y := algorithms.Check{Spec: oneAnHour, Key: "route-/login"}
	client := sharedCluster(t)
	client.AddHook(u.lose(t, y))
	between := false
	client.AddHook(&callModeHook{mode: "2", key: u.lkey, do: func() {
		d, err := other.Take(ctx, L)
		if diff := m.compare("other", d, err, true, L); diff != "" {
			t.Error(diff)
			return
		}
		// Given back on both, compared only as to Given: the
		// reservation's unit is in what Redis reports.
		got := make([]algorithms.Refunded, 1)
		gerr := other.GiveBack(ctx, got, []algorithms.Check{L}, d, 0)
		m.mu.Lock()
		want, merr := m.model.GiveBackAt(m.clk.t, []algorithms.Check{L}, d, 0)
		m.steps = append(m.steps, fmt.Sprintf("+%v other: GiveBack of that Take", m.clk.t.Sub(m.base)))
		m.mu.Unlock()
		if gerr != nil || merr != nil || !got[0].Given || !want[0].Given {
			t.Errorf("GiveBack of L between: redis %+v, %v; model %+v, %v; want both given", got, gerr, want, merr)
			return
		}
		between = true
	}})
	s, err := redisstore.New(client, redisstore.WithClock(m.clk), redisstore.WithPrefix(u.prefix))
	if err != nil {
		t.Fatal(err)
	}
	take := m.taker(s, "s")
	first := L
	first.Cost = cost
	take(at, first)
	d := take(61*time.Second+time.Millisecond, L, y)
	if !between || !d[0].Allowed || d[1].Allowed {
		t.Fatalf("Take(L, y) = %+v (L taken and given back between: %v); want L passing, y denied, L's reservation undone", d, between)
	}
	take(31*time.Second, L)
	goesOnAsModel(take, L)
}
