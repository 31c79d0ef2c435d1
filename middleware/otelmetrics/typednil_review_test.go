package otelmetrics_test

import (
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ratekeeper/ratekeeper/middleware/otelmetrics"
)

// TestTypedNilMeterProviderRefused: a *sdkmetric.MeterProvider variable
// never assigned is not an interface nil, so "mp == nil" let it through
// and New panicked in the SDK's Meter. It is refused as a nil one is.
func TestTypedNilMeterProviderRefused(t *testing.T) {
	var mp *sdkmetric.MeterProvider
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("New(nil *sdkmetric.MeterProvider) panicked: %v", p)
		}
	}()
	ob, err := otelmetrics.New(mp)
	want := "otelmetrics: New: MeterProvider is nil (otel.GetMeterProvider() is the global one)"
	if ob != nil || err == nil || err.Error() != want {
		t.Errorf("New(nil *sdkmetric.MeterProvider) = %v, %v; want nil, %q", ob, err, want)
	}
}
