package middleware_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// stuckRefunds is a memory store whose refunds hang until their context
// ends (a store that does not answer), noting the context they were given.
type stuckRefunds struct {
	*algorithms.MemoryStore
	cancelled bool // the context was already done when the refund began
	deadline  time.Duration
	refunds   int
}

func (s *stuckRefunds) Refund(ctx context.Context, _ []algorithms.Refunded, _ []algorithms.Check, _ []algorithms.Decision, _ time.Duration) error {
	s.refunds++
	s.cancelled = ctx.Err() != nil
	if d, ok := ctx.Deadline(); ok {
		s.deadline = time.Until(d)
	}
	<-ctx.Done()
	return ctx.Err()
}

// TestLeakyQueueRefundBounded: the refund of an abandoned request runs
// after the request's context has ended, so it gets a context of its own,
// not yet done, which ends within a second: a store that does not answer
// holds the handler a second at most, and its error reaches the error
// hook. (In a synctest bubble: the second passes on the fake clock.)
func TestLeakyQueueRefundBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem, err := algorithms.NewMemoryStore()
		if err != nil {
			t.Fatal(err)
		}
		store := &stuckRefunds{MemoryStore: mem}
		queue := policy.Must(policy.New("queue", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 5 * time.Second}, remote))
		var errs []error
		m := middleware.MustNew(store, []*policy.Policy{queue},
			middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))
		h := m.Handler(ok)
		serve(h, "GET", "/") // departs at once

		ctx, cancel := context.WithCancel(context.Background())
		r := httptest.NewRequest("GET", "/", nil).WithContext(ctx)
		w := httptest.NewRecorder()
		done := make(chan time.Duration)
		go func() {
			start := time.Now()
			h.ServeHTTP(w, r)
			done <- time.Since(start)
		}()
		time.Sleep(300 * time.Millisecond) // bubble time: the fake clock moves, held for its 1 s Delay
		cancel()
		took := <-done
		if store.refunds != 1 || store.cancelled || store.deadline <= 0 || store.deadline > time.Second {
			t.Errorf("refunds %d, context done at its start %v, deadline in %v; want one refund with a live context ending within 1s",
				store.refunds, store.cancelled, store.deadline)
		}
		if took > 300*time.Millisecond+time.Second {
			t.Errorf("the handler took %v, want at most 1.3s (300ms held, then a refund bounded by 1s)", took)
		}
		if w.Code != http.StatusServiceUnavailable {
			t.Errorf("abandoned request: %d, want 503", w.Code)
		}
		if len(errs) != 2 || !errors.Is(errs[1], context.DeadlineExceeded) {
			t.Errorf("errors reported %v, want the cut-short wait, then the refund's deadline", errs)
		}
	})
}
