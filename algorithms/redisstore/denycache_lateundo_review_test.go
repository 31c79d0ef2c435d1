package redisstore_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// TestDenyCacheForgetsALateAbandonedUndo: the cross-slot undo is a
// give-back too (it hands back a reservation's units), run on the store's
// own context (uctx, bounded by WithTimeout). On a client without
// ContextTimeoutEnabled, an undo still on its way at that deadline is
// abandoned: the Take fails, and the deny cache forgets its keys then. A
// Take of x denied before Redis runs the undo is cached; once the undo has
// run Redis admits x, and the cache must not deny it until its RetryAfter
// (an hour here), as TestDenyCacheForgetsALateAbandonedGiveBack requires
// of GiveBack, Refund and Reset.
func TestDenyCacheForgetsALateAbandonedUndo(t *testing.T) {
	cs := newSlotPair(t, "lateundo", "denier")
	x, y, xc, yc, keyOf := cs.x, cs.y, cs.xc, cs.yc, cs.keyOf
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSrv.Addrs()})
	t.Cleanup(func() { _ = client.Close() })
	prefix := uniquePrefix(t)
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix),
		redisstore.WithClock(algotest.NewClock(algotest.Base)),
		redisstore.WithDenyCache(16), redisstore.WithTimeout(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	// The state the test sets up, and the Peek that reads Redis's, go
	// through a store of the same client, prefix and clock whose timeout
	// is a failure bound (slowMachineTimeout): at 200ms a loaded machine
	// under -race can end those calls, which must decide. s's 200ms is
	// the deadline at which the cross-slot Take abandons its undo (the
	// point of the test); s is also the store whose deny cache is
	// checked, so the Takes that read it go through s.
	live, err := redisstore.New(client, redisstore.WithPrefix(prefix),
		redisstore.WithClock(algotest.NewClock(algotest.Base)), redisstore.WithTimeout(slowMachineTimeout))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	// x: 8 of 10 used (4 Takes of cost 2); y: 10 of 10 used.
	for range 4 {
		if d, err := live.Take(ctx, xc); err != nil || !d[0].Allowed {
			t.Fatalf("Take(x) = %+v, %v", d, err)
		}
	}
	for range 9 {
		if d, err := live.Take(ctx, yc); err != nil || !d[0].Allowed {
			t.Fatalf("Take(y) = %+v, %v", d, err)
		}
	}
	// Another process takes y's last unit between the split Take's peek
	// (which admits y) and y's reservation, which is then denied.
	other, err := redisstore.New(cs.shared, redisstore.WithPrefix(prefix), redisstore.WithClock(algotest.NewClock(algotest.Base)))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var yHeld atomic.Bool
	client.AddHook(&funcHook{key: keyOf(prefix, y), mode: "1", do: func(hctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		if yHeld.CompareAndSwap(false, true) {
			if d, err := other.Take(context.Background(), yc); err != nil || !d[0].Allowed {
				t.Errorf("other's Take(y) = %+v, %v", d, err)
			}
		}
		return next(hctx, cmd)
	}})
	release, sent := make(chan struct{}), make(chan struct{})
	var held atomic.Bool
	client.AddHook(&funcHook{key: keyOf(prefix, x), mode: "2", do: func(hctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		if !held.CompareAndSwap(false, true) {
			return next(hctx, cmd)
		}
		<-hctx.Done() // the undo's caller gives up at the store's deadline
		select {
		case <-release:
		case <-time.After(10 * time.Second): // a failure bound
		}
		err := next(context.WithoutCancel(hctx), cmd)
		close(sent)
		return err
	}})
	// x reserved (10 of 10), y denied: x's undo is held past the deadline.
	if d, err := s.Take(ctx, xc, yc); err == nil {
		t.Fatalf("Take(x, y) = %+v, nil; want the abandoned undo's error", d)
	} else {
		t.Logf("Take(x, y) with its undo abandoned: %v", err)
	}
	// The undo has not run: x is full at Redis, denied, and cached. A
	// Take that s's 200ms ended (a loaded machine) caches nothing, and
	// changes nothing at Redis (x is full): it is made again.
	for try := 1; ; try++ {
		d, err := s.Take(ctx, xc)
		if try < 10 && errors.Is(err, context.DeadlineExceeded) {
			t.Logf("Take(x) before the undo ran, try %d: %v; again", try, err)
			continue
		}
		if err != nil || d[0].Allowed {
			t.Fatalf("Take(x) before the undo ran = %+v, %v; want denied", d, err)
		}
		break
	}
	close(release)
	select {
	case <-sent:
	case <-time.After(10 * time.Second):
		t.Fatal("the abandoned undo was not sent")
	}
	pk := make([]algorithms.Decision, 1)
	if err := live.Peek(ctx, pk, []algorithms.Check{xc}); err != nil || !pk[0].Allowed {
		t.Fatalf("Peek(x) after the undo ran = %+v, %v; want Redis to admit", pk[0], err)
	}
	// The store's goroutine forgets x once the undo's reply is in: a
	// Take may come just before that; the cached denial must be gone
	// within the failure bound (it stands for an hour otherwise). A Take
	// that s's 200ms ended (a loaded machine) went past the cache to
	// Redis, which a Take of x never does while the cache holds its
	// denial: the cache forgot x, as it must. It is not made again (Redis
	// may have admitted it, x's last units).
	var d []algorithms.Decision
	var pastCache bool
	hangguard.Poll(5*time.Second, time.Millisecond, func() bool {
		d, err = s.Take(ctx, xc)
		if errors.Is(err, context.DeadlineExceeded) {
			t.Logf("Take(x) after the undo ran went past the deny cache to Redis and timed out: %v", err)
			pastCache = true
			return true
		}
		return err != nil || d[0].Allowed
	})
	if !pastCache && (err != nil || !d[0].Allowed) {
		t.Errorf("Take(x) after the abandoned undo ran at Redis = %+v, %v; Redis admits it (Peek %+v), the deny cache denied it", d, err, pk[0])
	}
}
