package redisstore

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// TestMarkerLifetime pins the bound markerLifetime takes from a cluster
// client's options (as go-redis v9 leaves them: ClusterOptions.init and
// its node clients' Options.init) and from the call's deadline: the time
// left to the deadline plus what may still be sent after it, or, without
// one (or when shorter), the client's attempts each within its pool wait,
// dials, handshake (4 round trips), write and read, the backoffs between
// them; plus the margin of a second, at most a minute.
func TestMarkerLifetime(t *testing.T) {
	const ms = time.Millisecond
	noMaint := &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	// short is examples/redis's client: 100 ms timeouts, the context
	// bounding the I/O, and no maintenance notifications (whose relaxed
	// timeout, 10 s, would bound a read or write otherwise).
	short := redis.ClusterOptions{ContextTimeoutEnabled: true, DialTimeout: 100 * ms, ReadTimeout: 100 * ms,
		WriteTimeout: 100 * ms, MaintNotificationsConfig: noMaint}
	// shortAttempt: pool 100+1000 ms (ReadTimeout + 1 s), dial 5 tries of
	// 100 ms and 4 pauses of 100 ms, handshake 4×200 ms, write and read.
	shortAttempt := 1100*ms + 900*ms + 800*ms + 200*ms
	with := func(o redis.ClusterOptions, f func(*redis.ClusterOptions)) redis.ClusterOptions {
		f(&o)
		return o
	}
	for _, tc := range []struct {
		name     string
		opt      redis.ClusterOptions
		deadline time.Duration // 0: none; below 0: passed
		want     time.Duration
	}{
		// Default options: reads and writes of 10 s (the relaxed
		// timeout), pools of 6 s, dials of 5×5 s + 4×100 ms, 4
		// attempts: minutes, so the minute; under a deadline, with
		// ContextTimeoutEnabled off, a handshake (80 s) and a write may
		// follow it: the minute too.
		{"defaults", redis.ClusterOptions{}, 0, time.Minute},
		{"defaults/deadline", redis.ClusterOptions{}, 250 * ms, time.Minute},
		// ContextTimeoutEnabled: nothing is sent after the deadline.
		{"defaults/ContextTimeoutEnabled/deadline", redis.ClusterOptions{ContextTimeoutEnabled: true}, 250 * ms, 1250 * ms},
		{"defaults/ContextTimeoutEnabled/deadline_passed", redis.ClusterOptions{ContextTimeoutEnabled: true}, -time.Second, time.Second},
		{"defaults/ContextTimeoutEnabled/deadline_far", redis.ClusterOptions{ContextTimeoutEnabled: true}, time.Hour, time.Minute},
		// Short timeouts: 4 attempts and 3 backoffs of up to 1 s.
		{"short", short, 0, 4*shortAttempt + 3*time.Second + time.Second},
		{"short/deadline", short, 250 * ms, 1250 * ms},
		{"short/deadline_far", short, 30 * time.Second, 4*shortAttempt + 3*time.Second + time.Second},
		// ContextTimeoutEnabled off: after the deadline, a handshake
		// under way (4×200 ms) and the write (100 ms).
		{"short/ContextTimeoutEnabled_off/deadline", with(short, func(o *redis.ClusterOptions) { o.ContextTimeoutEnabled = false }),
			250 * ms, 250*ms + 900*ms + time.Second},
		// Writes free of any deadline (-2): even ContextTimeoutEnabled
		// cannot stop one after the deadline.
		{"short/deadline_free_writes", with(short, func(o *redis.ClusterOptions) { o.WriteTimeout = -2 }), 250 * ms, time.Minute},
		// Node clients retrying too (MaxRetries 2): 3 tries per node, each
		// handshake command tried 3 times, up to 50 ms apart.
		{"short/node_retries", with(short, func(o *redis.ClusterOptions) {
			o.MaxRetries, o.MaxRedirects, o.MaxRetryBackoff = 2, 1, 50*ms
		}), 0, func() time.Duration {
			attempt := 1100*ms + 900*ms + 4*(3*200*ms+2*50*ms) + 200*ms
			node := 3*attempt + 2*50*ms
			return 2*node + 50*ms + time.Second
		}()},
		// The relaxed timeout of maintenance notifications (RESP3 only).
		{"short/maintenance", with(short, func(o *redis.ClusterOptions) {
			o.MaintNotificationsConfig = &maintnotifications.Config{RelaxedTimeout: 300 * ms}
		}), 0, 4*(1100*ms+900*ms+4*600*ms+600*ms) + 3*time.Second + time.Second},
		{"short/maintenance/RESP2", with(short, func(o *redis.ClusterOptions) {
			o.MaintNotificationsConfig, o.Protocol = nil, 2
		}), 0, 4*shortAttempt + 3*time.Second + time.Second},
		// What the options do not bound: the minute, without a deadline.
		{"short/no_read_timeout", with(short, func(o *redis.ClusterOptions) { o.ReadTimeout = -1 }), 0, time.Minute},
		{"short/no_read_timeout/deadline", with(short, func(o *redis.ClusterOptions) { o.ReadTimeout = -1 }), 2 * time.Second, 3 * time.Second},
		{"short/OnConnect", with(short, func(o *redis.ClusterOptions) {
			o.OnConnect = func(context.Context, *redis.Conn) error { return nil }
		}), 0, time.Minute},
		{"short/OnConnect/deadline", with(short, func(o *redis.ClusterOptions) {
			o.OnConnect = func(context.Context, *redis.Conn) error { return nil }
		}), 250 * ms, 1250 * ms},
		{"short/DialerRetryBackoff", with(short, func(o *redis.ClusterOptions) {
			o.DialerRetryBackoff = func(int) time.Duration { return 0 }
		}), 0, time.Minute},
		{"short/dial_queue", with(short, func(o *redis.ClusterOptions) { o.MaxConcurrentDials, o.PoolSize = 1, 10 }), 0, time.Minute},
		{"short/no_dial_timeout", with(short, func(o *redis.ClusterOptions) { o.DialTimeout = -1 }), 0, time.Minute},
		{"short/redirects_overflow", with(short, func(o *redis.ClusterOptions) { o.MaxRedirects = math.MaxInt }), 0, time.Minute},
		{"short/retries_overflow", with(short, func(o *redis.ClusterOptions) { o.MaxRetries = math.MaxInt }), 0, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := tc.opt
			opt.Addrs = []string{"127.0.0.1:1"} // never dialled: only the options are read
			c := redis.NewClusterClient(&opt)
			defer c.Close()
			b := resendBoundOf(c.Options())
			now := time.Now()
			ctx := context.Background()
			if tc.deadline != 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, now.Add(tc.deadline))
				defer cancel()
			}
			if got := b.markerLifetime(ctx, now); got != tc.want {
				t.Errorf("markerLifetime = %v, want %v (bound %+v)", got, tc.want, b)
			}
		})
	}
	// Options not read (a client other than a *redis.ClusterClient): the
	// minute.
	if got := (resendBound{}).markerLifetime(context.Background(), time.Now()); got != time.Minute {
		t.Errorf("markerLifetime of unknown options = %v, want a minute", got)
	}
}
