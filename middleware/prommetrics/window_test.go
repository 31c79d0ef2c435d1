package prommetrics_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// windowWant is the exposition of limit_window_seconds for the policy and
// value pairs given, in the order of the names.
func windowWant(pairs ...string) string {
	s := "# HELP ratekeeper_limit_window_seconds The window of the limits per policy: effective_limit and configured_limit count requests per this many seconds.\n" +
		"# TYPE ratekeeper_limit_window_seconds gauge\n"
	for i := 0; i+1 < len(pairs); i += 2 {
		s += `ratekeeper_limit_window_seconds{policy="` + pairs[i] + `"} ` + pairs[i+1] + "\n"
	}
	return s
}

// TestLimitWindow: a limit alone ("100") does not say how fast a policy
// lets requests through, nor compare with another's: each policy's
// window is reported beside its limit gauges, in seconds, so that
// effective_limit / limit_window_seconds is its rate per second. A reload
// that changes the window (its limit unchanged) is followed, and a
// policy the reload drops loses the series with its limits. Requests go
// through a ServeMux.
func TestLimitWindow(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	perSecond := policy.Must(policy.PerSecond("per-second", 10, user))
	perMinute := policy.Must(policy.PerMinute("per-minute", 100, user))
	m := middleware.MustNew(mem, []*policy.Policy{perSecond, perMinute}, middleware.WithObserver(metrics))
	metrictest.KeepAlive(t, m)
	mux := http.NewServeMux()
	mux.Handle("GET /", m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	gather := func(when, want string) {
		t.Helper()
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratekeeper_limit_window_seconds"); err != nil {
			t.Errorf("%s: %v", when, err)
		}
	}

	if code := serve(mux, "X-User", "ann"); code != http.StatusOK {
		t.Fatalf("request: %d", code)
	}
	gather("at start", windowWant("per-minute", "60", "per-second", "1"))

	hourly := policy.Must(policy.Per("per-minute", 100, time.Hour, user))
	if err := m.SetPolicies([]*policy.Policy{hourly}); err != nil {
		t.Fatal(err)
	}
	serve(mux, "X-User", "ann")
	gather("after the reload (per-second dropped, per-minute's window an hour)", windowWant("per-minute", "3600"))

	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	gather("after Close", "")
}

// TestLimitWindowBeforeAnyRequest: limit_window_seconds is there as soon
// as the middleware is built, beside the limits, before any request; a
// reload changing a window alone (the limits unchanged) changes it at
// once, and one changing the limit and the window changes both, again
// before any request.
func TestLimitWindowBeforeAnyRequest(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	m := middleware.MustNew(mem, []*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 10, user)), policy.Must(policy.PerMinute("per-minute", 100, user)),
	}, middleware.WithObserver(metrics))
	metrictest.KeepAlive(t, m)
	gather := func(when, want string) {
		t.Helper()
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratekeeper_limit_window_seconds"); err != nil {
			t.Errorf("%s: %v", when, err)
		}
	}
	gather("right after New", windowWant("per-minute", "60", "per-second", "1"))

	if err := m.SetPolicies([]*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 10, user)), policy.Must(policy.Per("per-minute", 100, time.Hour, user)),
	}); err != nil {
		t.Fatal(err)
	}
	gather("right after a reload changing per-minute's window alone", windowWant("per-minute", "3600", "per-second", "1"))

	if err := m.SetPolicies([]*policy.Policy{
		policy.Must(policy.Per("per-second", 20, 2*time.Second, user)), policy.Must(policy.Per("per-minute", 100, time.Hour, user)),
	}); err != nil {
		t.Fatal(err)
	}
	gather("right after a reload changing per-second's limit and window", windowWant("per-minute", "3600", "per-second", "2"))
	if err := testutil.GatherAndCompare(reg, strings.NewReader(effectiveWant("per-minute", "100", "per-second", "20")), "ratekeeper_effective_limit"); err != nil {
		t.Errorf("right after a reload changing per-second's limit and window: %v", err)
	}
}

// effectiveWant is the exposition of effective_limit for the policy and
// value pairs given, in the order of the names.
func effectiveWant(pairs ...string) string {
	s := "# HELP ratekeeper_effective_limit The limit enforced per policy, after adaptive and fleet adjustments.\n" +
		"# TYPE ratekeeper_effective_limit gauge\n"
	for i := 0; i+1 < len(pairs); i += 2 {
		s += `ratekeeper_effective_limit{policy="` + pairs[i] + `"} ` + pairs[i+1] + "\n"
	}
	return s
}

// TestLimitWindowOfTheMiddlewareReportedLast: two middlewares sharing a
// Metrics have a policy of one name with other windows; the name's gauges
// report the limits and the window of the one that reported last, never
// one's limit with the other's window, and those of the other once it is
// closed.
func TestLimitWindowOfTheMiddlewareReportedLast(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	perMinute := middleware.MustNew(mem, []*policy.Policy{policy.Must(policy.PerMinute("api", 100, user))}, middleware.WithObserver(metrics))
	metrictest.KeepAlive(t, perMinute)
	perHour := middleware.MustNew(mem, []*policy.Policy{policy.Must(policy.Per("api", 1000, time.Hour, user))}, middleware.WithObserver(metrics))
	metrictest.KeepAlive(t, perHour)
	want := func(when string, limit, window string) {
		t.Helper()
		if err := testutil.GatherAndCompare(reg, strings.NewReader(effectiveWant("api", limit)+windowWant("api", window)), "ratekeeper_effective_limit", "ratekeeper_limit_window_seconds"); err != nil {
			t.Errorf("%s: %v", when, err)
		}
	}
	want("both built", "1000", "3600")
	if err := perHour.Close(); err != nil {
		t.Fatal(err)
	}
	want("the per-hour one closed", "100", "60")
}
