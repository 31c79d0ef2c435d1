package redisstore_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/redis/go-redis/v9"
)

// TestClusterAbandonedReservationUndone: the caller cancels a cross-slot
// Take while its reservation of x is at Redis: the Take returns at once
// (context.Canceled, a client that does not bound its I/O by the context),
// but the reservation runs and consumes all the same. A Take that fails
// consumes nothing it can give back: the store must undo that reservation
// as it undoes one whose reply it has (the reservation's marker answers
// the reply again, its undo records included), and y's. Before the fix x
// kept its two units: a Take not admitted, reported as the caller's
// cancellation, consumed them until the window ended.
func TestClusterAbandonedReservationUndone(t *testing.T) {
	cs := newSlotPair(t, "abandoned", "answered")
	x, xc, yc, keyOf := cs.x, cs.xc, cs.yc, cs.keyOf
	spec := cs.xc.Spec
	client, s, prefix := clusterStoreOn(t, clusterSrv.Addrs())
	if _, err := s.Take(context.Background(), algorithms.Check{Spec: spec, Key: x}, yc); err != nil { // connections made
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	var first atomic.Bool
	// The first call runs at Redis before any resend (origRun), and its
	// reply reaches the store only once the Take has returned (returned):
	// a reply there before the caller saw its context end is Redis's
	// answer, which the store returns (TestReplyReadyAtContextEndIsReturned),
	// so that the Take was admitted whenever the caller's goroutine ran
	// after the reply had come (35 of 200 runs at -cpu=1).
	origRun, returned := make(chan struct{}), make(chan struct{})
	h := &funcHook{key: keyOf(prefix, x), mode: "1", do: func(hctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		if !first.CompareAndSwap(false, true) {
			hangguard.Within(origRun, 10*time.Second) // a failure bound
			return next(hctx, cmd)                    // not the first: as sent
		}
		cancel()
		// The caller stopped waiting; the call goes on to Redis and runs.
		err := next(context.WithoutCancel(hctx), cmd)
		close(origRun)
		hangguard.Within(returned, 10*time.Second) // a failure bound
		ran <- err
		return err
	}}
	client.AddHook(h)
	_, err := s.Take(ctx, xc, yc)
	close(returned)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Take(x, y) cancelled during x's reservation = %v, want context.Canceled", err)
	}
	if err := <-ran; err != nil {
		t.Fatalf("x's reservation, abandoned by the caller: %v", err)
	}
	pk := make([]algorithms.Decision, 2)
	if err := s.Peek(context.Background(), pk, []algorithms.Check{xc, yc}); err != nil {
		t.Fatal(err)
	}
	if pk[0].Remaining != 10-1 || pk[1].Remaining != 10-1 {
		t.Fatalf("after the cancelled Take x has %d remaining, y %d; want 9 and 9 (nothing of the Take consumed)", pk[0].Remaining, pk[1].Remaining)
	}
}
