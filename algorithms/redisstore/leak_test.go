package redisstore_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

// redisDials are go-redis's goroutines dialing for a pool, which may
// outlive the client's Close: one started for a call (in queuedNewConn)
// dials (dialConn) with a context of its own, which neither the caller's
// end nor Close cancels, up to DialerRetries (5) times with
// DialerRetryTimeout (100ms) between, about 0.4s against a Redis that
// refuses connections, longer when a dial waits out DialTimeout; one
// probing a pool whose dials all failed (tryDial) sleeps a second between
// probes. goleak's own wait is about 0.43s (go-redis v9.23.0, goleak
// v1.3.0). A goroutine of ours waiting for such a dial (in queuedNewConn
// or above) is not one of them.
var redisDials = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).dialConn"),
	goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"),
}

// redisDialsWait bounds how long verifyNone waits for go-redis's dials
// to end.
const redisDialsWait = 5 * time.Second

// verifyNone is goleak.VerifyNone(t, opts...), except that go-redis's
// dialing goroutines (redisDials) are given up to redisDialsWait to end.
// Every other goroutine is checked as goleak.VerifyNone checks it, first:
// one of ours that outlives what it should is reported as before.
func verifyNone(t *testing.T, opts ...goleak.Option) {
	t.Helper()
	if err := goleak.Find(append(opts[:len(opts):len(opts)], redisDials...)...); err != nil {
		t.Error(err)
		return
	}
	deadline := time.Now().Add(redisDialsWait)
	for {
		err := goleak.Find(opts...) // waits about 0.43s before it reports
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("go-redis's dials still running %s after the check: %v", redisDialsWait, err)
			return
		}
	}
}
