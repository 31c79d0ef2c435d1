package otelmetrics_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/otelmetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// promLabel is what a Prometheus label name may be; the OpenTelemetry
// specification's translation replaces every other character with "_".
var promLabel = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// TestAttributeNamesArePrometheusLabels: every attribute key the
// instruments record, theirs and those of WithAttributes, reaches
// Prometheus, through the OpenTelemetry exporter, as the label of the
// same name that prommetrics gives its metrics: a valid label name that
// the translation leaves as it is, none reserved ("__" prefix), and none
// "le", the bucket label of the decision duration histogram, which a
// histogram's series must not carry (the exposition would hold two "le"
// labels, and a scrape would refuse it).
func TestAttributeNamesArePrometheusLabels(t *testing.T) {
	obs, reader := newObserver(t, otelmetrics.WithAttributes(attribute.String("limiter", "public")))
	store := memStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("per-ip", 1, remote), fixed("per-user", 10, user)}, middleware.WithObserver(obs))
	metrictest.KeepAlive(t, m)
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, hdr := range []string{"ann", "ann", ""} { // allowed, denied, no key
		r := httptest.NewRequest("GET", "/", nil)
		if hdr != "" {
			r.Header.Set("X-User", hdr)
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	seen := map[attribute.Key]bool{}
	check := func(metric string, set attribute.Set) {
		for _, kv := range set.ToSlice() {
			seen[kv.Key] = true
			k := string(kv.Key)
			if !promLabel.MatchString(k) || strings.HasPrefix(k, "__") || k == "le" {
				t.Errorf("%s: attribute %q is no Prometheus label as it is (or is reserved)", metric, k)
			}
		}
	}
	rm := collectRaw(t, reader)
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			switch d := mt.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					check(mt.Name, dp.Attributes)
				}
			case metricdata.Gauge[int64]:
				for _, dp := range d.DataPoints {
					check(mt.Name, dp.Attributes)
				}
			case metricdata.Gauge[float64]:
				for _, dp := range d.DataPoints {
					check(mt.Name, dp.Attributes)
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					check(mt.Name, dp.Attributes)
				}
			default:
				t.Errorf("%s: unexpected data %T", mt.Name, mt.Data)
			}
		}
	}
	// The instruments' own keys, prommetrics' labels.
	for _, k := range []attribute.Key{otelmetrics.AttrPolicy, otelmetrics.AttrOutcome, otelmetrics.AttrKind, otelmetrics.AttrState} {
		if !slices.Contains([]string{"policy", "outcome", "kind", "state"}, string(k)) {
			t.Errorf("attribute %q is none of prommetrics' labels (policy, outcome, kind, state)", k)
		}
		if !seen[k] {
			t.Errorf("attribute %q recorded by no instrument", k)
		}
	}
}
