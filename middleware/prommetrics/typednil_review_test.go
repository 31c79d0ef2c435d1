package prommetrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
)

// TestTypedNilRegistryRefused: a *prometheus.Registry variable never
// assigned, passed as the Registerer, is not an interface nil (which New
// documents as "not registered"), so New called Register on it and
// panicked inside the Prometheus client. It is refused with an error.
func TestTypedNilRegistryRefused(t *testing.T) {
	var reg *prometheus.Registry
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("New(nil *prometheus.Registry) panicked: %v", p)
		}
	}()
	m, err := prommetrics.New(reg)
	want := "prommetrics: New: the Registerer is a nil *prometheus.Registry (pass nil, not a nil pointer, not to register)"
	if m != nil || err == nil || err.Error() != want {
		t.Errorf("New(nil *prometheus.Registry) = %v, %v; want nil, %q", m, err, want)
	}
}
