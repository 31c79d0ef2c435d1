package prommetrics_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestWithConstLabelsGivenTwice: options are often put together from two
// lists (a base list of the application's, and a limiter's own), so
// WithConstLabels may come twice. Its labels add up, as its name says:
// the second does not silently drop the first, which would make a second
// Metrics on the registry, told apart by the first, a duplicate
// registration, or leave the metrics without the label a dashboard
// selects by. A name given in both is an error.
func TestWithConstLabelsGivenTwice(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	metrics, err := prommetrics.New(reg,
		prommetrics.WithConstLabels(prometheus.Labels{"limiter": "api"}),
		prommetrics.WithConstLabels(prometheus.Labels{"region": "eu"}))
	if err != nil {
		t.Fatal(err)
	}
	_, _, mem := metricsAndStore(t)
	m := middleware.MustNew(mem, []*policy.Policy{fixed("p", 5, remote)}, middleware.WithObserver(metrics))
	metrictest.KeepAlive(t, m)
	want := `
# HELP ratekeeper_effective_limit The limit enforced per policy, after adaptive and fleet adjustments.
# TYPE ratekeeper_effective_limit gauge
ratekeeper_effective_limit{limiter="api",policy="p",region="eu"} 5
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratekeeper_effective_limit"); err != nil {
		t.Error(err)
	}

	_, err = prommetrics.New(nil,
		prommetrics.WithConstLabels(prometheus.Labels{"limiter": "api"}),
		prommetrics.WithConstLabels(prometheus.Labels{"limiter": "admin"}))
	if err == nil || !strings.Contains(err.Error(), `prommetrics: WithConstLabels: "limiter" given twice`) {
		t.Errorf("the label limiter in two WithConstLabels: New = %v, want an error naming it given twice", err)
	}
}
