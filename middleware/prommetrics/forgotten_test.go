package prommetrics_test

import (
	"log/slog"
	"net/http"
	"runtime"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestForgottenMiddlewareLeavesNothing: a middleware the application
// drops without Close, its store failing (it fails open), given a Metrics
// another middleware shares (WithObserver gives each its own
// ForMiddleware). Once it
// is garbage (nothing can call it: it enforces nothing), its policies'
// limit gauges go and failure_state no longer counts it: a gauge must not
// report a middleware that is gone for ever because a Close was missed.
// The live middleware's gauges stay.
func TestForgottenMiddlewareLeavesNothing(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	live := middleware.MustNew(mem, []*policy.Policy{fixed("live", 10, remote)}, middleware.WithObserver(metrics))
	func() {
		down := &switchable{Store: mem}
		down.down.Store(true)
		m := middleware.MustNew(down, []*policy.Policy{fixed("forgotten", 5, remote)},
			middleware.WithObserver(metrics), middleware.WithLogger(slog.New(slog.DiscardHandler)))
		serve(m.Handler(http.NotFoundHandler()))
	}()
	if got := testutil.ToFloat64(metrics.StateGauge("open")); got != 1 {
		t.Fatalf("failure_state{open} = %v with the store failing, want 1", got)
	}
	wantLimits(t, reg, "before the collection", "forgotten=5", "live=10")
	gone := func() bool {
		n, err := testutil.GatherAndCount(reg, "ratekeeper_effective_limit")
		return err == nil && n == 1 && testutil.ToFloat64(metrics.StateGauge("open")) == 0
	}
	for i := 0; i < 1000 && !gone(); i++ {
		runtime.GC()
		runtime.Gosched()
	}
	wantLimits(t, reg, "the forgotten middleware collected", "live=10")
	if got := testutil.ToFloat64(metrics.StateGauge("open")); got != 0 {
		t.Errorf("failure_state{open} = %v once the failing middleware is gone, want 0", got)
	}
	if got := testutil.ToFloat64(metrics.StateGauge("healthy")); got != 1 {
		t.Errorf("failure_state{healthy} = %v once the failing middleware is gone, want 1", got)
	}
	runtime.KeepAlive(live)
}
