package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
	client, hook := countedClient(t)
	s, clk := denyCacheStore(t, client)
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
	if err := s.Refund(ctx, make([]algorithms.Refunded, len(checks)), checks, ds, 100*time.Millisecond); err != nil {
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
	client := newClient(t)
	lose := &loseReplies{}
	client.AddHook(lose)
	s, clk := denyCacheStore(t, client)
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
	if err := s.Refund(ctx, make([]algorithms.Refunded, len(a)), a, ds, 100*time.Millisecond); err == nil {
		t.Fatal("Refund with its reply lost: no error")
	}
	lose.on.Store(false)
	d, err := s.Take(ctx, a...)
	if err != nil || !d[0].Allowed || d[0].Delay != 900*time.Millisecond {
		t.Fatalf("a after the refund whose reply was lost = %+v, %v; want admitted with Delay 900ms, as Redis decides (the deny cache forgot a)", d, err)
	}
}

// TestRefundExpiry: on the server's clock, a refund that moves a queue back
// shortens its key's expiry to the new state's ResetAfter (plus at most a
// millisecond), and one that empties the queue leaves a key that expires
// within a millisecond; WithMinTTL still holds after a refund.
func TestRefundExpiry(t *testing.T) {
	ctx := context.Background()
	queue := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 10 * time.Second}
	c := []algorithms.Check{{Spec: queue, Key: "k"}}
	for _, minTTL := range []time.Duration{0, time.Minute} {
		t.Run(fmt.Sprint("min_ttl=", minTTL), func(t *testing.T) {
			client := newClient(t)
			// take makes n places in a new store's queue and returns the
			// store, the last Take's decisions and when it returned, and
			// the queue's key.
			var first time.Time // before the first Take of the last take(n)
			take := func(n int) (*redisstore.Store, []algorithms.Decision, time.Time, string) {
				t.Helper()
				prefix := uniquePrefix(t)
				first = time.Now()
				s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithMinTTL(minTTL))
				if err != nil {
					t.Fatal(err)
				}
				var ds []algorithms.Decision
				var took time.Time
				for range n {
					if ds, err = s.Take(ctx, c...); err != nil {
						t.Fatal(err)
					}
					took = time.Now()
				}
				keys := keysUnder(t, client, prefix)
				if len(keys) != 1 {
					t.Fatalf("keys %v, want one", keys)
				}
				return s, ds, took, keys[0]
			}
			// A key gone reads as -2 (as expired at once).
			pttl := func(key string) time.Duration {
				t.Helper()
				d, err := client.PTTL(ctx, key).Result()
				if err != nil {
					t.Fatal(err)
				}
				return d
			}
			slack := time.Second // real time passing while the test runs

			s, ds, took, key := take(3)
			if err := s.Refund(ctx, make([]algorithms.Refunded, len(c)), c, ds, time.Since(took)); err != nil {
				t.Fatal(err)
			}
			// The queue now ends with the second place, 2 s after the
			// first Take's instant: the key expires within 2 s + 1 ms, not
			// 3 s, and no earlier than 2 s after that instant.
			hi := max(2*time.Second+time.Millisecond, minTTL)
			got, lo := pttl(key), max(2*time.Second-time.Since(first), minTTL-slack)
			if got > hi || got < lo {
				t.Errorf("expiry after refunding the last of three places: %v, want within [%v, %v]", got, lo, hi)
			}

			s, ds, _, key = take(1)
			if err := s.Refund(ctx, make([]algorithms.Refunded, len(c)), c, ds, 0); err != nil {
				t.Fatal(err)
			}
			hi, lo = max(time.Millisecond, minTTL), minTTL-slack
			if got := pttl(key); got > hi || (minTTL > 0 && got < lo) {
				t.Errorf("expiry after a refund emptied the queue: %v, want at most %v (at least %v with WithMinTTL)", got, hi, lo)
			}
		})
	}
}

// failKey is a go-redis hook that fails, without sending it, every command
// naming a key that contains part (a node that cannot be reached).
type failKey struct {
	part string
	on   atomic.Bool
}

