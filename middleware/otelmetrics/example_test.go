package otelmetrics_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/otelmetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// The middleware's decisions as OpenTelemetry metrics. A service passes
// its MeterProvider (otel.GetMeterProvider(), or the SDK's with an OTLP or
// Prometheus exporter); here a manual reader collects them.
func Example() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	obs, err := otelmetrics.New(mp)
	if err != nil {
		fmt.Println(err)
		return
	}
	store, _ := algorithms.NewMemoryStore()
	defer store.Close()
	m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.PerMinute("per-ip", 2, keyfunc.Must(keyfunc.IP())))},
		middleware.WithObserver(obs))
	// Kept until after the collection below: a middleware dropped is
	// counted out of the limit gauges once the garbage collector finds it
	// unreachable, which may come before the collection.
	defer m.Close()

	mux := http.NewServeMux()
	mux.Handle("/", m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	for range 3 {
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		fmt.Println(err)
		return
	}
	var lines []string
	for _, sm := range rm.ScopeMetrics {
		for _, metric := range sm.Metrics {
			switch data := metric.Data.(type) {
			case metricdata.Sum[int64]: // requests, errors, given_back: requests here
				if metric.Name != "ratekeeper.requests" {
					continue
				}
				for _, dp := range data.DataPoints {
					outcome, _ := dp.Attributes.Value(otelmetrics.AttrOutcome)
					p, _ := dp.Attributes.Value(otelmetrics.AttrPolicy)
					lines = append(lines, fmt.Sprintf("%s policy=%s outcome=%s: %d", metric.Name, p.String(), outcome.String(), dp.Value))
				}
			case metricdata.Gauge[int64]:
				for _, dp := range data.DataPoints {
					if p, ok := dp.Attributes.Value(otelmetrics.AttrPolicy); ok {
						lines = append(lines, fmt.Sprintf("%s policy=%s: %d", metric.Name, p.String(), dp.Value))
					}
				}
			case metricdata.Histogram[float64]:
				lines = append(lines, fmt.Sprintf("%s: %d decisions", metric.Name, data.DataPoints[0].Count))
			}
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// ratekeeper.configured_limit policy=per-ip: 2
	// ratekeeper.decision.duration: 3 decisions
	// ratekeeper.effective_limit policy=per-ip: 2
	// ratekeeper.requests policy=per-ip outcome=abandoned: 0
	// ratekeeper.requests policy=per-ip outcome=allowed: 2
	// ratekeeper.requests policy=per-ip outcome=denied: 1
	// ratekeeper.requests policy=per-ip outcome=shadow_denied: 0
}

// A middleware rebuilt from a new configuration (rather than reloaded in
// place) and the old one closed, both given the one Observer: the limit
// gauges report the new middleware's policies alone once the old one is
// closed (its burst gauge goes; per-ip is the new one's).
func ExampleObserver_rebuilt() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	obs, err := otelmetrics.New(mp)
	if err != nil {
		fmt.Println(err)
		return
	}
	store, _ := algorithms.NewMemoryStore()
	defer store.Close()
	ip := keyfunc.Must(keyfunc.IP())
	old := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.PerMinute("per-ip", 100, ip)), policy.Must(policy.PerSecond("burst", 10, ip)),
	}, middleware.WithObserver(obs))
	m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.PerMinute("per-ip", 200, ip))},
		middleware.WithObserver(obs))
	defer m.Close()
	old.Close()

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		fmt.Println(err)
		return
	}
	for _, sm := range rm.ScopeMetrics {
		for _, metric := range sm.Metrics {
			if g, ok := metric.Data.(metricdata.Gauge[int64]); ok && metric.Name == "ratekeeper.effective_limit" {
				for _, dp := range g.DataPoints {
					p, _ := dp.Attributes.Value(otelmetrics.AttrPolicy)
					fmt.Printf("%s policy=%s: %d\n", metric.Name, p.String(), dp.Value)
				}
			}
		}
	}
	// Output:
	// ratekeeper.effective_limit policy=per-ip: 200
}
