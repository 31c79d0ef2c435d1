package prommetrics_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestOperations wires everything of issue 6 together over a real HTTP
// server: a config file, the middleware built from it, a Watcher reloading
// it, an adaptive Controller around the application, and the Prometheus
// gauges reporting the limits.
func TestOperations(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
	path := filepath.Join(t.TempDir(), "ratekeeper.yaml")
	write := func(limit string) {
		tmp := path + ".new"
		os.WriteFile(tmp, []byte("policies:\n  - {name: api, limit: "+limit+", window: 1m, key: global}\n"), 0o644)
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write("10")
	cfg, err := policy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	metrics, _ := prommetrics.New(reg)
	clock := algotest.NewClock(t0)
	store, _ := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	m, err := middleware.FromConfig(store, cfg, middleware.WithObserver(metrics))
	if err != nil {
		t.Fatal(err)
	}
	metrictest.KeepAlive(t, m)
	reloaded := make(chan error, 10)
	w, err := reload.New(path, m.ApplyConfig, reload.WithLogger(slog.New(slog.DiscardHandler)),
		reload.WithDebounce(10*time.Millisecond), reload.OnReload(func(_ *policy.Config, err error) { reloaded <- err }))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctrl, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: time.Millisecond, MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clock.Advance(10 * time.Millisecond) // 10x the baseline
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	})
	srv := httptest.NewServer(m.Handler(ctrl.Handler(app)))
	defer srv.Close()
	get := func() *http.Response {
		resp, err := srv.Client().Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	gauges := func(effective, configured string) {
		t.Helper()
		want := "# HELP ratekeeper_effective_limit The limit enforced per policy, after adaptive and fleet adjustments.\n" +
			"# TYPE ratekeeper_effective_limit gauge\nratekeeper_effective_limit{policy=\"api\"} " + effective + "\n" +
			"# HELP ratekeeper_configured_limit The limit configured per policy.\n" +
			"# TYPE ratekeeper_configured_limit gauge\nratekeeper_configured_limit{policy=\"api\"} " + configured + "\n"
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratekeeper_effective_limit", "ratekeeper_configured_limit"); err != nil {
			t.Error(err)
		}
	}

	for range 3 {
		get()
	}
	clock.Advance(time.Minute)
	get() // the first request after the period evaluates it: slow and failing
	gauges("8", "10")
	if got := get().Header.Get("RateLimit-Policy"); got != `"api";q=8;w=60` {
		t.Errorf("RateLimit-Policy %q after the drop", got)
	}

	write("20")
	if err := hangguard.Await(t, reloaded, 20*time.Second, "no reload"); err != nil {
		t.Fatal(err)
	}
	gauges("16", "20") // a new configured Spec: the override carried over in proportion (0.8)...
	clock.Advance(time.Minute)
	get() // ...and the controller applies its level (0.8 x 0.8 after another bad period)
	gauges("12", "20")
	if s := testutil.ToFloat64(metrics.StateGauge("healthy")); s != 1 {
		t.Errorf("failure_state{healthy} = %v", s)
	}
}
