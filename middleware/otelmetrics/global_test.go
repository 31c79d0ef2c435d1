package otelmetrics_test

import (
	"os"
	"os/exec"
	"testing"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/otelmetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// globalChild is set in the environment of the process that runs
// TestSeriesAtZeroGlobalProviderSetLater's scenario: the global
// MeterProvider delegates to the first one set, once per process.
const globalChild = "OTELMETRICS_TEST_GLOBAL_CHILD"

// TestSeriesAtZeroGlobalProviderSetLater: an Observer built on
// otel.GetMeterProvider() before the application sets its SDK with
// otel.SetMeterProvider (the package doc says the global one forwards to
// it) reports a policy's series of requests and errors at zero, as
// prommetrics does, from the first collection: a dashboard or an alert
// on denials reads 0, not an absent series. The Observer and the
// middleware are built before the SDK is set, and one request is served
// after: every outcome and kind has its series, not only the one counted.
// The scenario runs in a process of its own, whose global MeterProvider
// was never set.
func TestSeriesAtZeroGlobalProviderSetLater(t *testing.T) {
	if os.Getenv(globalChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSeriesAtZeroGlobalProviderSetLater$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), globalChild+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the scenario's process: %v\n%s", err, out)
		}
		return
	}
	obs, err := otelmetrics.New(otel.GetMeterProvider())
	if err != nil {
		t.Fatal(err)
	}
	m := middleware.MustNew(memStore(t), []*policy.Policy{fixed("per-ip", 10, remote)}, middleware.WithObserver(obs))
	metrictest.KeepAlive(t, m)

	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { mp.Shutdown(t.Context()) })
	otel.SetMeterProvider(mp)

	points, _ := collect(t, reader)
	wantLines(t, "before the first request", only(points, "ratekeeper.requests")+"\n"+only(points, "ratekeeper.errors"),
		"ratekeeper.requests{outcome=abandoned,policy=per-ip} 0",
		"ratekeeper.requests{outcome=allowed,policy=per-ip} 0",
		"ratekeeper.requests{outcome=denied,policy=per-ip} 0",
		"ratekeeper.requests{outcome=shadow_denied,policy=per-ip} 0",
		"ratekeeper.errors{kind=cost,policy=per-ip} 0",
		"ratekeeper.errors{kind=key,policy=per-ip} 0",
		"ratekeeper.errors{kind=store,policy=per-ip} 0")

	if code := get(router(m), "/"); code != 200 {
		t.Fatalf("status %d", code)
	}
	points, _ = collect(t, reader)
	wantLines(t, "after one request", only(points, "ratekeeper.requests"),
		"ratekeeper.requests{outcome=abandoned,policy=per-ip} 0",
		"ratekeeper.requests{outcome=allowed,policy=per-ip} 1",
		"ratekeeper.requests{outcome=denied,policy=per-ip} 0",
		"ratekeeper.requests{outcome=shadow_denied,policy=per-ip} 0")
}
