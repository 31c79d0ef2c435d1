package redisstore_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// beforeUndoHook runs race once, before the first undo (script mode 2)
// whose first key is key is sent.
type beforeUndoHook struct {
	redistest.PassHooks
	key  string
	race func()
	once sync.Once
	hit  atomic.Bool
}

func (h *beforeUndoHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if key, mode, ok := fcallMode(cmd); ok && key == h.key && mode == "2" {
			h.once.Do(func() { h.race(); h.hit.Store(true) })
		}
		return next(ctx, cmd)
	}
}

// TestClusterUndoRaisedBelowZero: a cross-slot Take reserves 8 units of x
// (a Spec of 5 judged at 10) and loses y's race; before its undo, another
// instance resets x and takes 3 at the Spec's limit. The undo takes the
// reservation's 8 back from a count of 3: it leaves 0, never a negative
// count (which no later call could read: the key would fail every Take
// as a value the store did not write), and a Take of 5 at the Spec's
// limit is then admitted with nothing left, as on a fresh key. No other
// test broke when lua/cluster.lua's undoWindow lost its floor at 0.
func TestClusterUndoRaisedBelowZero(t *testing.T) {
	for _, kind := range []algorithms.Kind{algorithms.FixedWindow, algorithms.SlidingWindow} {
		t.Run(string(kind), func(t *testing.T) {
			race := newLostRace(t)
			ctx := context.Background()
			spec := algorithms.Spec{Algorithm: kind, Limit: 5, Window: time.Hour}
			x := algorithms.Check{Spec: spec, Key: "user-1", Limit: 10, Cost: 8}
			abbr := map[algorithms.Kind]string{algorithms.FixedWindow: "fw", algorithms.SlidingWindow: "sw"}[kind]
			undo := &beforeUndoHook{key: race.prefix + ":{user-1}:" + abbr + ":5:3600000000000:0:0:0", race: func() {
				if err := race.other.Reset(ctx, algorithms.Check{Spec: spec, Key: "user-1"}); err != nil {
					t.Errorf("Reset(x) before the undo: %v", err)
				}
				if d, err := race.other.Take(ctx, algorithms.Check{Spec: spec, Key: "user-1", Cost: 3}); err != nil || !d[0].Allowed {
					t.Errorf("Take(x, 3) before the undo = %+v, %v", d, err)
				}
			}}
			client := sharedCluster(t)
			client.AddHook(race.hook)
			client.AddHook(undo)
			s, err := redisstore.New(client, redisstore.WithClock(race.clk), redisstore.WithPrefix(race.prefix))
			if err != nil {
				t.Fatal(err)
			}
			d, err := s.Take(ctx, x, race.y)
			if err != nil {
				t.Fatal(err)
			}
			if !race.hook.hit.Load() || !undo.hit.Load() {
				t.Fatalf("the race ran %v, the undo of x %v; want both", race.hook.hit.Load(), undo.hit.Load())
			}
			if d[1].Allowed {
				t.Fatalf("Take(x, y) = %+v, want y denied", d)
			}
			got, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "user-1", Cost: 5})
			if err != nil || !got[0].Allowed || got[0].Remaining != 0 {
				t.Fatalf("after the undo, Take(x, 5) = %+v, %v; want admitted with 0 left (the undo leaves x at 0)", got, err)
			}
		})
	}
}
