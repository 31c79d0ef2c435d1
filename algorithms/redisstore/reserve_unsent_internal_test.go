package redisstore

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// failReservations fails every reservation call (script mode 1) with err,
// without sending it, counting them in hits.
type failReservations struct {
	redistest.PassHooks
	err  error
	hits atomic.Int64
}

func (h *failReservations) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if cmd.Name() == "fcall" && len(args) > 3 {
			if nk, ok := args[2].(int); ok && len(args) > 3+nk+3 && fmt.Sprint(args[3+nk+3]) == "1" {
				h.hits.Add(1)
				cmd.SetErr(h.err)
				return h.err
			}
		}
		return next(ctx, cmd)
	}
}

// TestReserveUnsentIsNotUnanswered: a reservation the store did not send
// (its circuit breaker open: ErrCircuitOpen; the store closed: ErrClosed)
// never reached Redis, and must not be marked unanswered, which runSplit
// sends again under its id and undoes, and names as maybe left in place
// when that fails; one that failed after it was sent (io.EOF) may have
// run, and must. The store's breaker is asked once per Take, before its
// phases, so no reservation meets ErrCircuitOpen through Take today: this
// pins reserveAs's reading of the error, which before the fix took any
// error but a reply of Redis and ErrClosed for a call that may have run
// (ErrCircuitOpen: unanswered true).
func TestReserveUnsentIsNotUnanswered(t *testing.T) {
	srv := redistest.Shared(t)
	for _, tc := range []struct {
		err        error
		unanswered bool
	}{
		{ErrCircuitOpen, false},
		{fmt.Errorf("wrapped: %w", ErrCircuitOpen), false},
		{algorithms.ErrClosed, false},
		{io.EOF, true},
	} {
		t.Run(tc.err.Error(), func(t *testing.T) {
			client := redis.NewClient(&redis.Options{Addr: srv.Addr})
			t.Cleanup(func() { _ = client.Close() })
			s, err := New(client, WithPrefix(fmt.Sprintf("unsent%d", time.Now().UnixNano())))
			if err != nil {
				t.Fatal(err)
			}
			c := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}, Key: "k"}
			if _, err := s.Take(context.Background(), c); err != nil { // the library loaded
				t.Fatal(err)
			}
			h := &failReservations{err: tc.err}
			client.AddHook(h)
			r := s.newRequest([]algorithms.Check{c}, time.Time{})
			rv := s.reserve(context.Background(), r, []int{0}, make([]algorithms.Decision, 1))
			if h.hits.Load() != 1 {
				t.Fatalf("the reservation was not called (%d calls; %+v)", h.hits.Load(), rv)
			}
			if rv.err == nil || rv.unanswered != tc.unanswered {
				t.Errorf("reservation failing with %v = {err: %v, unanswered: %v}; want unanswered %v", tc.err, rv.err, rv.unanswered, tc.unanswered)
			}
		})
	}
}

// TestUnsentCallsSayNothingOfNodes: a call the store never sent (its
// circuit open, the store closed) says nothing of the cluster's nodes:
// noReply must not read it as a call without a reply, which has the
// client reload its slot map (reloadSlots), while a lost connection's
// error (io.EOF) and a reply the store cannot read still do. Before the
// fix ErrClosed and ErrCircuitOpen each reloaded it.
func TestUnsentCallsSayNothingOfNodes(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{ErrCircuitOpen, false},
		{fmt.Errorf("redisstore: take: %w", ErrCircuitOpen), false},
		{algorithms.ErrClosed, false},
		{io.EOF, true},
		{fmt.Errorf("redisstore: unexpected script reply %T", 3), true},
	} {
		if got := noReply(context.Background(), []error{nil, tc.err}); got != tc.want {
			t.Errorf("noReply(%v) = %v, want %v", tc.err, got, tc.want)
		}
		if got := mayHaveRun(tc.err); got != tc.want {
			t.Errorf("mayHaveRun(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
