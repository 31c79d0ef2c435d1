package otelmetrics_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
)

// TestInvalidDecisionIsAStoreError: prommetrics' test of the same name,
// through otelmetrics: a store answer the middleware refuses (a Delay on
// a fixed_window) and fails closed on is one ratekeeper.errors{kind=store}
// under the policy, and no ratekeeper.requests.
func TestInvalidDecisionIsAStoreError(t *testing.T) {
	obs, reader := newObserver(t)
	metrictest.InvalidDecision(t, obs, http.StatusServiceUnavailable, middleware.OnStoreError(middleware.FailClosed(time.Second)))
	points, _ := collect(t, reader)
	wantLines(t, "nonzero counters", nonzero(points, "ratekeeper.errors")+nonzero(points, "ratekeeper.requests"),
		"ratekeeper.errors{kind=store,policy=per-ip} 1")
}
