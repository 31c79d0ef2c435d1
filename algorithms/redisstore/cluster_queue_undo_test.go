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
	race := newLostRace(t)
	prefix, clk, other, y := race.prefix, race.clk, race.other, race.y
	ctx := context.Background()
	q := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 10 * time.Second}, Key: "user-1"}
	qKey := prefix + ":{user-1}:lq:1:1000000000:0:0:10000000000"
	takeOther := func(c algorithms.Check) algorithms.Decision {
		d, err := other.Take(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return d[0]
	}
	client := sharedCluster(t)
	client.AddHook(race.hook) // y's last unit goes to the other instance
	var behind algorithms.Decision
	client.AddHook(&callModeHook{mode: "2", key: qKey, do: func() {
		behind = takeOther(q) // queued behind the reserved place
	}})
	s, err := redisstore.New(client, redisstore.WithClock(clk), redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Take(ctx, q, y)
	if err != nil {
		t.Fatal(err)
	}
	if !race.hook.hit.Load() || d[1].Allowed {
		t.Fatalf("Take(q, y) = %+v, want y denied (the race lost)", d)
	}
	if !behind.Allowed || behind.Delay != time.Second {
		t.Fatalf("Take(q) between the reservation and the undo = %+v, want admitted with Delay 1s", behind)
	}
	next := takeOther(q)
	if !next.Allowed || next.Delay < behind.Delay+time.Second {
		t.Fatalf("Take(q) after the undo = %+v, want admitted with Delay at least %v (a second after the request queued at %v)",
			next, behind.Delay+time.Second, behind.Delay)
	}
}
