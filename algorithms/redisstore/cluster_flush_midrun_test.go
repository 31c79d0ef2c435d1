package redisstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// flushBeforeUndoHook runs before once, before the first undo (script mode 2)
// the client sends, as a function or as a script.
type flushBeforeUndoHook struct {
	redistest.PassHooks
	before func()
	once   sync.Once
	hit    atomic.Bool
}

func (h *flushBeforeUndoHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if name := cmd.Name(); len(args) > 3 && (name == "fcall" || name == "evalsha" || name == "eval") {
			nk, _ := args[2].(int)
			if len(args) > 3+nk+3 && fmt.Sprint(args[3+nk+3]) == "2" {
				h.once.Do(func() { h.before(); h.hit.Store(true) })
			}
		}
		return next(ctx, cmd)
	}
}

// TestClusterFlushBetweenReservationAndUndo: the library (FUNCTION FLUSH)
// or, on the script fallback, the script cache (SCRIPT FLUSH) is flushed
// on every master between a cross-slot Take's reservations and the undo
// of the one that admitted (another instance took y's last unit between
// the phases). The undo, a call sent at most once, must load the library
// again (or EVAL on NOSCRIPT) and run once: the Take is denied, no error,
// and x's reserved units are given back.
func TestClusterFlushBetweenReservationAndUndo(t *testing.T) {
	shared := sharedCluster(t)
	ctx := context.Background()
	for _, mode := range []string{"functions", "script"} {
		t.Run(mode, func(t *testing.T) {
			race := newLostRace(t)
			opts := &redis.ClusterOptions{Addrs: clusterSrv.Addrs()}
			if mode == "script" {
				// A user that may not use functions, on every node (ACLs
				// are not shared in a cluster): the store runs the script.
				for _, n := range clusterSrv.Nodes {
					if _, err := n.Do("ACL", "SETUSER", "nofunctions", "on", "nopass", "~*", "&*", "+@all", "-function", "-fcall", "-fcall_ro"); err != nil {
						t.Fatal(err)
					}
				}
				opts.Username, opts.Password = "nofunctions", "any"
			}
			client := redis.NewClusterClient(opts)
			t.Cleanup(func() { _ = client.Close() })
			s, err := redisstore.New(client, redisstore.WithClock(race.clk), redisstore.WithPrefix(race.prefix))
			if err != nil {
				t.Fatal(err)
			}
			x := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Hour}, Key: "user-1", Cost: 2}
			if _, err := s.Take(ctx, algorithms.Check{Spec: x.Spec, Key: x.Key, Cost: 1}); err != nil {
				t.Fatal(err)
			}
			flush := &flushBeforeUndoHook{before: func() {
				err := shared.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
					if mode == "script" {
						return m.ScriptFlush(ctx).Err()
					}
					return m.FunctionFlush(ctx).Err()
				})
				if err != nil {
					t.Errorf("flush: %v", err)
				}
			}}
			client.AddHook(race.hook)
			client.AddHook(flush)
			d, err := s.Take(ctx, x, race.y)
			if !race.hook.hit.Load() || !flush.hit.Load() {
				t.Fatalf("race ran: %v, undo sent: %v (Take = %+v, %v)", race.hook.hit.Load(), flush.hit.Load(), d, err)
			}
			if err != nil || !d[0].Allowed || d[1].Allowed {
				t.Fatalf("Take(x, y) with the code flushed before the undo = %+v, %v; want x passing, y denied, no error", d, err)
			}
			after, err := race.other.Take(ctx, algorithms.Check{Spec: x.Spec, Key: x.Key, Cost: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := after[0].Remaining, int64(5-1-1); got != want {
				t.Fatalf("x after the undone reservation: a cost-1 Take leaves Remaining %d, want %d (the reservation's 2 units given back once)", got, want)
			}
		})
	}
}
