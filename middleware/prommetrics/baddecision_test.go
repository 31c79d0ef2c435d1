package prommetrics_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
)

// TestInvalidDecisionIsAStoreError: a store whose answer its policy cannot
// give (a Delay on a fixed_window) is a failed store call for the
// middleware: it counts one in Stats().StoreErrors and answers under its
// failure mode (failing open: 200; closed: 503; closed in shadow mode:
// served). errors_total{kind="store"} counts it under the policy, as it
// counts any request whose store call failed, and requests_total nothing
// (no decision was used).
func TestInvalidDecisionIsAStoreError(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []middleware.Option
		status int
	}{
		{"fail open", []middleware.Option{middleware.OnStoreError(middleware.FailOpen())}, http.StatusOK},
		{"fail closed", []middleware.Option{middleware.OnStoreError(middleware.FailClosed(time.Second))}, http.StatusServiceUnavailable},
		{"fail closed, shadowed", []middleware.Option{middleware.OnStoreError(middleware.FailClosed(time.Second)), middleware.WithShadow(nil)}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, metrics, _ := metricsAndStore(t)
			metrictest.InvalidDecision(t, metrics, tc.status, tc.opts...)
			if got := testutil.ToFloat64(metrics.ErrorCounter("per-ip", "store")); got != 1 {
				t.Errorf(`errors_total{policy="per-ip",kind="store"} = %v, want 1`, got)
			}
			for _, outcome := range []string{"allowed", "denied", "shadow_denied"} {
				if got := counterValue(t, reg, "ratekeeper_requests_total", "policy", "per-ip", "outcome", outcome); got != 0 {
					t.Errorf(`requests_total{policy="per-ip",outcome=%q} = %v, want 0`, outcome, got)
				}
			}
		})
	}
}

// counterValue returns the value of the counter series of family name in
// reg whose labels include the name-value pairs of labels; the test fails
// when there is none.
func counterValue(t *testing.T, reg prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, lp := range m.GetLabel() {
				have[lp.GetName()] = lp.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue series
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}
