package prommetrics_test

import (
	"math"
	"strings"
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

// TestInvalidNamesWithoutRegistry: New(nil, ...) builds a Metrics for the
// caller to register; an invalid namespace or constant label is an error
// of New then too, not of every later registration or scrape.
func TestInvalidNamesWithoutRegistry(t *testing.T) {
	for name, opt := range map[string]prommetrics.Option{
		"namespace with a dash":     prommetrics.WithNamespace("my-app"),
		"constant label policy":     prommetrics.WithConstLabels(prometheus.Labels{"policy": "x"}),
		"constant label name a-b":   prommetrics.WithConstLabels(prometheus.Labels{"a-b": "x"}),
		"constant label __reserved": prommetrics.WithConstLabels(prometheus.Labels{"__x": "x"}),
	} {
		if _, err := prommetrics.New(nil, opt); err == nil {
			t.Errorf("%s: New(nil) = nil error", name)
		}
		if _, err := prommetrics.New(prometheus.NewRegistry(), opt); err == nil {
			t.Errorf("%s: New(registry) = nil error", name)
		}
	}
	m, err := prommetrics.New(nil, prommetrics.WithNamespace("app"), prommetrics.WithConstLabels(prometheus.Labels{"limiter": "api"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := prometheus.NewPedanticRegistry().Register(m); err != nil {
		t.Errorf("registering a valid Metrics built with New(nil): %v", err)
	}
}

// TestInvalidConstLabelNamedFirstByName: among several invalid constant
// label names, New's error names the first in lexical order, at every
// call. The Prometheus client checks them in the order of the map, and
// New returned its error, naming any of them: this test failed at nearly
// every run before (20 calls, five invalid names).
func TestInvalidConstLabelNamedFirstByName(t *testing.T) {
	labels := prometheus.Labels{"limiter": "api", "e-e": "1", "b-b": "2", "__d": "3", "c c": "4", "f.f": "5"}
	for i := range 20 {
		for _, reg := range []prometheus.Registerer{nil, prometheus.NewRegistry()} {
			_, err := prommetrics.New(reg, prommetrics.WithConstLabels(labels))
			if err == nil || !strings.Contains(err.Error(), `"__d"`) {
				t.Fatalf("call %d: New(%v, WithConstLabels(%v)) = %v, want an error naming \"__d\"", i+1, reg, labels, err)
			}
			for _, other := range []string{"b-b", "c c", "e-e", "f.f"} {
				if strings.Contains(err.Error(), other) {
					t.Fatalf("call %d: error %q names %q too", i+1, err, other)
				}
			}
		}
	}
}
