package redisstore_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
)

// TestDenyCacheForgetsItsOwnUndoneReservation: a store with a deny cache
// makes a cross-slot Take of x and y; x is reserved (10 of 10), then y's
// reservation is denied (another process took y's last unit between the
// phases). Between x's reservation and its undo, a Take of x alone by the
// same store finds x full and is denied, with a RetryAfter to the end of
// the hour's window. The store then undoes x itself: x has room again at
// Redis, and this process knows it, having run the undo. Its deny cache
// must not go on denying x, as it does not after this process's
// give-backs, refunds and resets (WithDenyCache). Before the fix the
// denial stood for the rest of the hour.
func TestDenyCacheForgetsItsOwnUndoneReservation(t *testing.T) {
	cs := newSlotPair(t, "ownundo", "ownundo-y")
	x, y, xc, yc, keyOf := cs.x, cs.y, cs.xc, cs.yc, cs.keyOf
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSrv.Addrs()})
	t.Cleanup(func() { _ = client.Close() })
	prefix := uniquePrefix(t)
	clk := algotest.NewClock(algotest.Base)
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(clk), redisstore.WithDenyCache(16))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other, err := redisstore.New(cs.shared, redisstore.WithPrefix(prefix), redisstore.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx := context.Background()
	// x: 8 of 10 used (4 Takes of cost 2); y: 9 of 10.
	for range 4 {
		if d, err := other.Take(ctx, xc); err != nil || !d[0].Allowed {
			t.Fatalf("Take(x) = %+v, %v", d, err)
		}
	}
	for range 9 {
		if d, err := other.Take(ctx, yc); err != nil || !d[0].Allowed {
			t.Fatalf("Take(y) = %+v, %v", d, err)
		}
	}
	// Another process takes y's last unit before y's reservation.
	var yHeld atomic.Bool
	client.AddHook(&funcHook{key: keyOf(prefix, y), mode: "1", do: func(hctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		if yHeld.CompareAndSwap(false, true) {
			if d, err := other.Take(context.Background(), yc); err != nil || !d[0].Allowed {
				t.Errorf("other's Take(y) = %+v, %v", d, err)
			}
		}
		return next(hctx, cmd)
	}})
	// Before x's undo: this store's Take of x alone, decided by Redis
	// (denied by the reservation), its reply held until the cross-slot
	// Take has returned.
	type heldKey struct{}
	decided, release := make(chan struct{}), make(chan struct{})
	client.AddHook(ctxHook{key: heldKey{}, do: func(hctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		err := next(hctx, cmd)
		close(decided)
		<-release
		return err
	}})
	var xHeld atomic.Bool
	var between []algorithms.Decision
	done := make(chan struct{})
	client.AddHook(&funcHook{key: keyOf(prefix, x), mode: "2", do: func(hctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		if xHeld.CompareAndSwap(false, true) {
			go func() {
				defer close(done)
				d, err := s.Take(context.WithValue(context.Background(), heldKey{}, true), xc)
				if err != nil {
					t.Errorf("Take(x) between x's reservation and its undo: %v", err)
				}
				between = d
			}()
			<-decided
		}
		return next(hctx, cmd)
	}})
	d, err := s.Take(ctx, xc, yc)
	close(release)
	<-done
	if err != nil || d[0].Allowed && d[1].Allowed || !xHeld.Load() {
		t.Fatalf("Take(x, y) = %+v, %v (undo of x seen: %v); want y denied at its reservation and x undone", d, err, xHeld.Load())
	}
	if len(between) != 1 || between[0].Allowed {
		t.Fatalf("Take(x) between the reservation and the undo = %+v; want denied (x 10 of 10)", between)
	}
	// x is 8 of 10 at Redis: a Peek says so, and so must a Take.
	pk := make([]algorithms.Decision, 1)
	if err := s.Peek(ctx, pk, []algorithms.Check{xc}); err != nil || !pk[0].Allowed || pk[0].Remaining != 2 {
		t.Fatalf("Peek(x) after the undo = %+v, %v; want admitted, Remaining 2", pk[0], err)
	}
	if d, err := s.Take(ctx, xc); err != nil || !d[0].Allowed {
		t.Fatalf("Take(x) after this store undid its reservation = %+v, %v; want admitted (x 8 of 10 at Redis), not the cached denial", d, err)
	}
}

// ctxHook runs do for the commands whose context carries key.
type ctxHook struct {
	redistest.PassHooks
	key any
	do  func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error
}

func (h ctxHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if ctx.Value(h.key) != nil {
			return h.do(ctx, cmd, next)
		}
		return next(ctx, cmd)
	}
}
