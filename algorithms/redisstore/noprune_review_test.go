package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// noPruneTrace replays algotest.NoPruneTrace, instants going back, on a
// Redis store on client.
func noPruneTrace(t *testing.T, client redis.UniversalClient, seed uint64, steps int) {
	t.Helper()
	clock := algotest.NewClock(algotest.Base)
	store, err := redisstore.New(client, redisstore.WithClock(clock), redisstore.WithPrefix(uniquePrefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	algotest.NoPruneTrace(t, store, clock, seed, steps, nil)
}

// TestNoPruneTracesRedis compares random traces of sliding_log and
// sliding_buckets keys, named several times in a call, with instants
// going back, Peeks and GiveBacks, with the Model, on a redis-server.
func TestNoPruneTracesRedis(t *testing.T) {
	client := newBoundClient(t)
	for seed := uint64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { noPruneTrace(t, client, seed, 300) })
	}
}

// TestNoPruneTracesRedisCluster is TestNoPruneTracesRedis on a Redis
// Cluster, where a call on keys of several slots reserves and undoes.
func TestNoPruneTracesRedisCluster(t *testing.T) {
	client := sharedBoundCluster(t)
	for seed := uint64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { noPruneTrace(t, client, seed, 300) })
	}
}

// TestClusterOverlappingUndosLeaveLogAndRingAsBefore: a sliding_log or
// sliding_buckets key L (4 a minute) holds 2 units taken at +1 s and 2 at +31 s. At +61.001 s two
// cross-slot Takes, T1 of (L, y1) and T2 of (L, y2), each lose the race
// for their y (another instance takes its one unit between the peek and
// the reservation): both are denied Takes, which forget no event of L.
// Their reservations of L overlap: T1 reserves L (forgetting the +1 s
// units), T2 reserves L, T1 undoes L, then T2 undoes L. A Take of L at
// +31 s (a clock behind) must then count the +1 s units, and be denied,
// as the Model (which saw both Takes denied) decides.
//
// T1's undo finds L written since by T2's reservation, not yet undone,
// and hands what T1's reservation forgot over to T2's (L's side key, see
// lua/cluster.lua); T2's undo, the newest reservation's, finding no
// request counted since, puts it back. (Before, T1's undo only
// subtracted, and so did T2's, which found L changed by T1's: the +1 s
// units were gone, and the Take at +31 s was admitted, 5 units in the
// minute.) TestClusterOverlappingReservations runs every order of two and
// three such reservations.
func TestClusterOverlappingUndosLeaveLogAndRingAsBefore(t *testing.T) {
	for _, sp := range undoStateSpecs {
		t.Run(string(sp.Algorithm), func(t *testing.T) {
			u := newUndoRun(t, sp)
			m, prefix, L, lkey := u.m, u.prefix, u.L, u.lkey
			ctx := context.Background()
			y1 := algorithms.Check{Spec: oneAnHour, Key: "route-/login"}
			y2 := algorithms.Check{Spec: oneAnHour, Key: "route-/signup"}
			reached2 := make(chan struct{}) // T2 is about to undo L
			done1 := make(chan struct{})    // T1 has returned
			var d2 []algorithms.Decision
			var err2 error
			t2done := make(chan struct{})
			c2 := sharedCluster(t)
			c2.AddHook(u.lose(t, y2))
			c2.AddHook(&callModeHook{mode: "2", key: lkey, do: func() {
				close(reached2)
				<-done1
			}})
			s2, err := redisstore.New(c2, redisstore.WithClock(m.clk), redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			c1 := sharedCluster(t)
			c1.AddHook(u.lose(t, y1))
			undos := &undoRecorder{prefix: prefix}
			c1.AddHook(undos)
			c1.AddHook(&callModeHook{mode: "2", key: lkey, do: func() {
				go func() {
					defer close(t2done)
					d2, err2 = s2.Take(ctx, L, y2)
				}()
				select {
				case <-reached2:
				case <-t2done:
				case <-time.After(10 * time.Second):
				}
			}})
			s1, err := redisstore.New(c1, redisstore.WithClock(m.clk), redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			take := m.taker(s1, "s1")
			two := L
			two.Cost = 2
			take(time.Second, two)
			take(31*time.Second, two)
			m.clk.t = m.base.Add(61*time.Second + time.Millisecond)
			d1, err1 := s1.Take(ctx, L, y1)
			close(done1)
			<-t2done
			// T2 ran inside T1's call, before it: compared with the
			// Model first; both only as to Allowed (each saw the
			// other's reserved unit).
			if diff := m.compare("s2", d2, err2, true, L, y2); diff != "" {
				t.Fatal(diff)
			}
			if diff := m.compare("s1", d1, err1, true, L, y1); diff != "" {
				t.Fatal(diff)
			}
			if !d1[0].Allowed || d1[1].Allowed || !d2[0].Allowed || d2[1].Allowed || len(undos.keys()) != 1 {
				t.Fatalf("T1 = %+v, T2 = %+v, T1's undo calls %v: want L passing, y denied and L undone in both", d1, d2, undos.keys())
			}
			if d := take(31*time.Second, L); d[0].Allowed {
				t.Fatalf("Take(L) at +31s after two undone cross-slot Takes = %+v; want denied", d)
			}
		})
	}
}

// TestClusterGiveBackBetweenReservationAndUndo: L (4 a minute) holds 2
// units taken at +1 s and 2 at +31 s. At +61.001 s a cross-slot Take of
// (L, y) reserves L (forgetting the +1 s units), loses the race for y and
// is undone: a denied Take. Between the reservation and the undo, the
// +31 s Take's units are given back (a give-back counts no request: it
// forgets nothing). The Model then holds the +1 s units only, and a Take
// of L of cost 3 at +31 s (a clock behind) is denied: 5 units in the
// minute up to +31 s.
func TestClusterGiveBackBetweenReservationAndUndo(t *testing.T) {
	for _, sp := range undoStateSpecs {
		t.Run(string(sp.Algorithm), func(t *testing.T) {
			u := newUndoRun(t, sp)
			m, prefix, other, L := u.m, u.prefix, u.other, u.L
			ctx := context.Background()
			y := algorithms.Check{Spec: oneAnHour, Key: "route-/login"}
			two := L
			two.Cost = 2
			var ds31 []algorithms.Decision
			client := sharedCluster(t)
			client.AddHook(u.lose(t, y))
			var given []algorithms.Refunded
			client.AddHook(&callModeHook{mode: "2", key: redisKeys(prefix, L)[0], do: func() {
				waited := m.clk.t.Sub(m.base.Add(31 * time.Second))
				given = make([]algorithms.Refunded, 1)
				if err := other.GiveBack(ctx, given, []algorithms.Check{two}, ds31, waited); err != nil {
					t.Error(err)
				}
				m.mu.Lock()
				want, err := m.model.GiveBackAt(m.clk.t, []algorithms.Check{two}, ds31, waited)
				m.steps = append(m.steps, "+1m1.001s other: GiveBack of the +31s Take")
				m.mu.Unlock()
				if err != nil || want[0].Given != given[0].Given || !given[0].Given {
					t.Errorf("GiveBack between the reservation and the undo: %+v, model %+v (%v); want both given", given, want, err)
				}
			}})
			s, err := redisstore.New(client, redisstore.WithClock(m.clk), redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			take := func(at time.Duration, loose bool, checks ...algorithms.Check) []algorithms.Decision {
				t.Helper()
				m.clk.t = m.base.Add(at)
				d, err := s.Take(ctx, checks...)
				if diff := m.compare("s", d, err, loose, checks...); diff != "" {
					t.Fatal(diff)
				}
				return d
			}
			take(time.Second, false, two)
			ds31 = take(31*time.Second, false, two)
			if d := take(61*time.Second+time.Millisecond, true, L, y); !d[0].Allowed || d[1].Allowed || given == nil {
				t.Fatalf("Take(L, y) at +61.001s = %+v (given back between: %v); want L passing, y denied, L undone", d, given != nil)
			}
			three := L
			three.Cost = 3
			if d := take(31*time.Second, false, three); d[0].Allowed {
				t.Fatalf("Take(L cost 3) at +31s = %+v; want denied", d)
			}
		})
	}
}
