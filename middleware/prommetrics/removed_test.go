package prommetrics_test

import (
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestReloadRemovedPolicy: a policy that a reload of the configuration
// file drops (policy/reload applying it with ApplyConfig) loses its
// effective and configured limit gauges, which state a limit no longer
// enforced; its counters stay at their last values (a counter must not go
// back), and resume from them when a later reload brings the policy
// back, its gauges then reported again. Requests go through a ServeMux.
func TestReloadRemovedPolicy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ratekeeper.yaml")
	write := func(policies ...string) {
		t.Helper()
		if err := os.WriteFile(path, []byte("policies:\n"+strings.Join(policies, "")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const api = "  - {name: api, limit: 10, window: 1m, key: global}\n"
	write(api, "  - {name: old, limit: 3, window: 1m, key: global}\n")
	cfg, err := policy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	reg, metrics, mem := metricsAndStore(t)
	m, err := middleware.FromConfig(mem, cfg, middleware.WithObserver(metrics))
	if err != nil {
		t.Fatal(err)
	}
	metrictest.KeepAlive(t, m)
	// Reloaded on demand (Reload) only: the debounce outlasts the test.
	w, err := reload.New(path, m.ApplyConfig, reload.InForce(cfg), reload.WithDebounce(time.Hour),
		reload.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	mux := http.NewServeMux()
	mux.Handle("GET /", m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	reloadWith := func(policies ...string) {
		t.Helper()
		write(policies...)
		if err := w.Reload(); err != nil {
			t.Fatal(err)
		}
	}
	gather := func(when, want string, names ...string) {
		t.Helper()
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
			t.Errorf("%s: %v", when, err)
		}
	}
	limits := func(values ...string) string {
		s := "# HELP ratekeeper_configured_limit The limit configured per policy.\n# TYPE ratekeeper_configured_limit gauge\n"
		for i := 0; i < len(values); i += 3 {
			s += `ratekeeper_configured_limit{policy="` + values[i] + `"} ` + values[i+2] + "\n"
		}
		s += "# HELP ratekeeper_effective_limit The limit enforced per policy, after adaptive and fleet adjustments.\n# TYPE ratekeeper_effective_limit gauge\n"
		for i := 0; i < len(values); i += 3 {
			s += `ratekeeper_effective_limit{policy="` + values[i] + `"} ` + values[i+1] + "\n"
		}
		return s
	}
	allowed := func(api, old string) string {
		return "# HELP ratekeeper_requests_total Requests decided, per policy and outcome (allowed, denied, shadow_denied, abandoned).\n# TYPE ratekeeper_requests_total counter\n" +
			`ratekeeper_requests_total{outcome="abandoned",policy="api"} 0` + "\n" +
			`ratekeeper_requests_total{outcome="abandoned",policy="old"} 0` + "\n" +
			`ratekeeper_requests_total{outcome="allowed",policy="api"} ` + api + "\n" +
			`ratekeeper_requests_total{outcome="allowed",policy="old"} ` + old + "\n" +
			`ratekeeper_requests_total{outcome="denied",policy="api"} 0` + "\n" +
			`ratekeeper_requests_total{outcome="denied",policy="old"} 0` + "\n" +
			`ratekeeper_requests_total{outcome="shadow_denied",policy="api"} 0` + "\n" +
			`ratekeeper_requests_total{outcome="shadow_denied",policy="old"} 0` + "\n"
	}

	for range 2 {
		if code := serve(mux); code != http.StatusOK {
			t.Fatalf("request: %d", code)
		}
	}
	gather("at start", limits("api", "10", "10", "old", "3", "3"), "ratekeeper_effective_limit", "ratekeeper_configured_limit")

	reloadWith(api)
	serve(mux)
	gather("old removed", limits("api", "10", "10"), "ratekeeper_effective_limit", "ratekeeper_configured_limit")
	gather("old removed", allowed("3", "2"), "ratekeeper_requests_total")

	reloadWith(api, "  - {name: old, limit: 7, window: 1m, key: global}\n")
	serve(mux)
	gather("old back", limits("api", "10", "10", "old", "7", "7"), "ratekeeper_effective_limit", "ratekeeper_configured_limit")
	gather("old back", allowed("4", "3"), "ratekeeper_requests_total")
}
