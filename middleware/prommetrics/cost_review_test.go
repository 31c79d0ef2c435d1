package prommetrics_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCostBeyondSeveralPoliciesCounted: a request whose cost is above the
// capacity of two of its three policies counts in errors_total{kind=cost}
// under both, in a real registry's gathering.
func TestCostBeyondSeveralPoliciesCounted(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	cost := policy.WithCost(func(r *http.Request) int64 {
		n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
		return n
	})
	spec := func(limit int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: limit, Window: time.Minute}
	}
	m := middleware.MustNew(mem, []*policy.Policy{
		policy.Must(policy.New("medium", spec(10), remote, cost)),
		policy.Must(policy.New("large", spec(100), remote, cost)),
		policy.Must(policy.New("small", spec(5), remote, cost)),
	}, middleware.WithObserver(metrics))
	metrictest.KeepAlive(t, m)
	mux := http.NewServeMux()
	mux.Handle("GET /", m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	if code := serve(mux, "X-Cost", "20"); code != http.StatusTooManyRequests {
		t.Fatalf("cost 20: %d, want 429", code)
	}
	want := `
# HELP ratekeeper_errors_total Failures per policy and kind (store, key, cost).
# TYPE ratekeeper_errors_total counter
ratekeeper_errors_total{kind="cost",policy="large"} 0
ratekeeper_errors_total{kind="cost",policy="medium"} 1
ratekeeper_errors_total{kind="cost",policy="small"} 1
ratekeeper_errors_total{kind="key",policy="large"} 0
ratekeeper_errors_total{kind="key",policy="medium"} 0
ratekeeper_errors_total{kind="key",policy="small"} 0
ratekeeper_errors_total{kind="store",policy="large"} 0
ratekeeper_errors_total{kind="store",policy="medium"} 0
ratekeeper_errors_total{kind="store",policy="small"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratekeeper_errors_total"); err != nil {
		t.Error(err)
	}
}
