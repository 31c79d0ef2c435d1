package prommetrics_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
)

// TestConstLabelOfTheMetricsNamed: a constant label that is a label of the
// metrics themselves (policy, outcome, kind, state) is an error of
// WithConstLabels that says so, as otelmetrics.WithAttributes refuses the
// keys of its instruments, not the client's registration error about a
// descriptor.
func TestConstLabelOfTheMetricsNamed(t *testing.T) {
	for _, name := range []string{"policy", "outcome", "kind", "state"} {
		for i, reg := range []prometheus.Registerer{nil, prometheus.NewRegistry()} {
			_, err := prommetrics.New(reg, prommetrics.WithConstLabels(prometheus.Labels{"limiter": "a", name: "x"}))
			if err == nil || !strings.HasPrefix(err.Error(), "prommetrics: WithConstLabels: ") || !strings.Contains(err.Error(), `"`+name+`"`) {
				t.Errorf("New(%s, WithConstLabels(%s)) = %v, want a WithConstLabels error naming %q", []string{"nil", "registry"}[i], name, err, name)
			}
		}
	}
}

// TestRegistrationErrorsSayPrommetrics: every error of New starts with
// the package's name, the registry's too: a metric of the application's
// own under one of the names, or an invalid namespace. The registry's
// error stays reachable with errors.As.
func TestRegistrationErrorsSayPrommetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	mine := prometheus.NewGauge(prometheus.GaugeOpts{Name: "ratekeeper_requests_total", Help: "the application's own"})
	reg.MustRegister(mine)
	_, err := prommetrics.New(reg)
	if err == nil || !strings.HasPrefix(err.Error(), "prommetrics: ") {
		t.Errorf("New beside a metric of the same name: %v, want an error starting with %q", err, "prommetrics: ")
	}
	for i, reg := range []prometheus.Registerer{nil, prometheus.NewRegistry()} {
		_, err := prommetrics.New(reg, prommetrics.WithNamespace("my-app"))
		if err == nil || !strings.HasPrefix(err.Error(), "prommetrics: ") || !strings.Contains(err.Error(), "my-app") {
			t.Errorf("New(%s, WithNamespace(my-app)) = %v, want an error starting with %q naming my-app", []string{"nil", "registry"}[i], err, "prommetrics: ")
		}
	}
	// Still an AlreadyRegisteredError when it is one.
	twice := prometheus.NewRegistry()
	if _, err := prommetrics.New(twice); err != nil {
		t.Fatal(err)
	}
	var are prometheus.AlreadyRegisteredError
	if _, err := prommetrics.New(twice); !errors.As(err, &are) || !strings.HasPrefix(err.Error(), "prommetrics: ") {
		t.Errorf("registered twice: %v", err)
	}
}

// TestConstLabelErrorNamesFirst: among a label "le", a label of the
// metrics and an invalid name, WithConstLabels' error names the first in
// lexical order, as its doc says.
func TestConstLabelErrorNamesFirst(t *testing.T) {
	for _, tc := range []struct {
		labels prometheus.Labels
		want   string
	}{
		{prometheus.Labels{"le": "1", "a-b": "2", "state": "3"}, `"a-b"`},
		{prometheus.Labels{"le": "1", "kind": "2", "x-y": "3"}, `"kind"`},
		{prometheus.Labels{"le": "1", "policy": "2", "x-y": "3"}, `"le"`},
	} {
		_, err := prommetrics.New(nil, prommetrics.WithConstLabels(tc.labels))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("WithConstLabels(%v): %v, want an error naming %s", tc.labels, err, tc.want)
		}
	}
}
