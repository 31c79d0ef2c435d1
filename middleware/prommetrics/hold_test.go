package prommetrics_test

import (
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestHoldSeconds: ratekeeper_hold_seconds{policy,outcome} observes each
// held request once under each leaky_queue policy that delayed it, with
// the time it was held, in the scenario of metrictest.Holds (chi, the
// memory store, a wait that advances the clock). Queue "queue" lets one
// request go a second: the first request goes at once (nothing observed),
// the second is held 1 s and served (outcome allowed, le="1"), the third's
// client leaves 250 ms into its hold of 1 s (outcome abandoned, 0.25 s:
// the time held, not the Delay), the fourth's deadline comes before its
// turn (refused at once, not held: nothing). The fixed window beside the queue, which delays
// nothing, and a queue of a middleware in shadow mode (it holds nothing)
// have no series.
func TestHoldSeconds(t *testing.T) {
	reg, metrics, _ := metricsAndStore(t)
	metrictest.Holds{Queue: "queue", Beside: "per-ip", Shadowed: "shadowed"}.Run(t, metrics)
	want := `
# HELP ratekeeper_hold_seconds Time a request was held for its turn by a leaky_queue policy, per policy and outcome (allowed: served after the hold; abandoned: the hold cut short).
# TYPE ratekeeper_hold_seconds histogram
ratekeeper_hold_seconds_bucket{outcome="abandoned",policy="queue",le="0.001"} 0
ratekeeper_hold_seconds_bucket{outcome="abandoned",policy="queue",le="0.0025"} 0
ratekeeper_hold_seconds_bucket{outcome="abandoned",policy="queue",le="0.005"} 0
ratekeeper_hold_seconds_bucket{outcome="abandoned",policy="queue",le="0.01"} 0
ratekeeper_hold_seconds_bucket{outcome="abandoned",policy="queue",le="0.025"} 0
ratekeeper_hold_seconds_bucket{outcome="abandoned",policy="queue",le="0.05"} 0
ratekeeper_hold_seconds_bucket{outcome="abandoned",policy="queue",le="0.1"} 0
ratekeeper_hold_seconds_bucket{outcome="abandoned",policy="queue",le="0.25"} 1
ratekeeper_hold_seconds_bucket{outcome="abandoned",policy="queue",le="0.5"} 1
ratekeeper_hold_seconds_bucket{outcome="abandoned",policy="queue",le="1"} 1
ratekeeper_hold_seconds_bucket{outcome="abandoned",policy="queue",le="2.5"} 1
ratekeeper_hold_seconds_bucket{outcome="abandoned",policy="queue",le="5"} 1
ratekeeper_hold_seconds_bucket{outcome="abandoned",policy="queue",le="10"} 1
ratekeeper_hold_seconds_bucket{outcome="abandoned",policy="queue",le="30"} 1
ratekeeper_hold_seconds_bucket{outcome="abandoned",policy="queue",le="60"} 1
ratekeeper_hold_seconds_bucket{outcome="abandoned",policy="queue",le="+Inf"} 1
ratekeeper_hold_seconds_sum{outcome="abandoned",policy="queue"} 0.25
ratekeeper_hold_seconds_count{outcome="abandoned",policy="queue"} 1
ratekeeper_hold_seconds_bucket{outcome="allowed",policy="queue",le="0.001"} 0
ratekeeper_hold_seconds_bucket{outcome="allowed",policy="queue",le="0.0025"} 0
ratekeeper_hold_seconds_bucket{outcome="allowed",policy="queue",le="0.005"} 0
ratekeeper_hold_seconds_bucket{outcome="allowed",policy="queue",le="0.01"} 0
ratekeeper_hold_seconds_bucket{outcome="allowed",policy="queue",le="0.025"} 0
ratekeeper_hold_seconds_bucket{outcome="allowed",policy="queue",le="0.05"} 0
ratekeeper_hold_seconds_bucket{outcome="allowed",policy="queue",le="0.1"} 0
ratekeeper_hold_seconds_bucket{outcome="allowed",policy="queue",le="0.25"} 0
ratekeeper_hold_seconds_bucket{outcome="allowed",policy="queue",le="0.5"} 0
ratekeeper_hold_seconds_bucket{outcome="allowed",policy="queue",le="1"} 1
ratekeeper_hold_seconds_bucket{outcome="allowed",policy="queue",le="2.5"} 1
ratekeeper_hold_seconds_bucket{outcome="allowed",policy="queue",le="5"} 1
ratekeeper_hold_seconds_bucket{outcome="allowed",policy="queue",le="10"} 1
ratekeeper_hold_seconds_bucket{outcome="allowed",policy="queue",le="30"} 1
ratekeeper_hold_seconds_bucket{outcome="allowed",policy="queue",le="60"} 1
ratekeeper_hold_seconds_bucket{outcome="allowed",policy="queue",le="+Inf"} 1
ratekeeper_hold_seconds_sum{outcome="allowed",policy="queue"} 1
ratekeeper_hold_seconds_count{outcome="allowed",policy="queue"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratekeeper_hold_seconds"); err != nil {
		t.Error(err)
	}
}

// holdBounds returns the upper bounds of the hold histogram that reg
// gathers (of its first series).
func holdBounds(t *testing.T, reg prometheus.Gatherer) []float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetType() == dto.MetricType_HISTOGRAM && strings.HasSuffix(mf.GetName(), "hold_seconds") {
			var bs []float64
			for _, b := range mf.GetMetric()[0].GetHistogram().GetBucket() {
				bs = append(bs, b.GetUpperBound())
			}
			return bs
		}
	}
	t.Fatal("no hold_seconds histogram")
	return nil
}

// TestHoldBuckets: the hold histogram has DefaultHoldBuckets, read once
// by New (edited later, they change nothing; edited into buckets no
// histogram can have, they are New's error naming them), or those of
// WithHoldBuckets, checked as WithBuckets checks its own; WithBuckets
// leaves them alone, and WithHoldBuckets the decision histogram's.
func TestHoldBuckets(t *testing.T) {
	saved := slices.Clone(prommetrics.DefaultHoldBuckets)
	defer func() { prommetrics.DefaultHoldBuckets = saved }()
	if !slices.Equal(saved, []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}) {
		t.Errorf("DefaultHoldBuckets = %v", saved)
	}

	reg := prometheus.NewPedanticRegistry()
	metrics, err := prommetrics.New(reg, prommetrics.WithBuckets(0.001, 0.01))
	if err != nil {
		t.Fatal(err)
	}
	prommetrics.DefaultHoldBuckets[0] = 42 // after New: not its business
	metrictest.HoldOnce(t, metrics)
	if got := holdBounds(t, reg); !slices.Equal(got, saved) {
		t.Errorf("hold buckets %v, want %v", got, saved)
	}

	reg = prometheus.NewPedanticRegistry()
	if metrics, err = prommetrics.New(reg, prommetrics.WithHoldBuckets(0.5, 2, 8)); err != nil {
		t.Fatal(err)
	}
	metrictest.HoldOnce(t, metrics)
	if got := holdBounds(t, reg); !slices.Equal(got, []float64{0.5, 2, 8}) {
		t.Errorf("WithHoldBuckets(0.5, 2, 8): buckets %v", got)
	}
	if got := histogramBounds(t, reg); !slices.Equal(got, prommetrics.DefaultBuckets) {
		t.Errorf("WithHoldBuckets changed the decision buckets: %v", got)
	}

	for _, b := range [][]float64{{}, {1, 0.5}, {0.1, 0.1}, {math.NaN()}} {
		if _, err := prommetrics.New(nil, prommetrics.WithHoldBuckets(b...)); err == nil || !strings.Contains(err.Error(), "prommetrics: WithHoldBuckets: ") {
			t.Errorf("WithHoldBuckets(%v): %v; want an error naming WithHoldBuckets", b, err)
		}
		prommetrics.DefaultHoldBuckets = b
		if _, err := prommetrics.New(nil); err == nil || !strings.Contains(err.Error(), "prommetrics: DefaultHoldBuckets: ") {
			t.Errorf("DefaultHoldBuckets %v: %v; want an error naming DefaultHoldBuckets", b, err)
		}
		prommetrics.DefaultHoldBuckets = saved
	}
}

// TestHoldAllocations: recording a held request's hold allocates nothing
// once its series exist: a held request allocates no more with the
// metrics than without.
func TestHoldAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: AllocsPerRun runs hundreds of requests")
	}
	metrics, err := prommetrics.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	build := func(opts ...middleware.Option) (http.Handler, *middleware.Middleware) {
		clock := algotest.NewClock(t0)
		mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mem.Close() })
		opts = append(opts, middleware.WithClock(clock), middleware.WithWait(clock.Sleep))
		m := middleware.MustNew(mem, []*policy.Policy{metrictest.QueueEvery("queue", time.Second)}, opts...)
		metrictest.KeepAlive(t, m)
		return m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})), m
	}
	plain, pm := build()
	observed, om := build(middleware.WithObserver(metrics))
	r := httptest.NewRequest("GET", "/", nil)
	for range 2 { // the second is held, and creates the series
		plain.ServeHTTP(httptest.NewRecorder(), r)
		observed.ServeHTTP(httptest.NewRecorder(), r)
	}
	a, b, ok := metrictest.AllocsNoMore(200, func() { plain.ServeHTTP(httptest.NewRecorder(), r) }, func() { observed.ServeHTTP(httptest.NewRecorder(), r) })
	if !ok {
		t.Errorf("a held request: %v allocations with the metrics, %v without", b, a)
	}
	if p, o := pm.Stats().Delayed, om.Stats().Delayed; p < 200 || o < 200 {
		t.Errorf("requests held: %d without the metrics, %d with them; want every one but the first", p, o)
	}
}
