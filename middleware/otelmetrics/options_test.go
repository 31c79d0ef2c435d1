package otelmetrics_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/otelmetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestOptionErrors: bad options are errors of New naming the field, never
// a panic.
func TestOptionErrors(t *testing.T) {
	mp := sdkmetric.NewMeterProvider()
	for _, tc := range []struct {
		name string
		opt  otelmetrics.Option
		want string
	}{
		{"no buckets", otelmetrics.WithBuckets(), "WithBuckets: no buckets"},
		{"buckets decreasing", otelmetrics.WithBuckets(1, 0.5), "WithBuckets: buckets must increase"},
		{"buckets repeated", otelmetrics.WithBuckets(0.1, 0.1), "WithBuckets: buckets must increase"},
		{"bucket NaN", otelmetrics.WithBuckets(0.1, math.NaN()), "WithBuckets: a bucket boundary is NaN"},
		{"bucket +Inf", otelmetrics.WithBuckets(0.1, math.Inf(1)), "WithBuckets: a bucket boundary is +Inf"},
		{"attribute policy", otelmetrics.WithAttributes(attribute.String("policy", "x")), `WithAttributes: key "policy"`},
		{"attribute outcome", otelmetrics.WithAttributes(attribute.String("outcome", "x")), `WithAttributes: key "outcome"`},
		{"attribute kind", otelmetrics.WithAttributes(attribute.String("kind", "x")), `WithAttributes: key "kind"`},
		{"attribute state", otelmetrics.WithAttributes(attribute.String("state", "x")), `WithAttributes: key "state"`},
		{"attribute le", otelmetrics.WithAttributes(attribute.String("le", "x")), `WithAttributes: key "le" is the bucket label`},
		{"attribute empty key", otelmetrics.WithAttributes(attribute.String("", "x")), `WithAttributes: attribute ""`},
		{"attribute twice", otelmetrics.WithAttributes(attribute.String("limiter", "a"), attribute.String("limiter", "b")), `WithAttributes: key "limiter" given twice`},
		{"nil option", nil, "nil Option"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("New panicked: %v", p)
				}
			}()
			_, err := otelmetrics.New(mp, tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "otelmetrics: ") {
				t.Errorf("New(%s) = %v; want an error saying %q", tc.name, err, tc.want)
			}
		})
	}
	if _, err := otelmetrics.New(nil); err == nil || !strings.Contains(err.Error(), "MeterProvider is nil") {
		t.Errorf("New(nil) = %v; want an error naming the MeterProvider", err)
	}
}

// TestDefaultBucketsReadOnce: an Observer keeps the boundaries
// DefaultBuckets had when New read them, and a DefaultBuckets edited into
// something no histogram can have is an error of New naming it.
func TestDefaultBucketsReadOnce(t *testing.T) {
	saved := slices.Clone(otelmetrics.DefaultBuckets)
	defer func() { otelmetrics.DefaultBuckets = saved }()
	obs, reader := newObserver(t)
	otelmetrics.DefaultBuckets[0] = 42
	obs.ObserveRequest(middleware.Event{})
	if _, h := collect(t, reader); !slices.Equal(h.bounds, saved) {
		t.Errorf("bounds after DefaultBuckets[0] = 42: %v, want %v", h.bounds, saved)
	}
	for _, bad := range [][]float64{{1, 0.5}, {}, {math.NaN()}} {
		otelmetrics.DefaultBuckets = bad
		if _, err := otelmetrics.New(sdkmetric.NewMeterProvider()); err == nil || !strings.Contains(err.Error(), "DefaultBuckets") {
			t.Errorf("New with DefaultBuckets %v: %v; want an error naming DefaultBuckets", bad, err)
		}
	}
}