func (h *failKey) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *failKey) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.on.Load() {
			for _, a := range cmd.Args() {
				if s, ok := a.(string); ok && strings.Contains(s, h.part) {
					err := errors.New("test: node unreachable")
					cmd.SetErr(err)
					return err
				}
			}
		}
		return next(ctx, cmd)
	}
}

func (h *failKey) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestRefundClusterKeysApart: on a Cluster each slot's keys are refunded by
// their own call, and a call that fails does not keep the others' places:
// the refund gives back what it can and returns the error.
func TestRefundClusterKeysApart(t *testing.T) {
	client := sharedCluster(t)
	fail := &failKey{part: "{user-2}"}
	client.AddHook(fail)
	clk := &manualClock{t: time.Date(2026, 11, 30, 7, 0, 10, 0, time.UTC)}
	s := clockedStore(t, client, clk)
	ctx := context.Background()
	queue := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 10 * time.Second}
	one := algorithms.Check{Spec: queue, Key: "user-1"}
	two := algorithms.Check{Spec: queue, Key: "user-2"}
	if _, err := s.Take(ctx, one, two); err != nil {
		t.Fatal(err)
	}
	checks := []algorithms.Check{one, two}
	ds, err := s.Take(ctx, checks...) // the last places of both, departing at 1 s
	if err != nil || !ds[0].Allowed || !ds[1].Allowed {
		t.Fatalf("Take = %+v, %v; want both admitted", ds, err)
	}
	clk.t = clk.t.Add(100 * time.Millisecond)
	fail.on.Store(true)
	if err := s.Refund(ctx, make([]algorithms.Refunded, len(checks)), checks, ds, 100*time.Millisecond); err == nil {
		t.Fatal("Refund with user-2's node unreachable: no error")
	}
	fail.on.Store(false)
	d, err := s.Take(ctx, one)
	if err != nil || !d[0].Allowed || d[0].Delay != 900*time.Millisecond {
		t.Errorf("user-1 after the refund = %+v, %v; want admitted with Delay 900ms (its place given back)", d, err)
	}
	d, err = s.Take(ctx, two)
	if err != nil || !d[0].Allowed || d[0].Delay != 1900*time.Millisecond {
		t.Errorf("user-2 after the refund = %+v, %v; want admitted with Delay 1.9s (its refund failed)", d, err)
	}
}

// TestRefundForeignValueWritesNothing: a queue key holding a value the
// store did not write fails the Refund, as it fails a Take, before any
// key is written: the other check's last place stays taken and the
// application's value is left as it was. (Before, the refund skipped the
// key, gave back the other place, and reported nothing of it.)
func TestRefundForeignValueWritesNothing(t *testing.T) {
	ctx := context.Background()
	admin := newClient(t)
	for name, client := range map[string]redis.UniversalClient{"function": newClient(t), "script": noFunctionsClient(t)} {
		t.Run(name, func(t *testing.T) {
			prefix := uniquePrefix(t)
			s, err := redisstore.New(client, redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			q := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Hour, MaxDelay: 10 * time.Hour}
			b := algorithms.Check{Spec: q, Key: "b"}
			app := algorithms.Check{Spec: q, Key: "app"}
			key := redisKeys(prefix, app)[0]
			if err := admin.Set(ctx, key, "application data", 0).Err(); err != nil {
				t.Fatal(err)
			}
			var last []algorithms.Decision
			for range 2 {
				if last, err = s.Take(ctx, b); err != nil {
					t.Fatal(err)
				}
			}
			checks := []algorithms.Check{app, b}
			ds := []algorithms.Decision{{Allowed: true}, last[0]}
			if err := s.Refund(ctx, make([]algorithms.Refunded, 2), checks, ds, 0); err == nil {
				t.Error("Refund with a foreign value: no error")
			}
			next, err := s.Take(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			if next[0].Delay < 2*time.Hour-time.Minute {
				t.Errorf("b's next arrival waits %v, want about 2h: its last place was given back", next[0].Delay)
			}
			if v, err := admin.Get(ctx, key).Result(); err != nil || v != "application data" {
				t.Errorf("the application's value: %q, %v", v, err)
			}
		})
	}
}
