package otelmetrics_test

import (
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ratekeeper/ratekeeper/middleware/otelmetrics"
)

// TestAttributesNotUTF8Refused: an attribute of WithAttributes is on
// every series. Through the OpenTelemetry Prometheus exporter (v0.69.0,
// checked by hand) a key or a string value that is not valid UTF-8 makes
// the registry refuse every series of the instruments, and the scrape of
// the whole registry fails (HTTP 500: `label value "\xff" is not valid
// UTF-8`), as prommetrics.New refuses such a constant label. New refuses
// it, naming it. A string slice, which the exporter writes as escaped
// JSON, and valid non-ASCII text stay accepted.
func TestAttributesNotUTF8Refused(t *testing.T) {
	mp := sdkmetric.NewMeterProvider()
	for _, kv := range []attribute.KeyValue{
		attribute.String("limiter", "api\xff"),
		attribute.String("limiter\xff", "api"),
	} {
		_, err := otelmetrics.New(mp, otelmetrics.WithAttributes(kv))
		if err == nil || !strings.HasPrefix(err.Error(), "otelmetrics: WithAttributes: ") || !strings.Contains(err.Error(), "UTF-8") {
			t.Errorf("WithAttributes(%q=%q): New = %v; want an error saying it is not UTF-8", kv.Key, kv.Value.String(), err)
		}
	}
	for _, kv := range []attribute.KeyValue{
		attribute.StringSlice("limiters", []string{"api", "\xff"}),
		attribute.String("région", "Île-de-France"),
	} {
		if _, err := otelmetrics.New(mp, otelmetrics.WithAttributes(kv)); err != nil {
			t.Errorf("WithAttributes(%q): New = %v; want no error", kv.Key, err)
		}
	}
}
