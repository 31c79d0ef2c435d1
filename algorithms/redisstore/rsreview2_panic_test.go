package redisstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
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
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), ignoreServerWaiter)
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
