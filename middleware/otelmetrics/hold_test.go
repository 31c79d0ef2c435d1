package otelmetrics_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/otelmetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// holdPoints returns the data points of ratekeeper.hold.duration as
// "{attrs} count=n sum=s buckets=[...]" lines, sorted, and fails the
// test if its unit is not "s"; nil when it has none.
func holdPoints(t *testing.T, rm metricdata.ResourceMetrics) []string {
	t.Helper()
	var out []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "ratekeeper.hold.duration" {
				continue
			}
			if m.Unit != "s" {
				t.Errorf("ratekeeper.hold.duration: unit %q, want s", m.Unit)
			}
			for _, dp := range histPoints(m) {
				out = append(out, fmt.Sprintf("%s count=%d sum=%v bounds=%v counts=%v", attrString(dp.Attributes), dp.Count, dp.Sum, dp.Bounds, dp.BucketCounts))
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestHoldDuration: ratekeeper.hold.duration{policy,outcome}, in seconds,
// records each held request once under each leaky_queue policy that
// delayed it, as prommetrics' hold_seconds observes it, in the scenario of
// metrictest.Holds (chi, the memory store, a wait that advances the
// clock): the second request
// held 1 s and served (allowed), the third's client leaving 250 ms into
// its hold (abandoned, 0.25 s), the fourth refused at once as its
// deadline comes before its turn (nothing), and neither the fixed window
// beside the queue nor a queue of a shadow middleware recording anything.
// The boundaries are DefaultHoldBuckets.
func TestHoldDuration(t *testing.T) {
	obs, reader := newObserver(t)
	metrictest.Holds{Queue: "queue", Beside: "per-ip", Shadowed: "shadowed"}.Run(t, obs)
	bounds := "[0.001 0.0025 0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10 30 60]"
	want := []string{
		"{outcome=abandoned,policy=queue} count=1 sum=0.25 bounds=" + bounds + " counts=[0 0 0 0 0 0 0 1 0 0 0 0 0 0 0 0]",
		"{outcome=allowed,policy=queue} count=1 sum=1 bounds=" + bounds + " counts=[0 0 0 0 0 0 0 0 0 1 0 0 0 0 0 0]",
	}
	if got := holdPoints(t, collectRaw(t, reader)); !slices.Equal(got, want) {
		t.Errorf("ratekeeper.hold.duration:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestHoldBuckets: the hold histogram advises DefaultHoldBuckets, read
// once by New (edited later, they change nothing; edited into boundaries
// no histogram can have, they are New's error naming them), or those of
// WithHoldBuckets, checked as WithBuckets checks its own; WithBuckets
// leaves them alone.
func TestHoldBuckets(t *testing.T) {
	saved := slices.Clone(otelmetrics.DefaultHoldBuckets)
	defer func() { otelmetrics.DefaultHoldBuckets = saved }()
	if !slices.Equal(saved, []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}) {
		t.Errorf("DefaultHoldBuckets = %v", saved)
	}
	boundsOf := func(reader *sdkmetric.ManualReader) []float64 {
		for _, sm := range collectRaw(t, reader).ScopeMetrics {
			for _, m := range sm.Metrics {
				if ps := histPoints(m); m.Name == "ratekeeper.hold.duration" && len(ps) > 0 {
					return ps[0].Bounds
				}
			}
		}
		t.Fatal("no ratekeeper.hold.duration point")
		return nil
	}
	obs, reader := newObserver(t, otelmetrics.WithBuckets(0.001, 0.01))
	otelmetrics.DefaultHoldBuckets[0] = 42 // after New: not its business
	metrictest.HoldOnce(t, obs)
	if got := boundsOf(reader); !slices.Equal(got, saved) {
		t.Errorf("hold boundaries %v, want %v", got, saved)
	}
	obs, reader = newObserver(t, otelmetrics.WithHoldBuckets(0.5, 2, 8))
	metrictest.HoldOnce(t, obs)
	if got := boundsOf(reader); !slices.Equal(got, []float64{0.5, 2, 8}) {
		t.Errorf("WithHoldBuckets(0.5, 2, 8): boundaries %v", got)
	}
	for _, b := range [][]float64{{}, {1, 0.5}, {math.NaN()}, {1, math.Inf(1)}} {
		if _, err := otelmetrics.New(sdkmetric.NewMeterProvider(), otelmetrics.WithHoldBuckets(b...)); err == nil || !strings.Contains(err.Error(), "otelmetrics: WithHoldBuckets: ") {
			t.Errorf("WithHoldBuckets(%v): %v; want an error naming WithHoldBuckets", b, err)
		}
		otelmetrics.DefaultHoldBuckets = b
		if _, err := otelmetrics.New(sdkmetric.NewMeterProvider()); err == nil || !strings.Contains(err.Error(), "otelmetrics: DefaultHoldBuckets: ") {
			t.Errorf("DefaultHoldBuckets %v: %v; want an error naming DefaultHoldBuckets", b, err)
		}
		otelmetrics.DefaultHoldBuckets = saved
	}
}

// TestHoldAllocationsAndExemplar: recording a hold allocates nothing (a
// held request allocates no more with the Observer than without), and is
// made with the request's context: an SDK sampling exemplars links it to
// the request's trace.
func TestHoldAllocationsAndExemplar(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: AllocsPerRun runs hundreds of requests")
	}
	obs, reader := newObserver(t)
	plain := metrictest.NewHoldRun(t, &nopObserver{}, []*policy.Policy{metrictest.QueueEvery("plain", time.Second)})
	observed := metrictest.NewHoldRun(t, obs, []*policy.Policy{metrictest.QueueEvery("observed", time.Second)})
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:     trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8},
		TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	for range 2 { // the second is held
		plain.Do(ctx)
		observed.Do(ctx)
	}
	a, b, ok := metrictest.AllocsNoMore(200, func() { plain.Do(ctx) }, func() { observed.Do(ctx) })
	if !ok {
		t.Errorf("a held request: %v allocations with the Observer, %v without", b, a)
	}
	if p, o := plain.M.Stats().Delayed, observed.M.Stats().Delayed; p < 200 || o < 200 {
		t.Errorf("requests held: %d without the Observer, %d with it; want every one but the first", p, o)
	}
	var exemplars int
	for _, sm := range collectRaw(t, reader).ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "ratekeeper.hold.duration" {
				continue
			}
			for _, dp := range histPoints(m) {
				for _, ex := range dp.Exemplars {
					if tid := sc.TraceID(); !bytes.Equal(ex.TraceID, tid[:]) {
						t.Errorf("hold exemplar of trace %x, want %s", ex.TraceID, sc.TraceID())
					}
					exemplars++
				}
			}
		}
	}
	if exemplars == 0 {
		t.Error("ratekeeper.hold.duration: no exemplar of the request's trace")
	}
}

// nopObserver observes nothing.
type nopObserver struct{}

func (nopObserver) ObserveRequest(middleware.Event)        {}
func (nopObserver) ObserveState(from, to middleware.State) {}
func (nopObserver) ObserveLimit(string, int64, int64)      {}
