package prommetrics_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
)

// histogramBounds returns the upper bounds of the decision latency
// histogram that reg gathers.
func histogramBounds(t *testing.T, reg *prometheus.Registry) []float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetType() == dto.MetricType_HISTOGRAM && strings.HasSuffix(mf.GetName(), "decision_seconds") {
			var bs []float64
			for _, b := range mf.GetMetric()[0].GetHistogram().GetBucket() {
				bs = append(bs, b.GetUpperBound())
			}
			return bs
		}
	}
	t.Fatal("no decision_seconds histogram")
	return nil
}

// DefaultBuckets is an exported variable: a Metrics keeps the buckets it
// had when New read it, and a DefaultBuckets edited into something no
// histogram can have is an error from New, not a panic.
func TestDefaultBucketsReadOnce(t *testing.T) {
	saved := slices.Clone(prommetrics.DefaultBuckets)
	defer func() { prommetrics.DefaultBuckets = saved }()

	reg := prometheus.NewRegistry()
	if _, err := prommetrics.New(reg); err != nil {
		t.Fatal(err)
	}
	want := histogramBounds(t, reg)
	prommetrics.DefaultBuckets[0] = 42 // after New: not its business
	if got := histogramBounds(t, reg); !slices.Equal(got, want) {
		t.Errorf("histogram bounds after DefaultBuckets[0] = 42: %v; want %v", got, want)
	}

	for _, bad := range [][]float64{{1, 0.5}, {}, {0.1, 0.1}} {
		prommetrics.DefaultBuckets = bad
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("New with DefaultBuckets %v panicked: %v", bad, p)
				}
			}()
			if _, err := prommetrics.New(nil); err == nil || !strings.Contains(err.Error(), "DefaultBuckets") {
				t.Errorf("New with DefaultBuckets %v: error %v; want one naming DefaultBuckets", bad, err)
			}
		}()
	}
}
