package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

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
			client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSrv.Addrs()})
			t.Cleanup(func() { _ = client.Close() })
			prefix := uniquePrefix(t)
			s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(algotest.NewClock(algotest.Base)))
			if err != nil {
				t.Fatal(err)
			}
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
			for _, ce := range []error{context.Canceled, context.DeadlineExceeded, algorithms.ErrClosed, redisstore.ErrCircuitOpen} {
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
