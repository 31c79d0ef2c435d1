package prommetrics_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestSeriesAtZeroOnceReported: a policy's requests and errors series
// exist, at zero, from the moment the middleware reports the policy (its
// limit, when the rule set is built), before its first request, so that a
// dashboard or an alert on denials reads 0 rather than an absent series.
// otelmetrics' package doc says prommetrics reports them so.
func TestSeriesAtZeroOnceReported(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	middleware.MustNew(mem, []*policy.Policy{fixed("per-ip", 3, remote)}, middleware.WithObserver(metrics))
	want := `
# HELP ratekeeper_requests_total Requests decided, per policy and outcome (allowed, denied, shadow_denied).
# TYPE ratekeeper_requests_total counter
ratekeeper_requests_total{outcome="allowed",policy="per-ip"} 0
ratekeeper_requests_total{outcome="denied",policy="per-ip"} 0
ratekeeper_requests_total{outcome="shadow_denied",policy="per-ip"} 0
# HELP ratekeeper_errors_total Failures per policy and kind (store, key, cost).
# TYPE ratekeeper_errors_total counter
ratekeeper_errors_total{kind="cost",policy="per-ip"} 0
ratekeeper_errors_total{kind="key",policy="per-ip"} 0
ratekeeper_errors_total{kind="store",policy="per-ip"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratekeeper_requests_total", "ratekeeper_errors_total"); err != nil {
		t.Errorf("before the first request: %v", err)
	}
}

// TestNoClientKeyInLabels: whatever the clients' keys, the series are one
// per policy and outcome (or kind): no label takes a key's value.
func TestNoClientKeyInLabels(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	m := middleware.MustNew(mem, []*policy.Policy{fixed("per-user", 1, user)}, middleware.WithObserver(metrics))
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for i := range 50 {
		u := fmt.Sprintf("user-%d", i)
		serve(h, "X-User", u)
		serve(h, "X-User", u)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := 0
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			series++
			for _, lp := range mt.GetLabel() {
				if strings.Contains(lp.GetValue(), "user-") {
					t.Errorf("%s{%s=%q} holds a client key", mf.GetName(), lp.GetName(), lp.GetValue())
				}
			}
		}
	}
	// requests 3, errors 3, histogram 1, failure_state 4, limits 2.
	if series != 13 {
		t.Errorf("%d series after 50 clients, want 13", series)
	}
	if got := testutil.ToFloat64(metrics.ErrorCounter("per-user", "key")); got != 0 {
		t.Errorf("errors{key} = %v, want 0", got)
	}
}
