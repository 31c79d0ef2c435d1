package prommetrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestAccessorsAddNoSeries: StateGauge and ErrorCounter, for tests and
// custom dashboards, read the metrics; asked for a state or an error kind
// that does not exist (a typo, another case), they must not add a series
// to what the registry exports, and they read 0.
func TestAccessorsAddNoSeries(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	middleware.MustNew(mem, []*policy.Policy{fixed("p", 1, remote)}, middleware.WithObserver(metrics))
	before := testutil.CollectAndCount(reg, "ratekeeper_failure_state", "ratekeeper_errors_total")
	for _, s := range []string{"Open", "failing_open", ""} {
		if got := testutil.ToFloat64(metrics.StateGauge(s)); got != 0 {
			t.Errorf("StateGauge(%q) = %v, want 0", s, got)
		}
	}
	for _, kind := range []string{"Store", "timeout", ""} {
		if got := testutil.ToFloat64(metrics.ErrorCounter("p", kind)); got != 0 {
			t.Errorf("ErrorCounter(p, %q) = %v, want 0", kind, got)
		}
	}
	if after := testutil.CollectAndCount(reg, "ratekeeper_failure_state", "ratekeeper_errors_total"); after != before {
		t.Errorf("%d failure_state and errors_total series after the look-ups, %d before", after, before)
	}
	// The states and kinds that exist are the metrics' own series.
	if got := testutil.ToFloat64(metrics.StateGauge("healthy")); got != 1 {
		t.Errorf(`StateGauge("healthy") = %v, want 1`, got)
	}
	metrics.ObserveState(middleware.StateHealthy, middleware.StateFailingClosed)
	if got := testutil.ToFloat64(metrics.StateGauge("closed")); got != 1 {
		t.Errorf(`StateGauge("closed") = %v after a transition to it, want 1`, got)
	}
}
