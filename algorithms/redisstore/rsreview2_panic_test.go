package redisstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// delPanicHook panics in a DEL of a key holding "{boom}", as a client's
// hook (tracing, metrics) with a bug does.
type delPanicHook struct{ redistest.PassHooks }

func (delPanicHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if args := cmd.Args(); cmd.Name() == "del" && len(args) > 1 {
			if key, _ := args[1].(string); strings.Contains(key, "{boom}") {
				panic("hook bug in DEL")
			}
		}
		return next(ctx, cmd)
	}
}

// recovered runs f and returns what it panicked with, or nil.
func recovered(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

// TestRSReview2ResetHookPanicReachesCaller: a Reset whose DEL panics in a
// client hook panics on its caller's goroutine, which waits for it, as a
// Take's call does (TestBreakerProbePanics): on a client that does not
// bound its I/O by the context, the DEL runs on a goroutine of the
// store's own under the default timeout, and a panic there crashed the
// process. The store goes on (a Take after it succeeds), and Close ends
// every goroutine the store started.
func TestRSReview2ResetHookPanicReachesCaller(t *testing.T) {
	for _, ctxTimeouts := range []bool{false, true} {
		t.Run(clientCaseName("del", ctxTimeouts), func(t *testing.T) {
			defer verifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
			client := redis.NewClient(&redis.Options{Addr: sharedServer(t).Addr, ContextTimeoutEnabled: ctxTimeouts})
			client.AddHook(delPanicHook{})
			s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)))
			if err != nil {
				t.Fatal(err)
			}
			spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}
			p := recovered(func() { _ = s.Reset(context.Background(), algorithms.Check{Spec: spec, Key: "boom"}) })
			if p != "hook bug in DEL" {
				t.Errorf("Reset whose DEL panics in a hook recovered %v, want the hook's panic on the caller's goroutine", p)
			}
			if _, err := s.Take(context.Background(), algorithms.Check{Spec: spec, Key: "other"}); err != nil {
				t.Errorf("Take after the panic = %v", err)
			}
			_ = s.Close()
			_ = client.Close()
		})
	}
}

// splitPanicHook panics in a script call on a key whose hash tag starts
// with "{boom" in mode, the script's mode argument (3: the peek of a
// cross-slot Take's first phase; 1: its reservation).
type splitPanicHook struct {
	redistest.PassHooks
	mode int
}

func (h splitPanicHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if args := cmd.Args(); cmd.Name() == "fcall" && len(args) > 3 {
			nkeys, _ := args[2].(int)
			key, _ := args[3].(string)
			if i := 3 + nkeys + 3; strings.Contains(key, "{boom") && i < len(args) && args[i] == h.mode {
				panic("hook bug in a cross-slot call")
			}
		}
		return next(ctx, cmd)
	}
}

// TestRSReview2SplitTakeHookPanicReachesCaller: a cross-slot Take on a
// Cluster runs its per-slot calls on goroutines of the store's own,
// whatever the client; a client hook's panic in one of them panics on the
// Take's caller's goroutine (where net/http, say, recovers it), after the
// Take has undone the reservations the other slots made (y's unit is
// back), instead of crashing the process.
func TestRSReview2SplitTakeHookPanicReachesCaller(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: uses the shared Cluster")
	}
	pair := newSlotPair(t, "boom", "calm")
	for _, phase := range []struct {
		name string
		mode int
	}{{"peek", 3}, {"reserve", 1}} {
		for _, ctxTimeouts := range []bool{false, true} {
			t.Run(clientCaseName(phase.name, ctxTimeouts), func(t *testing.T) {
				defer verifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
				client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: pair.shared.Options().Addrs, ContextTimeoutEnabled: ctxTimeouts})
				client.AddHook(splitPanicHook{mode: phase.mode})
				prefix := uniquePrefix(t)
				clk := algotest.NewClock(algotest.Base)
				s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(clk))
				if err != nil {
					t.Fatal(err)
				}
				p := recovered(func() { _, _ = s.Take(context.Background(), pair.xc, pair.yc) })
				if p != "hook bug in a cross-slot call" {
					t.Errorf("cross-slot Take whose %s call panics in a hook recovered %v, want the hook's panic on the caller's goroutine", phase.name, p)
				}
				peeker, err := redisstore.New(pair.shared, redisstore.WithPrefix(prefix), redisstore.WithClock(clk))
				if err != nil {
					t.Fatal(err)
				}
				d := make([]algorithms.Decision, 1)
				if err := peeker.Peek(context.Background(), d, []algorithms.Check{pair.yc}); err != nil || d[0].Remaining != 10 {
					t.Errorf("y after the Take that panicked: %+v, %v; want 10 remaining (its reservation undone, or never made)", d[0], err)
				}
				_ = s.Close()
				_ = client.Close()
			})
		}
	}
}
