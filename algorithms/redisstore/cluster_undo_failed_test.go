package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// foreignReply is the error the store's script raises on a key holding a
// value it did not write (a reply of Redis about one key).
const foreignReply = replyErr("ERR user_script:1: redisstore: key rk:{k} holds a value the store did not write")

// TestClusterUndoFailedTooNamesTheReservationLeft: a cross-slot Take whose
// reservation failed on one slot (firstErr) after another slot's
// reservation admitted, and whose undo of that admitted reservation
// failed too, leaves the reservation consumed for a Take that was not
// admitted. Its error must say so, naming the slot left, and carry both
// errors (errors.Is matches the reservation's and the undo's), while what
// callers classify the error by follows the Take's error alone: it
// matches algorithms.ErrKeyState only when the failed reservation's error
// is about a key (not when only the undo's is), and never a context
// error when no context ended. Before the fix the Take returned the
// reservation's error alone: "redisstore: take: OOM command not allowed
// ...", nothing said of the two units x kept.
func TestClusterUndoFailedTooNamesTheReservationLeft(t *testing.T) {
	cs := newSlotPair(t, "kept", "refused")
	x, y, xSlot, xc, yc, keyOf := cs.x, cs.y, cs.xSlot, cs.xc, cs.yc, cs.keyOf
	for _, tc := range []struct {
		name            string
		reserveY, undoX error // y's reservation's error, x's undo's (neither sent)
		keyState        bool  // the Take's error matches ErrKeyState
	}{
		{"refused_write/no_reply", oom, io.EOF, false},
		{"no_reply/undo_about_the_key", io.EOF, foreignReply, false},
		{"about_the_key/no_reply", foreignReply, io.EOF, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, s, prefix := clusterStoreOn(t, clusterSrv.Addrs())
			reserve := &interceptHook{key: keyOf(prefix, y), mode: "1", err: tc.reserveY}
			undo := &interceptHook{key: keyOf(prefix, x), mode: "2", err: tc.undoX}
			client.AddHook(reserve)
			client.AddHook(undo)
			d, err := s.Take(context.Background(), xc, yc)
			if !reserve.hit.Load() || !undo.hit.Load() {
				t.Fatalf("y's reservation ran: %v, x's undo ran: %v (Take = %+v, %v)", reserve.hit.Load(), undo.hit.Load(), d, err)
			}
			if err == nil {
				t.Fatalf("Take(x, y) = %+v, nil; want an error", d)
			}
			msg := err.Error()
			t.Logf("Take(x, y) = %v", err)
			if !errors.Is(err, tc.reserveY) {
				t.Errorf("Take(x, y) = %q, does not match y's reservation's error %q (errors.Is)", msg, tc.reserveY)
			}
			if !errors.Is(err, tc.undoX) {
				t.Errorf("Take(x, y) = %q, does not match x's undo's error %q (errors.Is): the caller is not told the undo failed", msg, tc.undoX)
			}
			// An undo refused by Redis did not run; one without a reply
			// may have.
			left := "may have been left in place"
			if _, refused := tc.undoX.(replyErr); refused {
				left = "was left in place"
			}
			if want := fmt.Sprintf("slot %d", xSlot); !strings.Contains(msg, want) || !strings.Contains(msg, left) {
				t.Errorf("Take(x, y) = %q, does not say the reservation of %s %s", msg, want, left)
			}
			if got := errors.Is(err, algorithms.ErrKeyState); got != tc.keyState {
				t.Errorf("errors.Is(Take's error, ErrKeyState) = %v, want %v (the failed reservation's error decides)", got, tc.keyState)
			}
			for _, ce := range []error{context.Canceled, context.DeadlineExceeded, algorithms.ErrClosed} {
				if errors.Is(err, ce) {
					t.Errorf("Take(x, y) = %q matches %v: misread as such", msg, ce)
				}
			}
			// The reservation of x stayed: its two units are consumed.
			pk := make([]algorithms.Decision, 1)
			if err := s.Peek(context.Background(), pk, []algorithms.Check{xc}); err != nil {
				t.Fatal(err)
			}
			if got, want := pk[0].Remaining, int64(8); got != want {
				t.Errorf("x has %d remaining after the failed Take, want %d (its reservation left in place)", got, want)
			}
		})
	}
}