// TestWithAttributesAndBuckets: the attributes of WithAttributes are on
// every series (the histogram's too), beside the instruments' own; two
// Observers on one MeterProvider told apart by them report side by side;
// WithBuckets sets the histogram's boundaries.
func TestWithAttributesAndBuckets(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	for _, limiter := range []string{"a", "b"} {
		obs, err := otelmetrics.New(mp, otelmetrics.WithAttributes(attribute.String("limiter", limiter)), otelmetrics.WithBuckets(0.001, 0.01))
		if err != nil {
			t.Fatal(err)
		}
		m := middleware.MustNew(memStore(t), []*policy.Policy{fixed("p", 1, user)}, middleware.WithObserver(obs))
		metrictest.KeepAlive(t, m)
		h := router(m)
		get(h, "/", "X-User", "ann")
		if limiter == "b" {
			get(h, "/", "X-User", "ann")
		}
	}
	points, _ := collect(t, reader)
	wantLines(t, "collected", nonzero(points, "ratekeeper.requests")+"\n"+only(points, "ratekeeper.effective"),
		"ratekeeper.requests{limiter=a,outcome=allowed,policy=p} 1",
		"ratekeeper.requests{limiter=b,outcome=allowed,policy=p} 1",
		"ratekeeper.requests{limiter=b,outcome=denied,policy=p} 1",
		"ratekeeper.effective_limit{limiter=a,policy=p} 1",
		"ratekeeper.effective_limit{limiter=b,policy=p} 1",
	)
	if got := only(points, "ratekeeper.failure_state{limiter=a,state=healthy}"); got != "ratekeeper.failure_state{limiter=a,state=healthy} 1" {
		t.Errorf("failure state of a: %q", got)
	}
	// The histogram: one point per limiter.
	var n int
	rm := collectRaw(t, reader)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "ratekeeper.decision.duration" {
				continue
			}
			for _, dp := range histPoints(m) {
				n++
				if v, ok := dp.Attributes.Value("limiter"); !ok || (v.AsString() != "a" && v.AsString() != "b") {
					t.Errorf("histogram point %s", attrString(dp.Attributes))
				}
				if !slices.Equal(dp.Bounds, []float64{0.001, 0.01}) {
					t.Errorf("bounds %v, want [0.001 0.01]", dp.Bounds)
				}
			}
		}
	}
	if n != 2 {
		t.Errorf("%d histogram points, want 2", n)
	}
}

// TestBucketsOfTheFirstObserverOnAProvider: the instruments are the
// meter's, one per name, and the SDK keeps the bucket boundaries the
// first Observer built on a MeterProvider advised: a second one's
// WithBuckets and WithHoldBuckets change nothing, as their docs say.
func TestBucketsOfTheFirstObserverOnAProvider(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { mp.Shutdown(t.Context()) })
	first, err := otelmetrics.New(mp, otelmetrics.WithAttributes(attribute.String("limiter", "a")),
		otelmetrics.WithBuckets(0.001, 0.01), otelmetrics.WithHoldBuckets(1, 2))
	if err != nil {
		t.Fatal(err)
	}
	second, err := otelmetrics.New(mp, otelmetrics.WithAttributes(attribute.String("limiter", "b")),
		otelmetrics.WithBuckets(1, 2, 3), otelmetrics.WithHoldBuckets(10, 20, 30))
	if err != nil {
		t.Fatal(err)
	}
	metrictest.HoldOnce(t, first)
	metrictest.HoldOnce(t, second)
	want := map[string][]float64{"ratekeeper.decision.duration": {0.001, 0.01}, "ratekeeper.hold.duration": {1, 2}}
	n := 0
	for _, sm := range collectRaw(t, reader).ScopeMetrics {
		for _, m := range sm.Metrics {
			for _, dp := range histPoints(m) {
				n++
				if !slices.Equal(dp.Bounds, want[m.Name]) {
					t.Errorf("%s%s: bounds %v, want the first Observer's %v", m.Name, attrString(dp.Attributes), dp.Bounds, want[m.Name])
				}
			}
		}
	}
	if n != 4 {
		t.Errorf("%d histogram points, want 4 (two per Observer)", n)
	}
}
