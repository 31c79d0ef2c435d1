package redisstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// TestDenyCacheBounded: however many keys are denied, the cache holds at most
// its size, and expired entries make room for new ones.
func TestDenyCacheBounded(t *testing.T) {
	c := newDenyCache(10)
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Second}
	now := time.Unix(1000, 0)
	denied := []algorithms.Decision{{Limit: 1, RetryAfter: time.Second}}
	for i := range 1000 {
		c.learn(denied, []algorithms.Check{{Spec: spec, Key: fmt.Sprint(i)}}, now, now, 0)
		if len(c.m) > c.size {
			t.Fatalf("after %d denials the cache holds %d entries, more than its size %d", i+1, len(c.m), c.size)
		}
	}
	now = now.Add(2 * time.Second) // every entry has expired
	c.learn(denied, []algorithms.Check{{Spec: spec, Key: "new"}}, now, now, 0)
	if _, ok := c.m[denyKey{spec, "new"}]; !ok || len(c.m) != 1 {
		t.Fatalf("after expiry the cache holds %d entries (new one cached: %v), want just the new one", len(c.m), ok)
	}
	var dst [1]algorithms.Decision
	if !c.answer(dst[:], []algorithms.Check{{Spec: spec, Key: "new"}}, now.Add(time.Second/2)) {
		t.Fatal("a live denial was not answered")
	}
	if dst[0].Allowed || dst[0].RetryAfter != time.Second/2 {
		t.Fatalf("cached answer = %+v, want denied with RetryAfter 500ms", dst[0])
	}
	if c.answer(dst[:], []algorithms.Check{{Spec: spec, Key: "new"}}, now.Add(time.Second)) {
		t.Fatal("a denial was answered after its RetryAfter")
	}
}

// sentHook records when the first command left for Redis.
type sentHook struct {
	redistest.PassHooks
	mu   sync.Mutex
	sent time.Time
}

func (h *sentHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.mu.Lock()
		if h.sent.IsZero() {
			h.sent = time.Now()
		}
		h.mu.Unlock()
		return next(ctx, cmd)
	}
}

// TestDenyCacheDatesBeforeTheCall: on the server's clock, Redis decides at
// an instant between sending the call and reading the reply, and a denial's
// RetryAfter counts from there; the cache must date the denial no later
// than the send (dated at the reply, it would deny for up to a round trip
// after Redis admits again).
func TestDenyCacheDatesBeforeTheCall(t *testing.T) {
	srv := redistest.New(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	s, err := New(client, WithDenyCache(4))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	check := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: "k"}
	if _, err := s.Take(ctx, check); err != nil {
		t.Fatal(err)
	}
	hook := &sentHook{}
	client.AddHook(hook)
	d, err := s.Take(ctx, check)
	if err != nil || d[0].Allowed {
		t.Fatalf("second Take = %+v, %v; want denied", d, err)
	}
	e, ok := s.deny.m[denyKey{check.Spec, check.Key}]
	if !ok {
		t.Fatal("the denial was not cached")
	}
	if e.at.After(hook.sent) {
		t.Fatalf("the cached denial is dated %s after the call was sent: the cache would outlast Redis's RetryAfter", e.at.Sub(hook.sent))
	}
}

// delayHook holds every command back for delay before sending it: the
// latency of a slow link to Redis.
type delayHook struct {
	redistest.PassHooks
	delay time.Duration
}

func (h delayHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		time.Sleep(h.delay) // the trip to Redis, not test time passing
		return next(ctx, cmd)
	}
}

// TestDenyCacheNeverReportsShorterWaits: a cached denial's RetryAfter is
// never shorter than the one Redis would report at the same moment (dated
// at the send, the waits it reports were short by the trip to Redis: a
// client retrying after them would be denied). Redis's own RetryAfter is
// read through a store without cache on a fast link, just before the
// cached answer; the cache's store has a slow link.
func TestDenyCacheNeverReportsShorterWaits(t *testing.T) {
	srv := redistest.New(t)
	slow := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer slow.Close()
	fast := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer fast.Close()
	cached, err := New(slow, WithDenyCache(4))
	if err != nil {
		t.Fatal(err)
	}
	direct, err := New(fast)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	check := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: "k"}
	if d, err := cached.Take(ctx, check); err != nil || !d[0].Allowed {
		t.Fatalf("first Take = %+v, %v; want admitted", d, err)
	}
	if _, err := direct.Take(ctx, check); err != nil { // opens the fast client's connection
		t.Fatal(err)
	}
	slow.AddHook(delayHook{delay: 30 * time.Millisecond})
	if d, err := cached.Take(ctx, check); err != nil || d[0].Allowed {
		t.Fatalf("second Take = %+v, %v; want denied (and cached)", d, err)
	}
	sent := time.Now()
	d, err := direct.Take(ctx, check)
	if err != nil || d[0].Allowed {
		t.Fatalf("Redis's Take = %+v, %v; want denied", d, err)
	}
	redisWait := d[0].RetryAfter
	c, err := cached.Take(ctx, check)
	answered := time.Now()
	if err != nil || c[0].Allowed {
		t.Fatalf("cached Take = %+v, %v; want denied", c, err)
	}
	// Redis decided after sent: at answered its wait is at least
	// redisWait - (answered - sent).
	if floor := redisWait - answered.Sub(sent); c[0].RetryAfter < floor {
		t.Fatalf("cached RetryAfter %s, shorter than Redis's %s by %s", c[0].RetryAfter, floor, floor-c[0].RetryAfter)
	}
}
