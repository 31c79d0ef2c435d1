package otelmetrics_test

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestRebuildsUnderTraffic: requests through the current middleware, a
// rebuilder replacing it with one built anew (every generation given the
// one Observer, the old one closed once replaced), reloads in place of
// the current one, and collections, all at once (for -race). Afterwards
// the requests add up, and the limit gauges are the last middleware's
// alone.
func TestRebuildsUnderTraffic(t *testing.T) {
	obs, reader := newObserver(t)
	mem := memStore(t)
	build := func(gen int) *middleware.Middleware {
		return middleware.MustNew(mem, []*policy.Policy{fixed("kept", 1_000_000, user), fixed(fmt.Sprint("gen", gen), 1_000_000, user)},
			middleware.WithObserver(obs))
	}
	var cur atomic.Pointer[middleware.Middleware]
	cur.Store(build(0))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cur.Load().Handler(http.NotFoundHandler()).ServeHTTP(w, r)
	})
	var wg sync.WaitGroup
	const workers, perWorker, gens = 4, 200, 40
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				get(h, "/", "X-User", fmt.Sprintf("u%d-%d", w, i))
			}
		})
	}
	var turns sync.Mutex // the rebuilder and the reloader take turns on cur
	wg.Go(func() {
		for gen := 1; gen <= gens; gen++ {
			m := build(gen)
			turns.Lock()
			old := cur.Swap(m)
			turns.Unlock()
			old.Close()
		}
	})
	wg.Go(func() {
		for i := range gens {
			turns.Lock()
			m := cur.Load()
			var ps []*policy.Policy
			for _, p := range m.Set().Policies() {
				if p.Name() != "flapping" {
					ps = append(ps, m.Configured(p.Name()))
				}
			}
			if i%2 == 0 {
				ps = append(ps, fixed("flapping", 5, user))
			}
			err := m.SetPolicies(ps)
			turns.Unlock()
			if err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Go(func() {
		for range gens {
			var rm metricdata.ResourceMetrics
			if err := reader.Collect(context.Background(), &rm); err != nil {
				t.Error(err)
				return
			}
		}
	})
	hangguard.Run(t, time.Minute, "requests, rebuilds, reloads and collections", wg.Wait)
	points, _ := collect(t, reader)
	if got := points["ratekeeper.requests{outcome=allowed,policy=kept}"]; got != workers*perWorker {
		t.Errorf("kept allowed %d, want %d", got, workers*perWorker)
	}
	wantLimitPoints(t, reader, "after the last rebuild",
		"ratekeeper.configured_limit{policy=gen40} 1000000",
		"ratekeeper.configured_limit{policy=kept} 1000000",
		"ratekeeper.effective_limit{policy=gen40} 1000000",
		"ratekeeper.effective_limit{policy=kept} 1000000")
	runtime.KeepAlive(cur.Load()) // serving to the end: a middleware collected is counted out
}
