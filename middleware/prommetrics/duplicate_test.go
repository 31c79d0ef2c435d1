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

// TestRegistrationOtherLabelNames: a Metrics with constant labels beside
// one without (or with other label names), or beside another library's
// collector exporting one of its names, is refused by the registry. The
// error, the client's "has different label names or a different help
// string", said neither which option is at fault nor the way out; it must
// name WithConstLabels and WithNamespace, and never panic.
func TestRegistrationOtherLabelNames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first func(reg prometheus.Registerer) error
		opts  []prommetrics.Option
	}{
		{"labelled after unlabelled", func(reg prometheus.Registerer) error { _, err := prommetrics.New(reg); return err },
			[]prommetrics.Option{prommetrics.WithConstLabels(prometheus.Labels{"limiter": "a"})}},
		{"unlabelled after labelled", func(reg prometheus.Registerer) error {
			_, err := prommetrics.New(reg, prommetrics.WithConstLabels(prometheus.Labels{"limiter": "a"}))
			return err
		}, nil},
		{"another library's counter", func(reg prometheus.Registerer) error {
			return reg.Register(prometheus.NewCounter(prometheus.CounterOpts{Name: "ratekeeper_requests_total", Help: "Theirs."}))
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			if err := tc.first(reg); err != nil {
				t.Fatal(err)
			}
			_, err := prommetrics.New(reg, tc.opts...)
			if err == nil {
				t.Fatal("registered")
			}
			for _, want := range []string{"prommetrics:", "WithConstLabels", "WithNamespace"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}
