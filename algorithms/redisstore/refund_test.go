package redisstore_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// TestRefundOneRoundTripAndDenyCache: a refund of several queue places is
// one script call, and a denial the deny cache holds for a refunded queue
// is dropped, so the place given back is used at once.
func TestRefundOneRoundTripAndDenyCache(t *testing.T) {
	srv := sharedServer(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	hook := &countHook{}
	client.AddHook(hook)
	clk := &manualClock{t: time.Date(2026, 11, 30, 7, 0, 10, 0, time.UTC)}
	s, err := redisstore.New(client, redisstore.WithClock(clk), redisstore.WithPrefix(uniquePrefix(t)), redisstore.WithDenyCache(16))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// One departure a second, at most one second of waiting: two places.
	queue := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: time.Second}
	a := algorithms.Check{Spec: queue, Key: "a"}
	b := algorithms.Check{Spec: queue, Key: "b"}
	if _, err := s.Take(ctx, a); err != nil {
		t.Fatal(err)
	}
	checks := []algorithms.Check{a, b}
	ds, err := s.Take(ctx, checks...) // a's second place (1 s), b's first
	if err != nil || !ds[0].Allowed || ds[0].Delay != time.Second {
		t.Fatalf("Take(a, b) = %+v, %v; want a admitted with Delay 1s", ds, err)
	}
	if d, err := s.Take(ctx, a); err != nil || d[0].Allowed {
		t.Fatalf("a's third Take = %+v, %v; want denied (the queue is full)", d, err)
	}
	hook.reset()
	clk.t = clk.t.Add(100 * time.Millisecond)
	if err := s.Refund(ctx, checks, ds, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if cmds, _ := hook.snapshot(); len(cmds) != 1 {
		t.Fatalf("a refund of two places sent %v, want one call", cmds)
	}
	d, err := s.Take(ctx, a)
	if err != nil || !d[0].Allowed || d[0].Delay != 900*time.Millisecond {
		t.Fatalf("a after the refund = %+v, %v; want admitted with Delay 900ms (the deny cache forgot a)", d, err)
	}
}

// loseReplies is a go-redis hook that, while on, lets a script call run on
// the server and then reports it failed, as when its reply is lost (a
// timeout, a connection reset after the call was sent).
type loseReplies struct{ on atomic.Bool }

func (h *loseReplies) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *loseReplies) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if h.on.Load() && err == nil {
			return errors.New("test: reply lost")
		}
		return err
	}
}

func (h *loseReplies) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestRefundFailedForgetsDenyCache: a refund whose call failed may still
// have given the place back (the script ran, its reply was lost), so the
// deny cache forgets the refunded keys whatever the outcome: a cached
// denial must not outlive a state Redis admits from.
func TestRefundFailedForgetsDenyCache(t *testing.T) {
	srv := sharedServer(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	lose := &loseReplies{}
	client.AddHook(lose)
	clk := &manualClock{t: time.Date(2026, 11, 30, 7, 0, 10, 0, time.UTC)}
	s, err := redisstore.New(client, redisstore.WithClock(clk), redisstore.WithPrefix(uniquePrefix(t)), redisstore.WithDenyCache(16))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	queue := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: time.Second}
	a := []algorithms.Check{{Spec: queue, Key: "a"}}
	if _, err := s.Take(ctx, a...); err != nil {
		t.Fatal(err)
	}
	ds, err := s.Take(ctx, a...) // the last place, departing at 1 s
	if err != nil || !ds[0].Allowed {
		t.Fatalf("a's second Take = %+v, %v; want admitted", ds, err)
	}
	if d, err := s.Take(ctx, a...); err != nil || d[0].Allowed {
		t.Fatalf("a's third Take = %+v, %v; want denied (the queue is full, now cached)", d, err)
	}
	clk.t = clk.t.Add(100 * time.Millisecond)
	lose.on.Store(true)
	if err := s.Refund(ctx, a, ds, 100*time.Millisecond); err == nil {
		t.Fatal("Refund with its reply lost: no error")
	}
	lose.on.Store(false)
	d, err := s.Take(ctx, a...)
	if err != nil || !d[0].Allowed || d[0].Delay != 900*time.Millisecond {
		t.Fatalf("a after the refund whose reply was lost = %+v, %v; want admitted with Delay 900ms, as Redis decides (the deny cache forgot a)", d, err)
	}
}
