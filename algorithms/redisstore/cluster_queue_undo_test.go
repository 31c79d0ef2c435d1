package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestClusterUndoKeepsAQueuePlaceWithRequestsBehind: a cross-slot Take
// reserves a place in a leaky_queue (1 per second), loses the race for its
// other key, and undoes the place; between the reservation and the undo,
// another request queued behind the place and was told to wait a second.
// Moving the queue back by the place's second then would send the next
// request at that same instant: two departures at once, where the shaper
// spaces them a second apart (Refund keeps such a place, for that reason).
// The undo must keep the place; the next request departs a second after
// the one that queued behind it.
func TestClusterUndoKeepsAQueuePlaceWithRequestsBehind(t *testing.T) {
	queueBehindRun(t, func(race *lostRace, q algorithms.Check) ([]algorithms.Decision, error) {
		return race.other.Take(context.Background(), q)
	})
}

// TestClusterUndoKeepsAQueuePlaceWithAReservationBehind is
// TestClusterUndoKeepsAQueuePlaceWithRequestsBehind with a cross-slot
// Take behind the place: between the reservation and its undo, another
// cross-slot Take of the queue and y2 reserves the next place and is
// admitted, told to wait a second. Its record is then the newest in the
// queue's key, over the undone one's, which must keep the place rather
// than count the admitted one again on the queue as it was before (which
// would send the next request with it).
func TestClusterUndoKeepsAQueuePlaceWithAReservationBehind(t *testing.T) {
	queueBehindRun(t, func(race *lostRace, q algorithms.Check) ([]algorithms.Decision, error) {
		crossed, err := redisstore.New(sharedCluster(t), redisstore.WithClock(race.clk), redisstore.WithPrefix(race.prefix))
		if err != nil {
			return nil, err
		}
		return crossed.Take(context.Background(), q, algorithms.Check{Spec: oneAnHour, Key: "user-2"})
	})
}

// queueBehindRun: a cross-slot Take of a leaky_queue q (1 per second) and
// y reserves q's first place, loses the race for y, and is undone; between
// the reservation and the undo, behind takes q (with checks of its own)
// and must be admitted, told to wait a second. A Take of q after the undo
// must wait at least a second more.
func queueBehindRun(t *testing.T, behind func(*lostRace, algorithms.Check) ([]algorithms.Decision, error)) {
	race := newLostRace(t)
	ctx := context.Background()
	q := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 10 * time.Second}, Key: "user-1"}
	qKey := race.prefix + ":{user-1}:lq:1:1000000000:0:0:10000000000"
	client := sharedCluster(t)
	client.AddHook(race.hook) // y's last unit goes to the other instance
	var bd []algorithms.Decision
	var berr error
	client.AddHook(&callModeHook{mode: "2", key: qKey, do: func() {
		bd, berr = behind(race, q) // queued behind the reserved place
	}})
	s, err := redisstore.New(client, redisstore.WithClock(race.clk), redisstore.WithPrefix(race.prefix))
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Take(ctx, q, race.y)
	if err != nil {
		t.Fatal(err)
	}
	if !race.hook.hit.Load() || d[1].Allowed {
		t.Fatalf("Take(q, y) = %+v, want y denied (the race lost)", d)
	}
	if berr != nil || !allAllowed(bd) || bd[0].Delay != time.Second {
		t.Fatalf("the Take of q between the reservation and the undo = %+v, %v; want admitted with Delay 1s", bd, berr)
	}
	next, err := race.other.Take(ctx, q)
	if err != nil || !next[0].Allowed || next[0].Delay < bd[0].Delay+time.Second {
		t.Fatalf("Take(q) after the undo = %+v, %v; want admitted with Delay at least %v (a second after the request queued at %v)",
			next, err, bd[0].Delay+time.Second, bd[0].Delay)
	}
}
