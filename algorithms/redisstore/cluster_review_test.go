package redisstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// callModeHook runs do once, before (after, when after is set: once it has
// returned) the first script call in the given mode ("1" reserve, "2"
// undo) whose keys include key.
type callModeHook struct {
	redistest.PassHooks
	mode, key string
	after     bool
	do        func()
	once      sync.Once
}

func (h *callModeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.after {
			err := next(ctx, cmd)
			h.match(cmd)
			return err
		}
		h.match(cmd)
		return next(ctx, cmd)
	}
}

func (h *callModeHook) match(cmd redis.Cmder) {
	if mode, keys, ok := scriptCall(cmd); ok && mode == h.mode {
		for _, k := range keys {
			if s, _ := k.(string); s == h.key {
				h.once.Do(h.do)
			}
		}
	}
}

// scriptCall returns the script mode of cmd (the argument after the two
// instant words: "0" plain or peek, "1" reserve, "2" undo) and its keys,
// when cmd is a call of the store's function or script in the wide layout.
func scriptCall(cmd redis.Cmder) (mode string, keys []any, ok bool) {
	args := cmd.Args()
	if n := cmd.Name(); len(args) <= 3 || (n != "fcall" && n != "evalsha" && n != "eval") {
		return "", nil, false
	}
	nk, _ := args[2].(int)
	if len(args) <= 3+nk+3 {
		return "", nil, false
	}
	return fmt.Sprint(args[3+nk+3]), args[3 : 3+nk], true
}

// TestClusterUndoWithMovingInjectedClock: with WithClock, the instances
// share a clock that moves (a replay, or a user's own clock). A cross-slot
// Take reserves a token_bucket key x, loses the race for y, and undoes x;
// between the reservation and the undo, another instance takes one unit of
// x three seconds later on the shared clock, when the bucket (1 per second,
// burst 2) had long been full again in the world without the reservation.
// The undo, made when the clock reads those three seconds, must leave x
// with that one unit taken: a cost-2 request right after is denied, as the
// memory store (which never reserved) denies it. (Before, the undo took
// the reservation's instant for its own and gave the unit back: a bucket
// full again, so x admitted 3 units at t0+3s.)
func TestClusterUndoWithMovingInjectedClock(t *testing.T) {
	client := sharedCluster(t)
	prefix := uniquePrefix(t)
	t0 := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	clk := algotest.NewClock(t0)
	other, err := redisstore.New(sharedCluster(t), redisstore.WithClock(clk), redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	x := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1, Window: time.Second, Burst: 2}, Key: "user-1"}
	y := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: "route-/login"}
	yKey := prefix + ":{route-/login}:fw:1:3600000000000:0:0:0"
	takeOther := func(c algorithms.Check) algorithms.Decision {
		d, err := other.Take(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return d[0]
	}
	var between algorithms.Decision
	client.AddHook(&callModeHook{mode: "1", key: yKey, do: func() {
		if d := takeOther(y); !d.Allowed { // y's last unit goes to the other instance
			t.Errorf("racing Take(y) = %+v", d)
		}
	}})
	client.AddHook(&afterReservationsHook{n: 2, do: func() {
		clk.Advance(3 * time.Second)
		between = takeOther(x)
	}})
	s, err := redisstore.New(client, redisstore.WithClock(clk), redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Take(ctx, x, y)
	if err != nil {
		t.Fatal(err)
	}
	if d[1].Allowed {
		t.Fatalf("Take(x, y) = %+v, want y denied (the race lost)", d)
	}
	if !between.Allowed || between.Remaining != 1 {
		t.Fatalf("Take(x) between the reservation and the undo = %+v, want admitted with Remaining 1", between)
	}
	// In the world without the reservation, x holds 1 token at t0+3s.
	got := takeOther(algorithms.Check{Spec: x.Spec, Key: x.Key, Cost: 2})
	want := algorithms.Decision{Limit: 2, Remaining: 1, RetryAfter: time.Second, ResetAfter: time.Second, NextAfter: time.Second}
	if got != want {
		t.Fatalf("Take(x, cost 2) after the undo = %+v, want %+v (one unit taken at t0+3s, as the memory store says)", got, want)
	}
}
