package otelmetrics_test

import (
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/otelmetrics"
)

// TestNewReportsEveryOption: New stopped at the first refused option, and
// a nil one said "nil Option" without saying which. Every refused option
// is reported, one per line, a nil one by its index; one alone is the
// option's own error.
func TestNewReportsEveryOption(t *testing.T) {
	mp := sdkmetric.NewMeterProvider()
	_, err := otelmetrics.New(mp, otelmetrics.WithBuckets(), nil, otelmetrics.WithHoldBuckets(2, 1))
	metrictest.ErrLines(t, err, 3, "WithBuckets", "otelmetrics: Options hold a nil Option at index 1", "WithHoldBuckets")
	if _, err := otelmetrics.New(mp, nil); err == nil || err.Error() != "otelmetrics: Options hold a nil Option at index 0" {
		t.Errorf("New(mp, nil) = %v, want the nil option at index 0 alone", err)
	}
}
