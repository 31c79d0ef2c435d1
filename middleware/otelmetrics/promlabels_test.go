package otelmetrics_test

import (
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ratekeeper/ratekeeper/middleware/otelmetrics"
)

// TestAttributesPrometheusRefuses: a WithAttributes key that becomes, in
// Prometheus, a label of the exporter's own (otel_scope_name,
// otel_scope_version, otel_scope_schema_url, which the OpenTelemetry
// Prometheus exporter puts on every series) or a reserved one (a "__"
// prefix) is New's error, as "le" is: through the exporter (v0.69.0,
// checked by hand), every series of the instruments then carries the label
// twice, or an invalid one, and the scrape of the whole registry fails
// (HTTP 500: "duplicate label names in constant and variable labels for
// metric \"ratekeeper_requests_total\"", "\"__name__\" is not a valid
// label name"). Keys that merely look alike stay accepted.
func TestAttributesPrometheusRefuses(t *testing.T) {
	mp := sdkmetric.NewMeterProvider()
	for _, key := range []string{"otel.scope.name", "otel_scope_version", "otel.scope.schema_url", "otel_scope_x", "__name__", "__x", "._x"} {
		_, err := otelmetrics.New(mp, otelmetrics.WithAttributes(attribute.String(key, "v")))
		if err == nil || !strings.HasPrefix(err.Error(), "otelmetrics: WithAttributes: ") || !strings.Contains(err.Error(), `"`+key+`"`) {
			t.Errorf("WithAttributes(%q): New = %v; want an error naming the key", key, err)
		}
	}
	for _, key := range []string{"limiter", "limiter.name", "_x", "1x", "service.name", "scope", "otelx"} {
		if _, err := otelmetrics.New(mp, otelmetrics.WithAttributes(attribute.String(key, "v"))); err != nil {
			t.Errorf("WithAttributes(%q): New = %v; want no error", key, err)
		}
	}
}
