package redisstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestClusterUndoRecordDroppedPastTheCap: a key keeps the records of at
// most 16 reservations (lua/cluster.lua, CHAINCAP). T1, a cross-slot Take
// of L and y1 at +61.001 s, reserves L; before its undo, 16 cross-slot
// Takes of L and z are admitted (their reservations stand) and T2, one of
// L and y2, reserves L too: T1's record is dropped. T1 and T2 lose their
// races and are undone, T1 first: T1's undo, not finding its record,
// takes its unit off L's state and off the olds of the records that count
// it, so that T2's undo, which gives L the value T2 found, leaves L as the
// Model's, which saw T1 and T2 denied and the 16 admitted. L counts 2
// units taken before: at +1 s for the window kinds (T1 moves L to the next
// window), at +61 s for the token bucket (full at +65 s, after T1's
// instant: T1's units come off exactly).
func TestClusterUndoRecordDroppedPastTheCap(t *testing.T) {
	for _, c := range []struct {
		spec  algorithms.Spec
		prior time.Duration
	}{
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 30, Window: time.Minute}, time.Second},
		{algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 30, Window: time.Minute}, time.Second},
		{algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 30, Window: time.Minute}, 61 * time.Second},
	} {
		t.Run(string(c.spec.Algorithm), func(t *testing.T) {
			u := newUndoRun(t, c.spec)
			m, L := u.m, u.L
			ctx := context.Background()
			y1 := algorithms.Check{Spec: oneAnHour, Key: "route-/login"}
			y2 := algorithms.Check{Spec: oneAnHour, Key: "user-2"}
			z := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Hour}, Key: "user-4"}
			crossed, err := redisstore.New(sharedCluster(t), redisstore.WithClock(m.clk), redisstore.WithPrefix(u.prefix))
			if err != nil {
				t.Fatal(err)
			}
			look := sharedCluster(t) // reads L's value
			c2 := sharedCluster(t)
			c2.AddHook(u.lose(t, y2))
			reserved2, turn2 := make(chan struct{}), make(chan struct{})
			c2.AddHook(&callModeHook{after: true, mode: "1", key: u.lkey, do: func() { close(reserved2) }})
			c2.AddHook(&callModeHook{mode: "2", key: u.lkey, do: func() {
				select {
				case <-turn2:
				case <-time.After(10 * time.Second):
				}
			}})
			s2, err := redisstore.New(c2, redisstore.WithClock(m.clk), redisstore.WithPrefix(u.prefix))
			if err != nil {
				t.Fatal(err)
			}
			var d2 []algorithms.Decision
			var err2 error
			returned2 := make(chan struct{})
			c1 := sharedCluster(t)
			c1.AddHook(u.lose(t, y1))
			c1.AddHook(&callModeHook{after: true, mode: "1", key: u.lkey, do: func() {
				for range 16 {
					d, err := crossed.Take(ctx, L, z)
					if diff := m.compare("crossed", d, err, true, L, z); diff != "" {
						t.Error(diff)
						return
					}
				}
				go func() {
					defer close(returned2)
					d2, err2 = s2.Take(ctx, L, y2)
				}()
				select {
				case <-reserved2:
				case <-returned2:
				case <-time.After(10 * time.Second):
				}
				// 18 reservations of L, 16 records: T1's and the first
				// admitted one's are dropped.
				v, err := look.Get(ctx, u.lkey).Result()
				if n := strings.Count(v, "|"); err != nil || n != 16 {
					t.Errorf("L's value after 18 reservations holds %d records (%v); want 16, the cap", n, err)
				}
			}})
			s1, err := redisstore.New(c1, redisstore.WithClock(m.clk), redisstore.WithPrefix(u.prefix))
			if err != nil {
				t.Fatal(err)
			}
			take := m.taker(u.other, "other")
			two := L
			two.Cost = 2
			take(c.prior, two)
			m.clk.t = m.base.Add(61*time.Second + time.Millisecond)
			d1, err1 := s1.Take(ctx, L, y1)
			close(turn2)
			select {
			case <-returned2:
			case <-time.After(10 * time.Second):
				t.Fatal("T2 did not return after its turn to undo")
			}
			for i, r := range []struct {
				d   []algorithms.Decision
				err error
				y   algorithms.Check
			}{{d1, err1, y1}, {d2, err2, y2}} {
				if diff := m.compare("T"+string(rune('1'+i)), r.d, r.err, true, L, r.y); diff != "" {
					t.Fatal(diff)
				}
				if !r.d[0].Allowed || r.d[1].Allowed {
					t.Fatalf("T%d = %+v; want L passing and y%d denied", i+1, r.d, i+1)
				}
			}
			take(31*time.Second, L)
			goesOnAsModel(take, L)
		})
	}
}
