package prommetrics_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// ctxStore fails a Take whose context is done, as a network store does.
type ctxStore struct{ *switchable }

func (s ctxStore) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.switchable.Take(ctx, checks...)
}

// TestOutcomesCounted: the outcomes TestMetrics does not reach are
// counted as the package doc says: a cost out of range is errors{cost}
// and nothing else; a store failure failing closed is errors{store} for
// each policy; a request whose client went away before the decision
// (Abandoned) is neither a store error nor a decision: it counts as
// outcome "abandoned".
func TestOutcomesCounted(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	store := ctxStore{&switchable{Store: mem}}
	costly := policy.Must(policy.New("costly", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}, remote,
		policy.WithCost(func(r *http.Request) int64 {
			if r.URL.Path == "/huge" {
				return 11
			}
			return 1
		})))
	m := middleware.MustNew(store, []*policy.Policy{costly}, middleware.WithObserver(metrics),
		middleware.OnStoreError(middleware.FailClosed(time.Second)), middleware.WithBreaker(0, 0))
	metrictest.KeepAlive(t, m)
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	do := func(path string, ctx context.Context) int {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", path, nil).WithContext(ctx))
		return w.Code
	}
	bg := context.Background()
	if code := do("/", bg); code != 200 {
		t.Fatalf("allowed: %d", code)
	}
	if code := do("/huge", bg); code == 200 {
		t.Errorf("cost 11 of 10: %d", code)
	}
	gone, cancel := context.WithCancel(bg)
	cancel()
	if code := do("/", gone); code != http.StatusServiceUnavailable {
		t.Errorf("abandoned: %d, want 503", code)
	}
	store.down.Store(true)
	if code := do("/", bg); code != http.StatusServiceUnavailable {
		t.Errorf("failed closed: %d, want 503", code)
	}
	want := `
# HELP ratekeeper_requests_total Requests decided, per policy and outcome (allowed, denied, shadow_denied, abandoned).
# TYPE ratekeeper_requests_total counter
ratekeeper_requests_total{outcome="abandoned",policy="costly"} 1
ratekeeper_requests_total{outcome="allowed",policy="costly"} 1
ratekeeper_requests_total{outcome="denied",policy="costly"} 0
ratekeeper_requests_total{outcome="shadow_denied",policy="costly"} 0
# HELP ratekeeper_errors_total Failures per policy and kind (store, key, cost).
# TYPE ratekeeper_errors_total counter
ratekeeper_errors_total{kind="cost",policy="costly"} 1
ratekeeper_errors_total{kind="key",policy="costly"} 0
ratekeeper_errors_total{kind="store",policy="costly"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratekeeper_requests_total", "ratekeeper_errors_total"); err != nil {
		t.Error(err)
	}
	if got := testutil.CollectAndCount(metrics, "ratekeeper_decision_seconds"); got != 1 {
		t.Errorf("decision_seconds: %d series, want 1", got)
	}
}
