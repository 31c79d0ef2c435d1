package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
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
	m, prefix, other, L, lkey := u.m, u.prefix, u.other, u.L, u.lkey
	ctx := context.Background()
	ys := []algorithms.Check{{}, {Spec: oneAnHour, Key: "route-/login"}, {Spec: oneAnHour, Key: "user-2"}}
	at := []time.Duration{0, 30 * time.Second, t2}
	var reserved, turn, returned [3]chan struct{}
	var ds [3][]algorithms.Decision
	var errs [3]error
	var stores [3]*redisstore.Store
	for i := 1; i <= 2; i++ {
		reserved[i], turn[i], returned[i] = make(chan struct{}), make(chan struct{}), make(chan struct{})
	}
	start := func(i int) {
		go func() {
			defer close(returned[i])
			ds[i], errs[i] = stores[i].Take(ctx, L, ys[i])
		}()
	}
	for i := 1; i <= 2; i++ {
		client := sharedCluster(t)
		client.AddHook(u.lose(t, ys[i]))
		client.AddHook(&callModeHook{after: true, mode: "1", key: lkey, do: func() {
			if i == 1 {
				start(2)
				select {
				case <-reserved[2]:
				case <-returned[2]:
				case <-time.After(10 * time.Second):
				}
			}
			close(reserved[i])
		}})
		client.AddHook(&callModeHook{mode: "2", key: lkey, do: func() {
			select {
			case <-turn[i]:
			case <-time.After(10 * time.Second):
			}
		}})
		var err error
		stores[i], err = redisstore.New(client, redisstore.WithClock(&manualClock{t: m.base.Add(at[i])}), redisstore.WithPrefix(prefix))
		if err != nil {
			t.Fatal(err)
		}
	}
	take := m.taker(other, "other")
	two := L
	two.Cost = 2
	take(time.Second, two)
	start(1)
	select {
	case <-reserved[1]:
	case <-returned[1]:
	case <-time.After(30 * time.Second):
		t.Fatal("the reservations did not happen")
	}
	for _, i := range order {
		close(turn[i])
		select {
		case <-returned[i]:
		case <-time.After(10 * time.Second):
			t.Fatalf("T%d did not return after its turn to undo", i)
		}
	}
	for i := 1; i <= 2; i++ {
		m.clk.t = m.base.Add(at[i])
		if diff := m.compare(fmt.Sprintf("T%d", i), ds[i], errs[i], true, L, ys[i]); diff != "" {
			t.Fatal(diff)
		}
		if !ds[i][0].Allowed || ds[i][1].Allowed {
			t.Fatalf("T%d = %+v; want L passing and y%d denied", i, ds[i], i)
		}
	}
	take(31*time.Second, L)
	goesOnAsModel(take, L)
}