// TestClusterUndoFailedTooCountsInTheBreaker: the store's circuit breaker
// (one per node on a Cluster) reads each part of a cross-slot Take on its
// own node: y's reservation, which got no reply, counts as a failure of
// y's node even though x's undo's error is a reply about a key, and opens
// that node's breaker of threshold 1; x's node, whose reservation and undo
// Redis answered, stays closed.
func TestClusterUndoFailedTooCountsInTheBreaker(t *testing.T) {
	cs := newSlotPair(t, "kept", "refused")
	x, y, xc, yc, keyOf := cs.x, cs.y, cs.xc, cs.yc, cs.keyOf
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSrv.Addrs()})
	t.Cleanup(func() { _ = client.Close() })
	prefix := uniquePrefix(t)
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(algotest.NewClock(algotest.Base)),
		redisstore.WithCircuitBreaker(1, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	client.AddHook(&interceptHook{key: keyOf(prefix, y), mode: "1", err: io.EOF})
	client.AddHook(&interceptHook{key: keyOf(prefix, x), mode: "2", err: foreignReply})
	if _, err := s.Take(context.Background(), xc, yc); err == nil {
		t.Fatal("Take(x, y) succeeded; want y's reservation's error")
	}
	if _, err := s.Take(context.Background(), yc); !errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Fatalf("after a Take whose reservation of y got no reply, Take(y) = %v; want ErrCircuitOpen (a failure of y's node counted)", err)
	}
	if _, err := s.Take(context.Background(), xc); err != nil {
		t.Fatalf("after a Take whose undo of x was answered with a key's error, Take(x) = %v; want a decision (x's node answered)", err)
	}
}

// TestClusterUndoFailedAfterDenialNamesTheReservationLeft: a cross-slot
// Take denied between its phases (another instance took y's last unit)
// whose undo of x's admitted reservation fails returns the undo's error,
// saying that x's reservation, named by its slot, was left in place.
// Before the fix it read "redisstore: undoing a cross-slot reservation:
// redisstore: take: EOF": not which slot, nor that its units stayed.
func TestClusterUndoFailedAfterDenialNamesTheReservationLeft(t *testing.T) {
	race := newLostRace(t)
	x := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Hour}, Key: "user-1", Cost: 2}
	s, client := crossSlot(t, race, x)
	xKey := race.prefix + ":{user-1}:fw:5:3600000000000:0:0:0"
	undo := &interceptHook{key: xKey, mode: "2", err: io.EOF}
	client.AddHook(race.hook)
	client.AddHook(undo)
	d, err := s.Take(context.Background(), x, race.y)
	if !race.hook.hit.Load() || !undo.hit.Load() {
		t.Fatalf("race ran: %v, x's undo ran: %v (Take = %+v, %v)", race.hook.hit.Load(), undo.hit.Load(), d, err)
	}
	sl, serr := client.ClusterKeySlot(context.Background(), xKey).Result()
	if serr != nil {
		t.Fatal(serr)
	}
	if err == nil || !errors.Is(err, io.EOF) || !strings.Contains(err.Error(), fmt.Sprintf("slot %d", sl)) || !strings.Contains(err.Error(), "left in place") {
		t.Fatalf("Take(x, y) with x's undo failed = %+v, %v; want the undo's error (io.EOF), saying the reservation of slot %d was left in place", d, err, sl)
	}
}

// TestClusterUndoFailedTooOwnDeadline: the failed reservation's error is
// the store's own WithTimeout deadline (y's reservation unanswered), and
// x's undo fails too: the Take's error still says, as without the undo's
// failure, that Redis gave no reply within the timeout (a store error
// wrapping context.DeadlineExceeded, not the bare context error a caller's
// deadline gives), and names the reservation left.
func TestClusterUndoFailedTooOwnDeadline(t *testing.T) {
	const timeout = 300 * time.Millisecond
	cs := newSlotPair(t, "kept", "unanswered")
	x, y, xSlot, xc, yc, keyOf := cs.x, cs.y, cs.xSlot, cs.xc, cs.yc, cs.keyOf
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSrv.Addrs()})
	t.Cleanup(func() { _ = client.Close() })
	prefix := uniquePrefix(t)
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(algotest.NewClock(algotest.Base)), redisstore.WithTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Take(context.Background(), xc, yc); err != nil { // connections made
		t.Fatal(err)
	}
	stall := &funcHook{key: keyOf(prefix, y), mode: "1", do: func(ctx context.Context, cmd redis.Cmder, _ redis.ProcessHook) error {
		<-ctx.Done()
		cmd.SetErr(ctx.Err())
		return ctx.Err()
	}}
	undo := &interceptHook{key: keyOf(prefix, x), mode: "2", err: io.EOF}
	client.AddHook(stall)
	client.AddHook(undo)
	_, err = s.Take(context.Background(), xc, yc)
	if !stall.hit.Load() || !undo.hit.Load() {
		t.Fatalf("y's reservation ran: %v, x's undo ran: %v (err %v)", stall.hit.Load(), undo.hit.Load(), err)
	}
	if err == nil || err == context.DeadlineExceeded || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, io.EOF) ||
		!strings.Contains(err.Error(), "no reply from Redis within "+timeout.String()) || !strings.Contains(err.Error(), fmt.Sprintf("slot %d may have been left in place", xSlot)) {
		t.Fatalf("Take(x, y) = %v; want the store's own deadline (no reply from Redis within %s) and x's slot %d left in place", err, timeout, xSlot)
	}
}
