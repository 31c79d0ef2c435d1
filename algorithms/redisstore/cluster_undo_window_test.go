package redisstore_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestClusterUndoLeavesWindowAsBefore: undone, a reservation is a denied
// Take, which moves no fixed_window or sliding_window key to a later
// window. L (2 a minute) counts 1 unit at +1 s; a cross-slot Take of L and
// y at a later window loses the race for y, and L's reservation is undone;
// then the clock goes back (algorithms, "Time that goes back") into the
// earlier window, where L still counts its unit: a Take there is decided
// as the Model decides it, not at the start of the window the undone
// reservation moved the key to (with the unit forgotten: more Remaining).
// Found by TestStoreDifferentialHTTP on a cluster (a sliding_window
// reported r=10;t=2 where the memory store reported r=9;t=1).
func TestClusterUndoLeavesWindowAsBefore(t *testing.T) {
	for _, c := range []struct {
		name     string
		spec     algorithms.Spec
		at, back time.Duration // the cross-slot Take's instant, and the one gone back to
	}{
		{"fixed_window", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Minute}, 61*time.Second + time.Millisecond, 30 * time.Second},
		{"sliding_window", algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 2, Window: time.Minute}, 61*time.Second + time.Millisecond, 30 * time.Second},
		{"sliding_window/two_windows_on", algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 2, Window: time.Minute}, 121*time.Second + time.Millisecond, 61 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := newUndoRun(t, c.spec)
			m, prefix, L := u.m, u.prefix, u.L
			y := algorithms.Check{Spec: oneAnHour, Key: "route-/login"}
			race := u.lose(t, y)
			client := sharedCluster(t)
			client.AddHook(race)
			undos := &undoRecorder{prefix: prefix}
			client.AddHook(undos)
			s, err := redisstore.New(client, redisstore.WithClock(m.clk), redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			take := m.taker(s, "s")
			take(time.Second, L)
			d := take(c.at, L, y)
			if !race.hit.Load() || len(undos.keys()) != 1 || !d[0].Allowed || d[1].Allowed {
				t.Fatalf("Take(L, y) at +%v = %+v (race run %v, undo calls %v); want L passing, y denied after the race, L's reservation undone",
					c.at, d, race.hit.Load(), undos.keys())
			}
			take(c.back, L) // fails on any difference from the Model
			goesOnAsModel(take, L)
		})
	}
}
