package redisstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// lateKey marks the context of the call a lateHook holds.
type lateKey struct{}

// lateHook holds the first command of a call on a context marked with
// lateKey (name, or any script call: fcall, evalsha, eval): it cancels the
// call's context, so that its caller stops waiting and returns, and sends
// the command only once release is closed, on the context without its
// cancellation: the command was on its way when the caller gave up, and
// Redis runs it late (a busy server, a slow link). sent is closed once it
// has been answered.
type lateHook struct {
	redistest.PassHooks
	name          string
	cancel        context.CancelFunc
	release, sent chan struct{}
}

func (h *lateHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if ctx.Value(lateKey{}) == nil || !strings.EqualFold(cmd.Name(), h.name) {
			return next(ctx, cmd)
		}
		h.cancel()
		select {
		case <-h.release:
		case <-time.After(10 * time.Second): // a failure bound
		}
		err := next(context.WithoutCancel(ctx), cmd)
		close(h.sent)
		return err
	}
}

// TestDenyCacheForgetsALateAbandonedGiveBack: a give-back (GiveBack,
// Refund) or Reset whose caller's context ends while its command is on
// its way returns the context's error, and the store forgets the key's
// cached denials then; Redis runs the command later all the same. A Take
// denied meanwhile, before Redis ran it, was cached (nothing forgot the
// key after the Take's call began); once the abandoned call has run, Redis
// admits the key, so the cache must not deny it: the store forgets the
// key again when the abandoned call ends (the store's goroutine, on a
// client without ContextTimeoutEnabled, sees it end). Before, the cached
// denial stood until its RetryAfter (an hour here: the injected clock
// does not move), and this process denied locally, with no round trip,
// what Redis admits. The cache never admits: the Take after the late
// call goes to Redis.
func TestDenyCacheForgetsALateAbandonedGiveBack(t *testing.T) {
	srv := redistest.New(t)
	fw := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: "k"}
	lq := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Hour}, Key: "q"}
	for _, tc := range []struct {
		name  string
		check algorithms.Check
		cmd   string // the command held
		give  func(ctx context.Context, s *Store, c algorithms.Check, d algorithms.Decision) error
	}{
		{"GiveBack", fw, "fcall", func(ctx context.Context, s *Store, c algorithms.Check, d algorithms.Decision) error {
			return s.GiveBack(ctx, make([]algorithms.Refunded, 1), []algorithms.Check{c}, []algorithms.Decision{d}, 0)
		}},
		{"Refund", lq, "fcall", func(ctx context.Context, s *Store, c algorithms.Check, d algorithms.Decision) error {
			return s.Refund(ctx, make([]algorithms.Refunded, 1), []algorithms.Check{c}, []algorithms.Decision{d}, 0)
		}},
		{"Reset", fw, "del", func(ctx context.Context, s *Store, c algorithms.Check, _ algorithms.Decision) error {
			return s.Reset(ctx, c)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := redis.NewClient(&redis.Options{Addr: srv.Addr})
			defer client.Close()
			h := &lateHook{name: tc.cmd, release: make(chan struct{}), sent: make(chan struct{})}
			client.AddHook(h)
			clk := algotest.NewClock(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
			s, err := New(client, WithClock(clk), WithDenyCache(16), WithPrefix("late-"+tc.name))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			take := func() algorithms.Decision {
				t.Helper()
				d, err := s.Take(ctx, tc.check)
				if err != nil {
					t.Fatal(err)
				}
				return d[0]
			}
			d := take()
			if !d.Allowed {
				t.Fatalf("first Take = %+v, want admitted", d)
			}
			if d2 := take(); d2.Allowed {
				t.Fatalf("second Take = %+v, want denied (the limit is 1)", d2)
			}

			gctx, cancel := context.WithCancel(context.WithValue(ctx, lateKey{}, true))
			defer cancel()
			h.cancel = cancel
			if err := tc.give(gctx, s, tc.check, d); err != context.Canceled {
				t.Fatalf("%s abandoned by its caller = %v, want context.Canceled", tc.name, err)
			}
			// Redis has not run it yet: denied, and cached.
			if d3 := take(); d3.Allowed || d3.RetryAfter < time.Minute {
				t.Fatalf("Take before the abandoned %s ran = %+v, want denied for about an hour", tc.name, d3)
			}
			close(h.release)
			select {
			case <-h.sent:
			case <-time.After(10 * time.Second):
				t.Fatalf("the abandoned %s was not sent", tc.name)
			}
			s.inflight.Wait() // the abandoned call's goroutine has ended

			peek := make([]algorithms.Decision, 1)
			if err := s.Peek(ctx, peek, []algorithms.Check{tc.check}); err != nil || !peek[0].Allowed {
				t.Fatalf("Peek after the abandoned %s ran = %+v, %v; want Redis to admit", tc.name, peek[0], err)
			}
			if d4 := take(); !d4.Allowed {
				t.Errorf("Take after the abandoned %s ran at Redis = %+v; Redis admits it (Peek %+v), the deny cache denied it", tc.name, d4, peek[0])
			}
		})
	}
}
