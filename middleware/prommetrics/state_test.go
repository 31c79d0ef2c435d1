package prommetrics_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// stateGauges returns the failure_state gauges as "healthy=1 open=0 ...".
func stateGauges(m *prommetrics.Metrics) string {
	var parts []string
	for _, s := range middleware.States {
		parts = append(parts, fmt.Sprintf("%s=%v", s, testutil.ToFloat64(m.StateGauge(s.String()))))
	}
	return strings.Join(parts, " ")
}

// TestFailureStateSharedMetrics: one Metrics observing two middlewares (as
// the package doc suggests: one per registry, passed to every middleware)
// with different failure modes. While one fails closed, the other's
// recovery must not report the service healthy: failure_state{healthy} is
// 1 only when no middleware is failing, and a state is 1 while any
// middleware is in it.
func TestFailureStateSharedMetrics(t *testing.T) {
	_, metrics, _ := metricsAndStore(t)
	newFailing := func(f middleware.Failure) (*switchable, http.Handler) {
		mem, err := algorithms.NewMemoryStore(algorithms.WithClock(algotest.NewClock(t0)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mem.Close() })
		store := &switchable{Store: mem}
		m := middleware.MustNew(store, []*policy.Policy{fixed("p", 100, remote)},
			middleware.WithObserver(metrics), middleware.OnStoreError(f), middleware.WithBreaker(0, 0))
		metrictest.KeepAlive(t, m)
		return store, m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	}
	openStore, open := newFailing(middleware.FailOpen())
	closedStore, closed := newFailing(middleware.FailClosed(0))

	openStore.down.Store(true)
	closedStore.down.Store(true)
	serve(open)
	serve(closed)
	if got, want := stateGauges(metrics), "healthy=0 open=1 closed=1 fallback=0"; got != want {
		t.Errorf("both failing: %s, want %s", got, want)
	}
	openStore.down.Store(false)
	serve(open)
	if got, want := stateGauges(metrics), "healthy=0 open=0 closed=1 fallback=0"; got != want {
		t.Errorf("one recovered, one failing closed: %s, want %s", got, want)
	}
	closedStore.down.Store(false)
	serve(closed)
	if got, want := stateGauges(metrics), "healthy=1 open=0 closed=0 fallback=0"; got != want {
		t.Errorf("both recovered: %s, want %s", got, want)
	}
}

// TestFailureStateObservedOutOfOrder: the middleware reports its
// transitions under its state lock, in the order it makes them, but an
// observer may be told them out of order by what stands between (an
// application's own fan-out that queues or defers them): two transitions
// (healthy -> open, then open -> healthy) told in reverse. The gauges must
// end in the state made last (healthy), not the one reported last, as
// ObserveState's doc says.
func TestFailureStateObservedOutOfOrder(t *testing.T) {
	metrics, err := prommetrics.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	// Swaps: healthy -> open, then open -> healthy; reported in reverse.
	metrics.ObserveState(middleware.StateFailingOpen, middleware.StateHealthy)
	metrics.ObserveState(middleware.StateHealthy, middleware.StateFailingOpen)
	if got, want := stateGauges(metrics), "healthy=1 open=0 closed=0 fallback=0"; got != want {
		t.Errorf("after healthy->open->healthy reported out of order: %s, want %s", got, want)
	}
}
