package redisstore_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// funcHook runs do in place of the call of script mode whose first key is
// key (do may call next to send it).
type funcHook struct {
	redistest.PassHooks
	key, mode string
	do        func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error
	hit       atomic.Bool
}

func (h *funcHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if key, mode, ok := fcallMode(cmd); ok && key == h.key && mode == h.mode {
			h.hit.Store(true)
			return h.do(ctx, cmd, next)
		}
		return next(ctx, cmd)
	}
}

// TestClusterCallerEndReloadsNoSlots: a call that fails because its
// caller cancelled it, or because its caller's deadline passed, says
// nothing of the cluster's nodes: the store must not have the client
// reload its slot map for it (one CLUSTER SLOTS per cancelled request, a
// storm of them when clients go away in numbers). A call that got no
// reply for any other reason must still reload it: a connection error, the
// store's own WithTimeout deadline, and a cross-slot undo that got no
// reply after the caller cancelled (the undo runs on the store's own
// context). Before the fix every context error reloaded: the cancelled
// reservation, the cancelled peek, the cancelled single-slot Take, the
// cancelled give-back and the caller's deadline each reloaded once.
func TestClusterCallerEndReloadsNoSlots(t *testing.T) {
	cs := newSlotPair(t, "kept", "ended")
	x, y, xc, yc, keyOf := cs.x, cs.y, cs.xc, cs.yc, cs.keyOf

	// The hooks below act on the first call they match; a call sent
	// again (a reservation that got no reply is: see runSplit) goes on.
	// cancelling fails the call, unsent, as the caller cancels it.
	cancelling := func(cancel context.CancelFunc) func(context.Context, redis.Cmder, redis.ProcessHook) error {
		var done atomic.Bool
		return func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
			if done.Swap(true) {
				return next(ctx, cmd)
			}
			cancel()
			<-ctx.Done()
			cmd.SetErr(ctx.Err())
			return ctx.Err()
		}
	}
	// reserved is closed once x's reservation has its reply;
	// cancellingAfterX cancels as cancelling does, after that: x's
	// reservation admitted, to be undone.
	// Each takes its subtest's channel when built. A call of an earlier
	// subtest's store still in flight (an abandoned call goes on in the
	// background) passes that subtest's hooks: reading the variables, it
	// closed the next subtest's channel early, and that subtest's own
	// call closed it again (a panic in CI).
	var (
		reserved      chan struct{}
		closeReserved func()
	)
	afterX := func() func(context.Context, redis.Cmder, redis.ProcessHook) error {
		closeReserved := closeReserved
		return func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
			err := next(ctx, cmd)
			closeReserved()
			return err
		}
	}
	cancellingAfterX := func(cancel context.CancelFunc) func(context.Context, redis.Cmder, redis.ProcessHook) error {
		var done atomic.Bool
		reserved := reserved
		return func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
			if done.Swap(true) {
				return next(ctx, cmd)
			}
			<-reserved
			cancel()
			<-ctx.Done()
			cmd.SetErr(ctx.Err())
			return ctx.Err()
		}
	}
	// stalling holds the call until its context ends (no reply).
	stallingOnce := func() func(context.Context, redis.Cmder, redis.ProcessHook) error {
		var done atomic.Bool
		return func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
			if done.Swap(true) {
				return next(ctx, cmd)
			}
			<-ctx.Done()
			cmd.SetErr(ctx.Err())
			return ctx.Err()
		}
	}
	// stalling holds every call until its context ends (no reply).
	stalling := func(ctx context.Context, cmd redis.Cmder, _ redis.ProcessHook) error {
		<-ctx.Done()
		cmd.SetErr(ctx.Err())
		return ctx.Err()
	}
	failing := func(err error) func(context.Context, redis.Cmder, redis.ProcessHook) error {
		return func(_ context.Context, cmd redis.Cmder, _ redis.ProcessHook) error {
			cmd.SetErr(err)
			return err
		}
	}
	type hookAt struct {
		key  string // x or y
		mode string
	}
	for _, tc := range []struct {
		name    string
		timeout time.Duration // WithTimeout; 0: none (not the default)
		// deadline is the caller's, if any
		deadline time.Duration
		// hooks: the calls failed, by key and mode; do gets the caller's cancel
		hooks   map[hookAt]func(cancel context.CancelFunc) func(context.Context, redis.Cmder, redis.ProcessHook) error
		giveY   bool // a give-back of x and y (per key) instead of a Take
		oneSlot bool // a Take of y alone
		reloads int64
	}{
		{name: "reservation_cancelled", hooks: map[hookAt]func(context.CancelFunc) func(context.Context, redis.Cmder, redis.ProcessHook) error{
			{y, "1"}: cancelling}},
		{name: "peek_cancelled", hooks: map[hookAt]func(context.CancelFunc) func(context.Context, redis.Cmder, redis.ProcessHook) error{
			{y, "3"}: cancelling}},
		{name: "one_slot_cancelled", oneSlot: true, hooks: map[hookAt]func(context.CancelFunc) func(context.Context, redis.Cmder, redis.ProcessHook) error{
			{y, "c"}: cancelling}},
		{name: "give-back_cancelled", giveY: true, hooks: map[hookAt]func(context.CancelFunc) func(context.Context, redis.Cmder, redis.ProcessHook) error{
			{x, "5"}: cancelling}},
		{name: "caller_deadline", deadline: 300 * time.Millisecond, timeout: time.Hour, hooks: map[hookAt]func(context.CancelFunc) func(context.Context, redis.Cmder, redis.ProcessHook) error{
			{y, "1"}: func(context.CancelFunc) func(context.Context, redis.Cmder, redis.ProcessHook) error {
				return stallingOnce()
			}}},
		// Reloads still.
		{name: "no_reply", reloads: 1, hooks: map[hookAt]func(context.CancelFunc) func(context.Context, redis.Cmder, redis.ProcessHook) error{
			{y, "1"}: func(context.CancelFunc) func(context.Context, redis.Cmder, redis.ProcessHook) error {
				return failing(io.EOF)
			}}},
		{name: "own_timeout", timeout: 300 * time.Millisecond, reloads: 1, hooks: map[hookAt]func(context.CancelFunc) func(context.Context, redis.Cmder, redis.ProcessHook) error{
			{y, "1"}: func(context.CancelFunc) func(context.Context, redis.Cmder, redis.ProcessHook) error { return stalling }}},
		{name: "undo_no_reply_after_cancel", reloads: 1, hooks: map[hookAt]func(context.CancelFunc) func(context.Context, redis.Cmder, redis.ProcessHook) error{
			{x, "1"}: func(context.CancelFunc) func(context.Context, redis.Cmder, redis.ProcessHook) error { return afterX() },
			{y, "1"}: cancellingAfterX,
			{x, "2"}: func(context.CancelFunc) func(context.Context, redis.Cmder, redis.ProcessHook) error {
				return failing(io.EOF)
			}}},
		{name: "undo_timeout_after_cancel", timeout: 300 * time.Millisecond, reloads: 1, hooks: map[hookAt]func(context.CancelFunc) func(context.Context, redis.Cmder, redis.ProcessHook) error{
			{x, "1"}: func(context.CancelFunc) func(context.Context, redis.Cmder, redis.ProcessHook) error { return afterX() },
			{y, "1"}: cancellingAfterX,
			{x, "2"}: func(context.CancelFunc) func(context.Context, redis.Cmder, redis.ProcessHook) error { return stalling }}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSrv.Addrs()})
			t.Cleanup(func() { _ = client.Close() })
			prefix := uniquePrefix(t)
			opts := []redisstore.Option{redisstore.WithPrefix(prefix), redisstore.WithClock(algotest.NewClock(algotest.Base)), redisstore.WithTimeout(tc.timeout)}
			s, err := redisstore.New(client, opts...)
			if err != nil {
				t.Fatal(err)
			}
			reserved = make(chan struct{})
			closeReserved = sync.OnceFunc(func() { close(reserved) })
			var reloads atomic.Int64
			redisstore.OnReload(s, func() { reloads.Add(1) })
			if _, err := s.Take(context.Background(), xc, yc); err != nil { // x's and y's connections made
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			if tc.deadline > 0 {
				ctx, cancel = context.WithTimeout(context.Background(), tc.deadline)
			}
			defer cancel()
			var hooks []*funcHook
			for at, do := range tc.hooks {
				h := &funcHook{key: keyOf(prefix, at.key), mode: at.mode, do: do(cancel)}
				client.AddHook(h)
				hooks = append(hooks, h)
			}
			switch {
			case tc.giveY:
				ds := []algorithms.Decision{{Allowed: true, Limit: 10, Remaining: 8, ResetAfter: time.Hour}, {Allowed: true, Limit: 10, Remaining: 9, ResetAfter: time.Hour}}
				out := make([]algorithms.Refunded, 2)
				err = s.GiveBack(ctx, out, []algorithms.Check{xc, yc}, ds, 0)
			case tc.oneSlot:
				_, err = s.Take(ctx, yc)
			default:
				_, err = s.Take(ctx, xc, yc)
			}
			for _, h := range hooks {
				if !h.hit.Load() {
					t.Fatalf("the call of mode %s of %s never ran (err %v)", h.mode, h.key, err)
				}
			}
			if err == nil {
				t.Fatal("the call succeeded; want an error")
			}
			if tc.reloads == 0 && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want the caller's context error", err)
			}
			// reloadSlots runs on the call's goroutine before it returns.
			if got := reloads.Load(); got != tc.reloads {
				t.Errorf("%s (err %v): the store had the client reload its slot map %d times, want %d", tc.name, err, got, tc.reloads)
			}
		})
	}
}
