package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/client"
)

// mutedRefundStore is a MemoryStore whose Refund never answers: a remote
// store that has stopped responding since the turns were taken.
type mutedRefundStore struct {
	mem     *algorithms.MemoryStore
	refunds atomic.Int64
}

func (s *mutedRefundStore) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	return s.mem.Take(ctx, checks...)
}

func (s *mutedRefundStore) Refund(ctx context.Context, dst []algorithms.Refunded, checks []algorithms.Check, ds []algorithms.Decision, waited time.Duration) error {
	s.refunds.Add(1)
	<-ctx.Done()
	return ctx.Err()
}

// A queued request whose context ends gives its turn back to the store
// before RoundTrip returns (the Transport starts no goroutine), and that
// store call is bounded: with a store that never answers, RoundTrip
// returns ctx.Err() a second after the context ended, not later, as the
// Transport's doc says. (In a synctest bubble: the second is virtual.)
func TestCancelledRequestWaitsForItsRefundAtMostASecond(t *testing.T) {
	for _, proactive := range []bool{true, false} {
		t.Run(fmt.Sprint("proactive ", proactive), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mem, err := algorithms.NewMemoryStore()
				if err != nil {
					t.Fatal(err)
				}
				store := &mutedRefundStore{mem: mem}
				next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				})
				tr, err := client.New(next, client.WithRate(1, 10*time.Second), client.WithStore(store), client.WithProactive(proactive))
				if err != nil {
					t.Fatal(err)
				}
				if err := roundTrip(context.Background(), tr, "http://api.example/", ""); err != nil {
					t.Fatal(err) // sent at once; the next turn is 10s away
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- roundTrip(ctx, tr, "http://api.example/", "") }()
				time.Sleep(time.Second) // queued for its turn at 10s
				synctest.Wait()
				cancelled := time.Now()
				cancel()
				err = <-done
				if !errors.Is(err, context.Canceled) {
					t.Errorf("RoundTrip = %v, want context.Canceled", err)
				}
				if took := time.Since(cancelled); took > time.Second {
					t.Errorf("RoundTrip returned %v after its context ended, want a second at most", took)
				}
				if store.refunds.Load() == 0 {
					t.Error("the turn given up was not offered back to the store")
				}
			})
		})
	}
}
