package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestClusterUndoRestoresTheOldExpiry: an undo that gives a fixed_window
// or sliding_window key its old value back gives it its old expiry too,
// not the later one of the reservation's window (the old state stops
// mattering when its window is over). L counts a unit at +50 s, expiring
// with its window; a cross-slot Take of L and y at +61.001 s, in the next
// window, writes L to expire a window later, loses the race for y and is
// undone. L's time to live after the undo must be the one it had before
// the cross-slot Take: no longer, and no shorter than that less the time
// since.
func TestClusterUndoRestoresTheOldExpiry(t *testing.T) {
	for _, sp := range []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Minute},
		{Algorithm: algorithms.SlidingWindow, Limit: 2, Window: time.Minute},
	} {
		t.Run(string(sp.Algorithm), func(t *testing.T) {
			u := newUndoRun(t, sp)
			m, prefix, L, lkey := u.m, u.prefix, u.L, u.lkey
			ctx := context.Background()
			y := algorithms.Check{Spec: oneAnHour, Key: "route-/login"}
			race := u.lose(t, y)
			client := sharedCluster(t)
			client.AddHook(race)
			undos := &undoRecorder{prefix: prefix}
			client.AddHook(undos)
			// No minimum TTL (an hour by default on an injected clock): the
			// keys expire with their state.
			s, err := redisstore.New(client, redisstore.WithClock(m.clk), redisstore.WithPrefix(prefix), redisstore.WithMinTTL(0))
			if err != nil {
				t.Fatal(err)
			}
			take := m.taker(s, "s")
			take(50*time.Second, L)
			// read is taken before the PTTL is sent, so that since, below,
			// covers all the time Redis's clock moved between the two
			// readings: taken after the reply, it missed the time from
			// Redis's reading to the test's, which a loaded machine
			// stretches to milliseconds.
			read := time.Now()
			before, err := client.PTTL(ctx, lkey).Result()
			if err != nil || before <= 0 {
				t.Fatalf("PTTL of L after its Take = %v, %v", before, err)
			}
			d := take(61*time.Second+time.Millisecond, L, y)
			if !race.hit.Load() || len(undos.keys()) != 1 || !d[0].Allowed || d[1].Allowed {
				t.Fatalf("Take(L, y) = %+v (race run %v, undo calls %v); want L passing, y denied after the race, L's reservation undone",
					d, race.hit.Load(), undos.keys())
			}
			after, err := client.PTTL(ctx, lkey).Result()
			if err != nil {
				t.Fatal(err)
			}
			// Nor shorter: the old expiry itself, less the real time since
			// the first PTTL was sent (and a millisecond of PTTL's
			// rounding), not some expiry in between that drops the old
			// state early.
			since := time.Since(read)
			if after > before || after < before-since-time.Millisecond {
				t.Fatalf("L's time to live: %v before the cross-slot Take, %v after its undo (%v later); want the old state's, no longer and no shorter", before, after, since)
			}
			take(30*time.Second, L)
			goesOnAsModel(take, L)
		})
	}
}
