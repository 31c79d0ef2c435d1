package prommetrics_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
)

// TestDuplicateRegistration: a second Metrics of the same names on one
// registry (two middlewares each building their own, as for two routers)
// is an error that says what to do, and still an
// AlreadyRegisteredError. It was the client library's bare "duplicate
// metrics collector registration attempted", naming neither the package
// nor the way out.
func TestDuplicateRegistration(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := prommetrics.New(reg); err != nil {
		t.Fatal(err)
	}
	_, err := prommetrics.New(reg)
	var are prometheus.AlreadyRegisteredError
	if err == nil || !errors.As(err, &are) {
		t.Fatalf("second New on one registry: %v, want an AlreadyRegisteredError", err)
	}
	for _, want := range []string{"prommetrics:", "share one Metrics", "WithConstLabels"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// Told apart by a constant label, each registers.
	labelled := prometheus.NewRegistry()
	for _, limiter := range []string{"a", "b"} {
		if _, err := prommetrics.New(labelled, prommetrics.WithConstLabels(prometheus.Labels{"limiter": limiter})); err != nil {
			t.Errorf("limiter %s: %v", limiter, err)
		}
	}
}
