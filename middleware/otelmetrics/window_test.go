package otelmetrics_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// windowPoints collects reader and returns the points of
// ratekeeper.limit.window as sorted "name{attrs} value unit" lines; an
// instrument of that name that is not a float64 gauge fails the test.
func windowPoints(t *testing.T, reader *sdkmetric.ManualReader) []string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "ratekeeper.limit.window" {
				continue
			}
			g, ok := m.Data.(metricdata.Gauge[float64])
			if !ok {
				t.Fatalf("%s: %T, want a float64 gauge", m.Name, m.Data)
			}
			for _, dp := range g.DataPoints {
				got = append(got, fmt.Sprintf("%s%s %v %s", m.Name, attrString(dp.Attributes), dp.Value, m.Unit))
			}
		}
	}
	sort.Strings(got)
	return got
}

// TestLimitWindow: each policy's window is reported beside its limit
// gauges, in seconds (ratekeeper.limit.window, ratekeeper_limit_window_seconds
// in Prometheus), so that a limit says per what; a reload that changes
// the window is followed, and a policy the reload drops, or whose
// middleware is closed, is no longer reported. Requests go through chi.
func TestLimitWindow(t *testing.T) {
	obs, reader := newObserver(t)
	perSecond := policy.Must(policy.PerSecond("per-second", 10, user))
	perMinute := policy.Must(policy.PerMinute("per-minute", 100, user))
	m := middleware.MustNew(memStore(t), []*policy.Policy{perSecond, perMinute}, middleware.WithObserver(obs))
	metrictest.KeepAlive(t, m)
	h := router(m)
	if code := get(h, "/", "X-User", "ann"); code != http.StatusOK {
		t.Fatalf("request: %d", code)
	}
	wantLines(t, "at start", lines(windowPoints(t, reader)...),
		"ratekeeper.limit.window{policy=per-minute} 60 s",
		"ratekeeper.limit.window{policy=per-second} 1 s",
	)

	hourly := policy.Must(policy.Per("per-minute", 100, time.Hour, user))
	if err := m.SetPolicies([]*policy.Policy{hourly}); err != nil {
		t.Fatal(err)
	}
	get(h, "/", "X-User", "ann")
	wantLines(t, "after the reload (per-second dropped, per-minute's window an hour)", lines(windowPoints(t, reader)...),
		"ratekeeper.limit.window{policy=per-minute} 3600 s",
	)

	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	wantLines(t, "after Close", lines(windowPoints(t, reader)...))
}
