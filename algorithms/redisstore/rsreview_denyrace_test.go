package redisstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// afterReplyHook runs do once, on the goroutine of the first script call
// (FCALL, EVALSHA, EVAL) made after arm, once Redis has replied to it. An
// error do returns replaces the call's reply: a reply lost on the way back.
type afterReplyHook struct {
	redistest.PassHooks
	mu    sync.Mutex
	armed bool
	do    func() error
}

func (h *afterReplyHook) arm(do func() error) {
	h.mu.Lock()
	h.armed, h.do = true, do
	h.mu.Unlock()
}

func (h *afterReplyHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if n := cmd.Name(); n == "fcall" || n == "evalsha" || n == "eval" {
			h.mu.Lock()
			do := h.do
			if !h.armed {
				do = nil
			}
			h.armed, h.do = false, nil
			h.mu.Unlock()
			if do != nil {
				if derr := do(); derr != nil {
					err = derr
					cmd.SetErr(err)
				}
			}
		}
		return err
	}
}

// afterReplyDenyCacheStore returns a store with a deny cache of 100 on a
// client of its own with an afterReplyHook, under a prefix of its own, on
// an injected clock.
func afterReplyDenyCacheStore(t *testing.T) (*redisstore.Store, *afterReplyHook, *algotest.Clock) {
	t.Helper()
	client := newClient(t)
	hook := &afterReplyHook{}
	client.AddHook(hook)
	clk := algotest.NewClock(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
	s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)), redisstore.WithClock(clk), redisstore.WithDenyCache(100))
	if err != nil {
		t.Fatal(err)
	}
	return s, hook, clk
}

// TestDenyCacheForgetDuringTake: this process gives back the unit of an
// admitted Take while another Take of the key is in flight, decided
// (denied) by Redis before the give-back. The give-back drops the cache's
// entries for the key before the denied Take caches its denial, which then
// would stand for its RetryAfter (an hour here) although Redis admits at
// once. A denial decided before this process's give-back, refund or
// admitted Take of a key is not cached: the next Take goes to Redis and
// is admitted, as it is without the deny cache.
func TestDenyCacheForgetDuringTake(t *testing.T) {
	s, hook, _ := afterReplyDenyCacheStore(t)
	ctx := context.Background()
	check := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: "k"}
	first, err := s.Take(ctx, check)
	if err != nil || !first[0].Allowed {
		t.Fatalf("first Take = %+v, %v; want admitted", first, err)
	}
	var gerr error
	hook.arm(func() error {
		// Redis has denied the second Take; before it returns, the first
		// one's unit is given back.
		gerr = s.GiveBack(ctx, make([]algorithms.Refunded, 1), []algorithms.Check{check}, first, 0)
		return nil
	})
	second, err := s.Take(ctx, check)
	if err != nil || second[0].Allowed {
		t.Fatalf("second Take = %+v, %v; want denied", second, err)
	}
	if gerr != nil {
		t.Fatal(gerr)
	}
	third, err := s.Take(ctx, check)
	if err != nil {
		t.Fatal(err)
	}
	if !third[0].Allowed {
		t.Fatalf("Take after the give-back = %+v, want admitted (Redis holds the unit given back)", third[0])
	}
}
