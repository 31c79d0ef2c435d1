package redisstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// bucketUndoSpecs are the kinds whose state is an instant that a request
// moves to max(F, t) + n·W/L: 6 a minute, one unit every 10 s.
var bucketUndoSpecs = []algorithms.Spec{
	{Algorithm: algorithms.TokenBucket, Limit: 6, Window: time.Minute},
	{Algorithm: algorithms.LeakyBucket, Limit: 6, Window: time.Minute},
	{Algorithm: algorithms.LeakyQueue, Limit: 6, Window: time.Minute, MaxDelay: time.Minute},
}

// TestClusterUndoBucketTakenAndGivenBackBetween is
// TestClusterUndoWindowTakenAndGivenBackBetween for the bucket kinds: L
// counts 2 units taken at +1 s (F = +21 s); a cross-slot Take of L and y
// at +61.001 s reserves L (F = +71.001 s), and between the reservation and
// its undo another instance takes a unit of L and gives it back, which
// leaves the very value the reservation wrote. A request was counted in
// between, at +61.001 s, where the bucket (the queue) of the Model, which
// saw the cross-slot Take denied, was full (free): its instant is
// +61.001 s after the give-back, and a Take at +31 s (a clock behind)
// finds 30 s of deficit (of wait). An undo that tells "nothing written
// since" by the value alone gives L its old instant, +21 s, back: the Take
// at +31 s finds the bucket full.
func TestClusterUndoBucketTakenAndGivenBackBetween(t *testing.T) {
	for _, sp := range bucketUndoSpecs {
		t.Run(string(sp.Algorithm), func(t *testing.T) { takenAndGivenBackRun(t, sp, time.Second, 2) })
	}
}

// TestClusterUndoBucketOverlapping is TestClusterUndoWindowOverlapping for
// the bucket kinds: L counts 2 units taken at +1 s (F = +21 s); T1 at
// +30 s (F = +40 s) and T2 at +61.001 s (F = +71.001 s) reserve L, and
// both are undone, in either order: two denied Takes, which leave L at
// +21 s. T2 came after T1's units had drained (and after T1's place in
// the queue), so without T1 it moves L to the same instant: undone T1
// first, T2's reservation is as if made on L as it was before T1, and its
// undo gives L that state.
func TestClusterUndoBucketOverlapping(t *testing.T) {
	for _, sp := range bucketUndoSpecs {
		for _, order := range [][2]int{{1, 2}, {2, 1}} {
			t.Run(fmt.Sprintf("%s/undo_T%d_T%d", sp.Algorithm, order[0], order[1]), func(t *testing.T) {
				undoOverlapRun(t, sp, order, 61*time.Second+time.Millisecond)
			})
		}
	}
}

// TestClusterUndoQueuePlaceBehindAReservation: a leaky_queue L (6 a
// minute) counts 2 units taken at +1 s (free at +21 s); T1 at +30 s takes
// the place up to +40 s, and T2 at +35 s queues behind it (told to wait
// 5 s), both reservations made before either undo. Undone T1 first, its
// place stays (T2 was told to wait for it: see
// TestClusterUndoKeepsAQueuePlaceWithRequestsBehind); undone T2 then, no
// one waits for T1's place any longer, and both go: L is free at +21 s
// again, as the Model's (which saw both denied), in either order.
func TestClusterUndoQueuePlaceBehindAReservation(t *testing.T) {
	sp := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 6, Window: time.Minute, MaxDelay: time.Minute}
	for _, order := range [][2]int{{1, 2}, {2, 1}} {
		t.Run(fmt.Sprintf("undo_T%d_T%d", order[0], order[1]), func(t *testing.T) {
			undoOverlapRun(t, sp, order, 35*time.Second)
		})
	}
}
