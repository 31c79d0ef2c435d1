package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestGiveCallsRefusedWhenClosed: Refund and GiveBack refuse a call as
// Take does, before sending anything: a caller's context already done
// first (context.Canceled itself, even on a closed store), then a closed
// store (ErrClosed, with a live context).
func TestGiveCallsRefusedWhenClosed(t *testing.T) {
	check := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 5, Window: time.Second, MaxDelay: time.Second}, Key: "k"}
	calls := []struct {
		op   string
		call func(ctx context.Context, s *redisstore.Store, ds []algorithms.Decision) error
	}{
		{"Refund", func(ctx context.Context, s *redisstore.Store, ds []algorithms.Decision) error {
			return s.Refund(ctx, make([]algorithms.Refunded, 1), []algorithms.Check{check}, ds, 0)
		}},
		{"GiveBack", func(ctx context.Context, s *redisstore.Store, ds []algorithms.Decision) error {
			return s.GiveBack(ctx, make([]algorithms.Refunded, 1), []algorithms.Check{check}, ds, 0)
		}},
	}
	for _, tc := range calls {
		t.Run(tc.op, func(t *testing.T) {
			client, hook := countedClient(t)
			s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)))
			if err != nil {
				t.Fatal(err)
			}
			ds, err := s.Take(t.Context(), check)
			if err != nil || !ds[0].Allowed {
				t.Fatalf("Take = %v, %v; want admitted", ds, err)
			}
			hook.take()
			_ = s.Close()
			if err := tc.call(t.Context(), s, ds); !errors.Is(err, algorithms.ErrClosed) {
				t.Errorf("%s on a closed store = %v, want ErrClosed", tc.op, err)
			}
			cancelled, cancel := context.WithCancel(t.Context())
			cancel()
			if err := tc.call(cancelled, s, ds); err != context.Canceled {
				t.Errorf("%s on a cancelled context, closed store = %v, want context.Canceled itself", tc.op, err)
			}
			if sent := hook.take(); len(sent) != 0 {
				t.Errorf("%s refused before Redis sent %v", tc.op, sent)
			}
		})
	}
}
