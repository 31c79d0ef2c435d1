package otelmetrics_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/otelmetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNoAllocationPerRequest: with the Observer on a real SDK, a request
// allocates no more than without it (the attribute sets are built once
// per policy and outcome), whether admitted or denied, and a give-back or
// a state change allocates nothing.
func TestNoAllocationPerRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: AllocsPerRun runs hundreds of requests")
	}
	obs, reader := newObserver(t)
	build := func(name string, limit int64, opts ...middleware.Option) http.Handler {
		mem, _ := algorithms.NewMemoryStore()
		t.Cleanup(func() { mem.Close() })
		mux := http.NewServeMux()
		mux.Handle("/", middleware.MustNew(mem, []*policy.Policy{fixed(name, limit, remote)}, opts...).
			Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
		return mux
	}
	r := httptest.NewRequest("GET", "/", nil)
	for _, tc := range []struct {
		name  string
		limit int64
	}{{"allowed", 1_000_000}, {"denied", 1}} {
		plain := build("plain-"+tc.name, tc.limit)
		observed := build("observed-"+tc.name, tc.limit, middleware.WithObserver(obs))
		for range 2 { // past the first requests (and the limit of 1)
			plain.ServeHTTP(httptest.NewRecorder(), r)
			observed.ServeHTTP(httptest.NewRecorder(), r)
		}
		a, b, ok := metrictest.AllocsNoMore(200, func() { plain.ServeHTTP(httptest.NewRecorder(), r) }, func() { observed.ServeHTTP(httptest.NewRecorder(), r) })
		t.Logf("%s: %v allocations per request without the Observer, %v with it", tc.name, a, b)
		if !ok {
			t.Errorf("%s: with the Observer %v allocations per request, without %v", tc.name, b, a)
		}
	}
	if n := testing.AllocsPerRun(200, func() { obs.ObserveGiveBack("observed-allowed") }); n != 0 {
		t.Errorf("ObserveGiveBack: %v allocations, want 0", n)
	}
	if n := testing.AllocsPerRun(200, func() {
		obs.ObserveState(middleware.StateHealthy, middleware.StateFailingOpen)
		obs.ObserveState(middleware.StateFailingOpen, middleware.StateHealthy)
	}); n != 0 {
		t.Errorf("ObserveState: %v allocations, want 0", n)
	}
	// The requests were recorded: the comparison above is not of two
	// handlers that both skip the SDK.
	points, _ := collect(t, reader)
	if points["ratekeeper.requests{outcome=denied,policy=observed-denied}"] < 200 {
		t.Errorf("denials not recorded: %v", nonzero(points, "ratekeeper.requests"))
	}
}

// BenchmarkObserved measures one allowed request through a one-policy
// middleware without an observer, and with the Observer on an SDK
// MeterProvider with a manual reader.
func BenchmarkObserved(b *testing.B) {
	for _, withMetrics := range []bool{false, true} {
		name := "metrics=off"
		var opts []middleware.Option
		if withMetrics {
			name = "metrics=on"
			obs, err := otelmetrics.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())))
			if err != nil {
				b.Fatal(err)
			}
			opts = append(opts, middleware.WithObserver(obs))
		}
		b.Run(name, func(b *testing.B) {
			mem, _ := algorithms.NewMemoryStore()
			defer mem.Close()
			h := middleware.MustNew(mem, []*policy.Policy{fixed("p", algorithms.MaxLimit, remote)}, opts...).
				Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			r := httptest.NewRequest("GET", "/", nil)
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(httptest.NewRecorder(), r)
			}
		})
	}
}
