package otelmetrics_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/otelmetrics"
	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// exporterLike is a prometheus.Collector that exports what reader collects
// of the Observer's instruments as the OpenTelemetry Prometheus exporter
// (v0.69.0) does: the names translated as the package doc says, each
// instrument's description as its help, the attributes as labels beside
// the scope's (otel_scope_name, and otel_scope_version and
// otel_scope_schema_url empty), unless withoutScope (the exporter's
// WithoutScopeInfo). Like the exporter it describes nothing (an
// unchecked collector): registering it beside anything succeeds.
type exporterLike struct {
	reader       *sdkmetric.ManualReader
	withoutScope bool
}

func (exporterLike) Describe(chan<- *prometheus.Desc) {}

func (e exporterLike) Collect(ch chan<- prometheus.Metric) {
	var rm metricdata.ResourceMetrics
	if err := e.reader.Collect(context.Background(), &rm); err != nil {
		ch <- prometheus.NewInvalidMetric(prometheus.NewDesc("exporter_like_error", "", nil, nil), err)
		return
	}
	labels := func(s attribute.Set) (names, values []string) {
		for _, kv := range s.ToSlice() {
			names, values = append(names, string(kv.Key)), append(values, kv.Value.String())
		}
		if !e.withoutScope {
			names = append(names, "otel_scope_name", "otel_scope_version", "otel_scope_schema_url")
			values = append(values, otelmetrics.ScopeName, "", "")
		}
		return names, values
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			name := strings.ReplaceAll(m.Name, ".", "_")
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					names, values := labels(dp.Attributes)
					ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(name+"_total", m.Description, names, nil), prometheus.CounterValue, float64(dp.Value), values...)
				}
			case metricdata.Gauge[int64]:
				for _, dp := range d.DataPoints {
					names, values := labels(dp.Attributes)
					ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(name, m.Description, names, nil), prometheus.GaugeValue, float64(dp.Value), values...)
				}
			case metricdata.Gauge[float64]: // unit "s"
				for _, dp := range d.DataPoints {
					names, values := labels(dp.Attributes)
					ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(name+"_seconds", m.Description, names, nil), prometheus.GaugeValue, dp.Value, values...)
				}
			case metricdata.Histogram[float64]: // unit "s"
				for _, dp := range d.DataPoints {
					names, values := labels(dp.Attributes)
					buckets := make(map[float64]uint64, len(dp.Bounds))
					var cum uint64
					for i, b := range dp.Bounds {
						cum += dp.BucketCounts[i]
						buckets[b] = cum
					}
					ch <- prometheus.MustNewConstHistogram(prometheus.NewDesc(name+"_seconds", m.Description, names, nil), dp.Count, dp.Sum, buckets, values...)
				}
			}
		}
	}
}

// TestNotInOneRegistryWithPrommetrics: the instruments translated to
// Prometheus names are prommetrics' series (the package doc says so, and
// TestSameSignalsAsPrometheus checks it). An application moving from one
// package to the other that exports both into one registry (the
// exporter's default is prometheus.DefaultRegisterer, as the README's
// prommetrics.New is) loses that registry's whole scrape: promhttp answers
// 500, every other metric of the registry with it; with the scope label
// the two help texts of limit_window_seconds clash, without it every
// series does. prommetrics with another namespace beside them scrapes.
func TestNotInOneRegistryWithPrommetrics(t *testing.T) {
	for _, withoutScope := range []bool{false, true} {
		for _, namespace := range []string{"ratekeeper", "app"} {
			reg := prometheus.NewRegistry()
			pm, err := prommetrics.New(reg, prommetrics.WithNamespace(namespace))
			if err != nil {
				t.Fatal(err)
			}
			obs, reader := newObserver(t)
			if err := reg.Register(exporterLike{reader, withoutScope}); err != nil {
				t.Fatalf("registering the exporter: %v", err)
			}
			m := middleware.MustNew(memStore(t), []*policy.Policy{fixed("p", 2, user)}, middleware.WithObserver(pm, obs))
			metrictest.KeepAlive(t, m)
			get(router(m), "/", "X-User", "ann")
			w := httptest.NewRecorder()
			promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
			want := http.StatusOK
			if namespace == "ratekeeper" {
				want = http.StatusInternalServerError
			}
			if w.Code != want {
				t.Errorf("prommetrics of namespace %q and the exporter (without scope: %v) on one registry: scrape %d, want %d\n%s", namespace, withoutScope, w.Code, want, w.Body)
			}
		}
	}
}
