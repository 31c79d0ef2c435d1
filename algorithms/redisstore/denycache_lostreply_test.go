package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestDenyCacheForgetsOnLostReply: a Take whose reply is lost may have
// been admitted by Redis, and its consumption makes the waits of the
// key's cached denials (another cost's) too short. The cache must not
// answer with them: a token bucket of 1 per second, burst 10, emptied,
// then a cost-5 Take denied for 5 s and cached; a second later a cost-1
// Take is admitted by Redis but its reply is lost. Redis now denies the
// cost-5 Take for 5 s; the cache answered 4 s, and a client retrying then
// was denied again.
func TestDenyCacheForgetsOnLostReply(t *testing.T) {
	s, hook, clk := afterReplyDenyCacheStore(t)
	ctx := context.Background()
	spec := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1, Window: time.Second, Burst: 10}
	take := func(cost int64) ([]algorithms.Decision, error) {
		return s.Take(ctx, algorithms.Check{Spec: spec, Key: "k", Cost: cost})
	}
	if d, err := take(10); err != nil || !d[0].Allowed {
		t.Fatalf("Take(10) = %+v, %v; want admitted", d, err)
	}
	if d, err := take(5); err != nil || d[0].Allowed || d[0].RetryAfter != 5*time.Second {
		t.Fatalf("Take(5) = %+v, %v; want denied for 5s", d, err)
	}
	clk.Advance(time.Second)
	hook.arm(func() error { return errors.New("read: connection reset by peer") })
	if _, err := take(1); err == nil {
		t.Fatal("Take(1) with its reply lost returned no error")
	}
	d, err := take(5)
	if err != nil {
		t.Fatal(err)
	}
	if d[0].Allowed || d[0].RetryAfter < 5*time.Second {
		t.Fatalf("Take(5) after the lost reply = %+v, want denied for 5s (Redis admitted the cost-1 Take)", d[0])
	}
}
