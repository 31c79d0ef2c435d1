package prommetrics_test

import (
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
)

// TestBadBucketsAreErrors: buckets out of order, repeated or NaN are an
// error of New, like an empty list; the Prometheus client panics on the
// first two, and New let the panic through.
func TestBadBucketsAreErrors(t *testing.T) {
	for _, b := range [][]float64{{1, 0.5}, {0.1, 0.1}, {math.NaN()}, {0.1, math.NaN(), 1}} {
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("New(WithBuckets(%v)) panicked: %v", b, v)
				}
			}()
			if _, err := prommetrics.New(prometheus.NewRegistry(), prommetrics.WithBuckets(b...)); err == nil {
				t.Errorf("New(WithBuckets(%v)) = nil error", b)
			}
		}()
	}
	if _, err := prommetrics.New(prometheus.NewRegistry(), prommetrics.WithBuckets(0.001, 0.01, math.Inf(1))); err != nil {
		t.Errorf("increasing buckets ending at +Inf: %v", err)
	}
}
