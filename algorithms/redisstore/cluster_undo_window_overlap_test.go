package redisstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestClusterUndoWindowOverlapping: two cross-slot Takes reserve one
// fixed_window or sliding_window key L (6 a minute, 2 units taken at
// +1 s), T1 at +30 s and T2 at +61.001 s (in the next window, on a clock
// of its own), T2's reservation made before T1's undo; both lose their
// race for y_i and are undone, in either order: two denied Takes, which
// leave L as it was. T2's reservation wrote L over T1's, in the next
// window: the undo of T1 finds its units gone from the window L holds and
// takes nothing back; the undo of T2, finding L as T2 wrote it, must not
// give L the value it had before T2 (with T1's unit, undone meanwhile).
// A Take of L at +31 s is then decided as the Model decides it.
//
// Undone T1 first, then T2, L was not as before when the undo of T2 gave
// L the value T2 had found, by its undo record: a fixed_window got T1's
// unit back in the earlier window (Remaining 2 at +31 s where the Model
// has 3), a sliding_window stayed in the later window (ResetAfter 2m29s,
// Model 1m29s). L's value now holds the reservations' records, and the
// undo of T1 gives T2's the value T1 found (lua/cluster.lua).
func TestClusterUndoWindowOverlapping(t *testing.T) {
	for _, sp := range []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 6, Window: time.Minute},
		{Algorithm: algorithms.SlidingWindow, Limit: 6, Window: time.Minute},
	} {
		for _, order := range [][2]int{{1, 2}, {2, 1}} {
			t.Run(fmt.Sprintf("%s/undo_T%d_T%d", sp.Algorithm, order[0], order[1]), func(t *testing.T) {
				undoOverlapRun(t, sp, order, 61*time.Second+time.Millisecond)
			})
		}
	}
}

// undoOverlapRun: L of spec sp counts 2 units taken at +1 s; cross-slot
// Takes T1 at +30 s and T2 at +t2 (each on a clock of its own) reserve L,
// T2's before T1's undo, and both lose their race for y_i; their undos
// come in order. A Take of L at +31 s and the ones after are then decided
// as the Model (which saw both denied) decides them.
func undoOverlapRun(t *testing.T, sp algorithms.Spec, order [2]int, t2 time.Duration) {
	u := newUndoRun(t, sp)
	ys := []algorithms.Check{{}, {Spec: oneAnHour, Key: "route-/login"}, {Spec: oneAnHour, Key: "user-2"}}
	chain := newReservationChain(t, u, 2, ys, []time.Duration{0, 30 * time.Second, t2}, nil, nil)
	take := u.m.taker(u.other, "other")
	two := u.L
	two.Cost = 2
	take(time.Second, two)
	chain.run(t, order[:])
	chain.compare(t)
	take(31*time.Second, u.L)
	goesOnAsModel(take, u.L)
}
