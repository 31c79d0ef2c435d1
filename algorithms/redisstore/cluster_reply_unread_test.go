package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// unreadAfterRun returns a hook that sends the call of script mode whose
// first key is key (Redis runs it) and then hands the store val and err
// in place of its reply, as whatever stands between the store and Redis
// might (a proxy, a client's hook): on the first call only, or with every
// on each. calls counts the calls of that mode and key.
func unreadAfterRun(key, mode string, val any, err error, every bool, calls *atomic.Int64) *funcHook {
	return &funcHook{key: key, mode: mode, do: func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		n := calls.Add(1)
		if rerr := next(ctx, cmd); rerr != nil || n > 1 && !every {
			return rerr
		}
		c := cmd.(interface {
			SetVal(any)
			SetErr(error)
		})
		c.SetVal(val)
		c.SetErr(err)
		return err
	}}
}

// TestClusterUnreadReservationUndone: y's reservation of a cross-slot
// Take runs at Redis, consuming y's unit, and its reply reaches the store
// in a shape it cannot read (short, mistyped, Redis's nil). The Take
// fails, and a Take that fails consumes nothing it can give back: the
// reservation, which ran, is sent again under its id (its marker answers
// the run's reply without running it again) and undone like x's, as one
// that got no reply is. When the reply sent again cannot be read either,
// the error names y's slot, whose reservation may have been left in place.
// Before the fix y kept its unit (Remaining 9 of 10) and the error said
// nothing of it: a reservation whose reply the store could not read was
// taken for one that did not run.
func TestClusterUnreadReservationUndone(t *testing.T) {
	cs := newSlotPair(t, "unread", "reserved")
	y, xc, yc, keyOf := cs.y, cs.xc, cs.yc, cs.keyOf
	for _, tc := range []struct {
		name  string
		val   any
		err   error
		every bool // the reply of the call sent again is unread too
	}{
		{"short", []any{int64(3), int64(0), int64(0)}, nil, false},
		{"string", []any{"3", int64(0), int64(0), int64(0)}, nil, false},
		{"no_undo_records", []any{int64(3), int64(0), int64(0), int64(0)}, nil, false},
		{"not_array", int64(3), nil, false},
		{"redis_nil", nil, redis.Nil, false},
		{"every_reply/short", []any{int64(3), int64(0), int64(0)}, nil, true},
		{"every_reply/redis_nil", nil, redis.Nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, s, prefix := clusterStoreOn(t, clusterSrv.Addrs())
			var calls atomic.Int64
			client.AddHook(unreadAfterRun(keyOf(prefix, y), "1", tc.val, tc.err, tc.every, &calls))
			d, err := s.Take(context.Background(), xc, yc)
			if calls.Load() == 0 {
				t.Fatalf("y's reservation never ran (Take = %+v, %v)", d, err)
			}
			if err == nil {
				t.Fatalf("Take(x, y) whose reservation of y answered %#v, %v = %+v, nil; want an error", tc.val, tc.err, d)
			}
			t.Logf("Take(x, y) = %v (y's reservation sent %d times)", err, calls.Load())
			// Not about a key, nor the caller's: the caller's failure
			// mode answers it.
			for _, ce := range []error{context.Canceled, context.DeadlineExceeded, algorithms.ErrClosed, redisstore.ErrCircuitOpen, algorithms.ErrKeyState} {
				if errors.Is(err, ce) {
					t.Errorf("Take(x, y) = %q matches %v", err, ce)
				}
			}
			pk := make([]algorithms.Decision, 2)
			if err := s.Peek(context.Background(), pk, []algorithms.Check{xc, yc}); err != nil {
				t.Fatal(err)
			}
			yWant := int64(10)
			if tc.every {
				yWant = 9 // sent again, its reply unread again: left
				sl, serr := client.ClusterKeySlot(context.Background(), keyOf(prefix, y)).Result()
				if serr != nil {
					t.Fatal(serr)
				}
				if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("slot %d may have been left in place", sl)) {
					t.Errorf("Take(x, y) = %q; want it to say the reservation of y's slot %d may have been left in place", msg, sl)
				}
			}
			if pk[0].Remaining != 10 || pk[1].Remaining != yWant {
				t.Errorf("after the failed Take x has %d remaining, y %d; want 10 and %d", pk[0].Remaining, pk[1].Remaining, yWant)
			}
			if got := calls.Load(); got != 2 {
				t.Errorf("y's reservation was sent %d times, want 2 (sent again under its id)", got)
			}
		})
	}
}

// TestUnreadSingleSlotTakeStandsWhole pins what a Take on one slot does
// when Redis ran its script and the store cannot read the reply: it fails
// with an error that is no answer about a key (so the store's circuit
// breaker counts it, and the middleware answers by its failure mode), and
// the key holds the whole Take, x's two units consumed. One script call
// consumes all its checks or none: the all-or-nothing holds, as after a
// lost reply (TestReviewFailedTakeMayHaveConsumed). It is not sent again
// nor undone as a cross-slot reservation is: that takes a marker of its
// reply, a key per Take while go-redis may send it again (see the package
// documentation, "Failures").
func TestUnreadSingleSlotTakeStandsWhole(t *testing.T) {
	cs := newSlotPair(t, "unread", "alone")
	x, xc, keyOf := cs.x, cs.xc, cs.keyOf
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSrv.Addrs()})
	t.Cleanup(func() { _ = client.Close() })
	prefix := uniquePrefix(t)
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(algotest.NewClock(algotest.Base)),
		redisstore.WithCircuitBreaker(1, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	client.AddHook(unreadAfterRun(keyOf(prefix, x), "c", []any{int64(3), int64(0)}, nil, false, &calls))
	d, err := s.Take(context.Background(), xc)
	if calls.Load() != 1 {
		t.Fatalf("x's Take was sent %d times, want 1 (Take = %+v, %v)", calls.Load(), d, err)
	}
	if err == nil || errors.Is(err, algorithms.ErrKeyState) {
		t.Fatalf("Take(x) whose reply was unread = %+v, %v; want an error that is not about the key", d, err)
	}
	if _, err := s.Take(context.Background(), xc); !errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Errorf("after a Take whose reply was unread, Take = %v; want ErrCircuitOpen (a failure counted)", err)
	}
	direct, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(algotest.NewClock(algotest.Base)))
	if err != nil {
		t.Fatal(err)
	}
	pk := make([]algorithms.Decision, 1)
	if err := direct.Peek(context.Background(), pk, []algorithms.Check{xc}); err != nil {
		t.Fatal(err)
	}
	if got, want := pk[0].Remaining, int64(10-2); got != want {
		t.Errorf("after the Take whose reply was unread x has %d remaining, want %d (the Take stands whole)", got, want)
	}
}
