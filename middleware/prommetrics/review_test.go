package prommetrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
)

// TestConstLabelLeIsAnError: a constant label "le" is the bucket label of
// the histogram; the Prometheus client panics on it when the histogram is
// built, and New let the panic through.
func TestConstLabelLeIsAnError(t *testing.T) {
	for _, reg := range []prometheus.Registerer{nil, prometheus.NewRegistry()} {
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("New(%v, WithConstLabels(le)) panicked: %v", reg, v)
				}
			}()
			if _, err := prommetrics.New(reg, prommetrics.WithConstLabels(prometheus.Labels{"le": "1"})); err == nil {
				t.Errorf("New(%v, WithConstLabels(le)) = nil error", reg)
			}
		}()
	}
}

// TestRegisteredTwice: a second Metrics on one registry, or the same one
// registered again, is an error, not a panic; with distinct constant
// labels two register side by side.
func TestRegisteredTwice(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := prommetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prommetrics.New(reg); err == nil {
		t.Error("second New on one registry: nil error")
	}
	if err := reg.Register(m); err == nil {
		t.Error("registering the same Metrics again: nil error")
	}
	if _, err := prommetrics.New(reg, prommetrics.WithConstLabels(prometheus.Labels{"limiter": "a"})); err == nil {
		t.Error("a Metrics with constant labels beside one without: nil error (inconsistent label names)")
	}
	reg2 := prometheus.NewPedanticRegistry()
	for _, l := range []string{"a", "b"} {
		if _, err := prommetrics.New(reg2, prommetrics.WithConstLabels(prometheus.Labels{"limiter": l})); err != nil {
			t.Errorf("limiter %s: %v", l, err)
		}
	}
}
