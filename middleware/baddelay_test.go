package middleware_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// delaying is a store whose admitted decisions carry the Delay it is
// given, whatever the policy: a broken or hostile backend.
type delaying struct {
	algorithms.Store
	delay time.Duration
}

func (s *delaying) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	ds, err := s.Store.Take(ctx, checks...)
	for i := range ds {
		if ds[i].Allowed {
			ds[i].Delay = s.delay
		}
	}
	return ds, err
}

// TestDelayBeyondPolicyIsAStoreError: a store's Delay that its policy
// cannot give (beyond a leaky_queue's MaxDelay, on any other kind, or
// negative) is a broken backend's answer: the request is not held for it
// (an hour, if the store says so) but answered by the failure mode, and
// the error handler told, as for any store error.
func TestDelayBeyondPolicyIsAStoreError(t *testing.T) {
	queue := policy.Must(policy.New("queue", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: time.Second, MaxDelay: time.Second}, remote))
	for _, tc := range []struct {
		name  string
		p     *policy.Policy
		delay time.Duration
		ok    bool
	}{
		{"queue within MaxDelay", queue, time.Second, true},
		{"queue beyond MaxDelay", queue, time.Hour, false},
		{"queue negative", queue, -time.Second, false},
		{"fixed window", fixed("fixed", 10, time.Minute, remote), time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem, clock := newStore(t)
			var waits []time.Duration
			var reported []error
			m := middleware.MustNew(&delaying{Store: mem, delay: tc.delay}, []*policy.Policy{tc.p},
				middleware.WithClock(clock), middleware.OnStoreError(middleware.FailClosed(time.Second)),
				middleware.WithWait(func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }),
				middleware.WithErrorHandler(func(_ *http.Request, err error) { reported = append(reported, err) }))
			w := serve(m.Handler(ok), "GET", "/")
			if tc.ok {
				if w.Code != 200 || len(waits) != 1 || waits[0] != tc.delay || len(reported) != 0 {
					t.Fatalf("status %d, waits %v, errors %v; want 200 after one wait of %s", w.Code, waits, reported, tc.delay)
				}
				return
			}
			if w.Code != http.StatusServiceUnavailable || len(waits) != 0 {
				t.Fatalf("status %d, waits %v; want 503 (failing closed) at once", w.Code, waits)
			}
			if len(reported) != 1 || !strings.Contains(reported[0].Error(), "Delay") || !strings.Contains(reported[0].Error(), tc.p.Name()) {
				t.Fatalf("errors %v; want one naming the Delay and the policy %q", reported, tc.p.Name())
			}
			if got := m.Stats().StoreErrors; got != 1 {
				t.Errorf("Stats().StoreErrors = %d, want 1", got)
			}
		})
	}
}
