package redisstore_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestClusterDeniedResendStopsTheAbandonedReservation: a cross-slot
// reservation whose caller cancelled it while it was still on its way
// (not yet run at Redis) is sent again under its id. When the resend is
// denied (x was filled meanwhile) it writes no marker, so the original
// call, arriving later once x has room again (here a Reset), runs and
// consumes x's units for a Take already answered with an error: nothing
// undoes it and the Take's error names no slot left. The resend must
// leave the original nothing to run.
func TestClusterDeniedResendStopsTheAbandonedReservation(t *testing.T) {
	cs := newSlotPair(t, "resentdenied", "resentanswered")
	shared, x, xc, yc, keyOf := cs.shared, cs.x, cs.xc, cs.yc, cs.keyOf
	spec := cs.xc.Spec
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSrv.Addrs()})
	t.Cleanup(func() { _ = client.Close() })
	prefix := uniquePrefix(t)
	clock := algotest.NewClock(algotest.Base)
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	other, err := redisstore.New(shared, redisstore.WithPrefix(prefix), redisstore.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Take(context.Background(), yc); err != nil { // connections made
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	release := make(chan struct{})
	ran := make(chan error, 1)
	var first atomic.Bool
	h := &funcHook{key: keyOf(prefix, x), mode: "1", do: func(hctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		if !first.CompareAndSwap(false, true) {
			return next(hctx, cmd) // the resend: as sent
		}
		cancel()
		// Others fill x while this call is still on its way.
		if _, err := other.Take(context.Background(), algorithms.Check{Spec: spec, Key: x, Cost: 10}); err != nil {
			ran <- err
			return err
		}
		<-release
		err := next(context.WithoutCancel(hctx), cmd)
		ran <- err
		return err
	}}
	client.AddHook(h)
	_, err = s.Take(ctx, xc, yc)
	if !errors.Is(err, context.Canceled) {
		close(release)
		t.Fatalf("Take(x, y) cancelled during x's reservation = %v, want context.Canceled", err)
	}
	t.Logf("Take(x, y) = %v", err)
	// x gets room again; then the abandoned call reaches Redis.
	if err := other.Reset(context.Background(), algorithms.Check{Spec: spec, Key: x}); err != nil {
		close(release)
		t.Fatal(err)
	}
	close(release)
	if err := <-ran; err != nil {
		t.Fatalf("x's reservation, abandoned by the caller: %v", err)
	}
	pk := make([]algorithms.Decision, 2)
	if err := s.Peek(context.Background(), pk, []algorithms.Check{xc, yc}); err != nil {
		t.Fatal(err)
	}
	if pk[0].Remaining != 10 || pk[1].Remaining != 10-1 {
		t.Fatalf("after the cancelled Take and x's reset, x has %d remaining, y %d; want 10 and 9 (nothing of the answered Take consumed)", pk[0].Remaining, pk[1].Remaining)
	}
}
