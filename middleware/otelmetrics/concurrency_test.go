package otelmetrics_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// backClock goes 2ms back at every reading: a wall clock set back in the
// middle of a decision.
type backClock struct{ ns atomic.Int64 }

func (c *backClock) Now() time.Time {
	return t0.Add(-time.Duration(c.ns.Add(int64(2 * time.Millisecond))))
}

// TestDecisionDurationNeverNegative: the histogram's sum is read as a
// counter; a negative latency (the clock set back during a decision) is
// recorded as zero.
func TestDecisionDurationNeverNegative(t *testing.T) {
	obs, reader := newObserver(t)
	m := middleware.MustNew(memStore(t), []*policy.Policy{fixed("p", 100, user)},
		middleware.WithObserver(obs), middleware.WithClock(&backClock{}))
	metrictest.KeepAlive(t, m)
	h := router(m)
	for range 3 {
		get(h, "/", "X-User", "ann")
	}
	if _, hist := collect(t, reader); hist.count != 3 || hist.sum != 0 {
		t.Errorf("count %d sum %v, want 3 and 0", hist.count, hist.sum)
	}
}

// TestConcurrentRequestsReloadsAndCollections: requests, reloads adding
// and removing a policy, and collections run at once (for -race); the
// counts add up afterwards.
func TestConcurrentRequestsReloadsAndCollections(t *testing.T) {
	obs, reader := newObserver(t)
	m := middleware.MustNew(memStore(t), []*policy.Policy{fixed("kept", 1_000_000, user)}, middleware.WithObserver(obs))
	metrictest.KeepAlive(t, m)
	h := router(m)
	var wg sync.WaitGroup
	const workers, perWorker = 4, 200
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				get(h, "/", "X-User", fmt.Sprintf("u%d-%d", w, i))
			}
		})
	}
	wg.Go(func() {
		for i := range 50 {
			ps := []*policy.Policy{m.Configured("kept")}
			if i%2 == 0 {
				ps = append(ps, fixed("flapping", 1_000_000, user))
			}
			if err := m.SetPolicies(ps); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Go(func() {
		for range 50 {
			var rm metricdata.ResourceMetrics
			if err := reader.Collect(context.Background(), &rm); err != nil {
				t.Error(err)
				return
			}
		}
	})
	hangguard.Run(t, time.Minute, "requests, reloads and collections", wg.Wait)
	points, _ := collect(t, reader)
	if got := points["ratekeeper.requests{outcome=allowed,policy=kept}"]; got != workers*perWorker {
		t.Errorf("kept allowed %d, want %d", got, workers*perWorker)
	}
	if got, want := only(points, "ratekeeper.effective"), "ratekeeper.effective_limit{policy=kept} 1000000"; got != want {
		t.Errorf("limits after the last reload (flapping removed):\n%s\nwant %s", got, want)
	}
}
