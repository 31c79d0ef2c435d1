package prommetrics_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
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
# HELP ratekeeper_requests_total Requests decided, per policy and outcome (allowed, denied, shadow_denied, abandoned).
# TYPE ratekeeper_requests_total counter
ratekeeper_requests_total{outcome="abandoned",policy="per-ip"} 0
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
	metrictest.KeepAlive(t, m)
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
	// requests 4, errors 3, histogram 1, failure_state 4, limits 2,
	// window 1.
	if series != 15 {
		t.Errorf("%d series after 50 clients, want 15", series)
	}
	if got := testutil.ToFloat64(metrics.ErrorCounter("per-user", "key")); got != 0 {
		t.Errorf("errors{key} = %v, want 0", got)
	}
}

// TestConcurrentRequestsReloadsAndScrapes: requests, reloads adding and
// removing a policy, state transitions and scrapes run at once (for
// -race); the counts add up afterwards, the removed policy's limit gauges
// are gone and the failure state is back to healthy.
func TestConcurrentRequestsReloadsAndScrapes(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	m := middleware.MustNew(mem, []*policy.Policy{fixed("kept", 1_000_000, user)}, middleware.WithObserver(metrics))
	metrictest.KeepAlive(t, m)
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	flapping := policy.Must(policy.New("flapping", fixed("x", 10, user).Spec(), user, policy.WithMethods("POST")))
	var wg sync.WaitGroup
	const workers, perWorker = 4, 200
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				serve(h, "X-User", fmt.Sprintf("u%d-%d", w, i))
			}
		})
	}
	wg.Go(func() {
		for i := range 51 {
			ps := []*policy.Policy{m.Configured("kept")}
			if i%2 == 1 {
				ps = append(ps, flapping) // applies to no request served
			}
			if err := m.SetPolicies(ps); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Go(func() {
		for range 100 {
			metrics.ObserveState(middleware.StateHealthy, middleware.StateFailingOpen)
			metrics.ObserveState(middleware.StateFailingOpen, middleware.StateHealthy)
		}
	})
	wg.Go(func() {
		for range 50 {
			if _, err := reg.Gather(); err != nil {
				t.Error(err)
				return
			}
		}
	})
	hangguard.Run(t, time.Minute, "requests, reloads, transitions and scrapes", wg.Wait)
	want := `
# HELP ratekeeper_requests_total Requests decided, per policy and outcome (allowed, denied, shadow_denied, abandoned).
# TYPE ratekeeper_requests_total counter
ratekeeper_requests_total{outcome="abandoned",policy="flapping"} 0
ratekeeper_requests_total{outcome="abandoned",policy="kept"} 0
ratekeeper_requests_total{outcome="allowed",policy="flapping"} 0
ratekeeper_requests_total{outcome="allowed",policy="kept"} 800
ratekeeper_requests_total{outcome="denied",policy="flapping"} 0
ratekeeper_requests_total{outcome="denied",policy="kept"} 0
ratekeeper_requests_total{outcome="shadow_denied",policy="flapping"} 0
ratekeeper_requests_total{outcome="shadow_denied",policy="kept"} 0
# HELP ratekeeper_effective_limit The limit enforced per policy, after adaptive and fleet adjustments.
# TYPE ratekeeper_effective_limit gauge
ratekeeper_effective_limit{policy="kept"} 1e+06
# HELP ratekeeper_failure_state 1 for each failure state (open, closed, fallback) an observed middleware is in; healthy is 1 when none is failing.
# TYPE ratekeeper_failure_state gauge
ratekeeper_failure_state{state="closed"} 0
ratekeeper_failure_state{state="fallback"} 0
ratekeeper_failure_state{state="healthy"} 1
ratekeeper_failure_state{state="open"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"ratekeeper_requests_total", "ratekeeper_effective_limit", "ratekeeper_failure_state"); err != nil {
		t.Error(err)
	}
}

// TestEventWithoutResult: an Event without a Result (not one the
// middleware makes, but one an application's own fan-out or test may
// pass) records its latency and counts nothing, as otelmetrics does,
// rather than panicking on the request's goroutine.
func TestEventWithoutResult(t *testing.T) {
	reg, metrics, _ := metricsAndStore(t)
	func() {
		defer func() {
			if v := recover(); v != nil {
				t.Fatalf("ObserveRequest(Event{Result: nil}) panicked: %v", v)
			}
		}()
		metrics.ObserveRequest(middleware.Event{Outcome: middleware.Denied, Latency: 2 * time.Millisecond})
	}()
	if n := testutil.CollectAndCount(reg, "ratekeeper_requests_total", "ratekeeper_errors_total"); n != 0 {
		t.Errorf("%d request or error series, want 0", n)
	}
	want := `
# HELP ratekeeper_decision_seconds Time to decide a request: key extraction and the store call.
# TYPE ratekeeper_decision_seconds histogram
ratekeeper_decision_seconds_bucket{le="1e-06"} 0
ratekeeper_decision_seconds_bucket{le="2.5e-06"} 0
ratekeeper_decision_seconds_bucket{le="5e-06"} 0
ratekeeper_decision_seconds_bucket{le="1e-05"} 0
ratekeeper_decision_seconds_bucket{le="2.5e-05"} 0
ratekeeper_decision_seconds_bucket{le="5e-05"} 0
ratekeeper_decision_seconds_bucket{le="0.0001"} 0
ratekeeper_decision_seconds_bucket{le="0.00025"} 0
ratekeeper_decision_seconds_bucket{le="0.0005"} 0
ratekeeper_decision_seconds_bucket{le="0.001"} 0
ratekeeper_decision_seconds_bucket{le="0.0025"} 1
ratekeeper_decision_seconds_bucket{le="0.005"} 1
ratekeeper_decision_seconds_bucket{le="0.01"} 1
ratekeeper_decision_seconds_bucket{le="0.025"} 1
ratekeeper_decision_seconds_bucket{le="0.05"} 1
ratekeeper_decision_seconds_bucket{le="0.1"} 1
ratekeeper_decision_seconds_bucket{le="0.25"} 1
ratekeeper_decision_seconds_bucket{le="0.5"} 1
ratekeeper_decision_seconds_bucket{le="1"} 1
ratekeeper_decision_seconds_bucket{le="+Inf"} 1
ratekeeper_decision_seconds_sum 0.002
ratekeeper_decision_seconds_count 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratekeeper_decision_seconds"); err != nil {
		t.Error(err)
	}
}

// TestBreakerOpenIsAStoreError: a request the open circuit breaker keeps
// from the store counts in errors_total{kind="store"}, as a failed call
// does and as Stats.StoreErrors counts it, and not as a decision.
func TestBreakerOpenIsAStoreError(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	store := &switchable{Store: mem}
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, remote)}, middleware.WithObserver(metrics),
		middleware.WithClock(algotest.NewClock(t0)), middleware.WithBreaker(1, time.Minute))
	metrictest.KeepAlive(t, m)
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	store.down.Store(true)
	serve(h) // fails: opens the breaker
	serve(h) // kept from the store
	st := m.Stats()
	if st.BreakerOpen != 1 || st.StoreErrors != 2 {
		t.Fatalf("Stats: BreakerOpen %d StoreErrors %d, want 1 and 2", st.BreakerOpen, st.StoreErrors)
	}
	if got := testutil.ToFloat64(metrics.ErrorCounter("p", "store")); got != 2 {
		t.Errorf("errors{p,store} = %v, want 2", got)
	}
	want := `
# HELP ratekeeper_requests_total Requests decided, per policy and outcome (allowed, denied, shadow_denied, abandoned).
# TYPE ratekeeper_requests_total counter
ratekeeper_requests_total{outcome="abandoned",policy="p"} 0
ratekeeper_requests_total{outcome="allowed",policy="p"} 0
ratekeeper_requests_total{outcome="denied",policy="p"} 0
ratekeeper_requests_total{outcome="shadow_denied",policy="p"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratekeeper_requests_total"); err != nil {
		t.Error(err)
	}
}
