package otelmetrics_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/otelmetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestExemplarsLinkTheRequestsTrace: the measurements are made with the
// request's context, as the package doc says, so an SDK sampling
// exemplars (its default filter: measurements in a sampled trace) links
// the decision's duration and the request's count to the request's trace.
func TestExemplarsLinkTheRequestsTrace(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { mp.Shutdown(context.Background()) })
	obs, err := otelmetrics.New(mp)
	if err != nil {
		t.Fatal(err)
	}
	m := middleware.MustNew(memStore(t), []*policy.Policy{fixed("p", 10, remote)}, middleware.WithObserver(obs))
	metrictest.KeepAlive(t, m)
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:     trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8},
		TraceFlags: trace.FlagsSampled,
	})
	r := httptest.NewRequest("GET", "/", nil)
	r = r.WithContext(trace.ContextWithSpanContext(r.Context(), sc))
	w := httptest.NewRecorder()
	router(m).ServeHTTP(w, r)
	if w.Code != 200 {
		t.Fatalf("traced request: %d", w.Code)
	}
	rm := collectRaw(t, reader)
	found := map[string]bool{}
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			var traces [][]byte
			switch d := mt.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					for _, ex := range dp.Exemplars {
						traces = append(traces, ex.TraceID)
					}
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					for _, ex := range dp.Exemplars {
						traces = append(traces, ex.TraceID)
					}
				}
			}
			for _, id := range traces {
				if tid := sc.TraceID(); !bytes.Equal(id, tid[:]) {
					t.Errorf("%s: exemplar of trace %x, want %s", mt.Name, id, sc.TraceID())
				}
				found[mt.Name] = true
			}
		}
	}
	for _, name := range []string{"ratekeeper.requests", "ratekeeper.decision.duration"} {
		if !found[name] {
			t.Errorf("%s: no exemplar of the request's trace", name)
		}
	}
}
