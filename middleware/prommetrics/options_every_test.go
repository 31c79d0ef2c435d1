package prommetrics_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
)

// TestNewReportsEveryOption: New stopped at the first refused option, and
// a nil one said "nil Option" without saying which. Every refused option
// is reported, one per line, a nil one by its index; one alone is the
// option's own error.
func TestNewReportsEveryOption(t *testing.T) {
	_, err := prommetrics.New(nil, prommetrics.WithNamespace(""), nil, prommetrics.WithBuckets())
	metrictest.ErrLines(t, err, 3, "prommetrics: WithNamespace", "prommetrics: Options hold a nil Option at index 1", "WithBuckets")
	if _, err := prommetrics.New(nil, prommetrics.WithNamespace("x"), nil); err == nil || err.Error() != "prommetrics: Options hold a nil Option at index 1" {
		t.Errorf("New(reg, WithNamespace(x), nil) = %v, want the nil option at index 1 alone", err)
	}
}
