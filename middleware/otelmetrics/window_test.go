package otelmetrics_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
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
	return gaugePoints(t, reader, "ratekeeper.limit.window")
}

// gaugePoints collects reader and returns the points of the gauges named
// as sorted "name{attrs} value unit" lines; an instrument of those names
// that is not a gauge (int64 or float64) fails the test.
func gaugePoints(t *testing.T, reader *sdkmetric.ManualReader, names ...string) []string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if !slices.Contains(names, m.Name) {
				continue
			}
			switch g := m.Data.(type) {
			case metricdata.Gauge[float64]:
				for _, dp := range g.DataPoints {
					got = append(got, fmt.Sprintf("%s%s %v %s", m.Name, attrString(dp.Attributes), dp.Value, m.Unit))
				}
			case metricdata.Gauge[int64]:
				for _, dp := range g.DataPoints {
					got = append(got, fmt.Sprintf("%s%s %v %s", m.Name, attrString(dp.Attributes), dp.Value, m.Unit))
				}
			default:
				t.Fatalf("%s: %T, want a gauge", m.Name, m.Data)
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

// TestLimitWindowBeforeAnyRequest: ratekeeper.limit.window is there as
// soon as the middleware is built, beside the limits, before any request;
// a reload changing a window alone (the limits unchanged) changes it at
// once, and one changing the limit and the window changes both, again
// before any request.
func TestLimitWindowBeforeAnyRequest(t *testing.T) {
	obs, reader := newObserver(t)
	m := middleware.MustNew(memStore(t), []*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 10, user)), policy.Must(policy.PerMinute("per-minute", 100, user)),
	}, middleware.WithObserver(obs))
	metrictest.KeepAlive(t, m)
	points := func() string {
		return lines(gaugePoints(t, reader, "ratekeeper.effective_limit", "ratekeeper.limit.window")...)
	}
	wantLines(t, "right after New", points(),
		"ratekeeper.effective_limit{policy=per-minute} 100 {request}",
		"ratekeeper.effective_limit{policy=per-second} 10 {request}",
		"ratekeeper.limit.window{policy=per-minute} 60 s",
		"ratekeeper.limit.window{policy=per-second} 1 s",
	)

	if err := m.SetPolicies([]*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 10, user)), policy.Must(policy.Per("per-minute", 100, time.Hour, user)),
	}); err != nil {
		t.Fatal(err)
	}
	wantLines(t, "right after a reload changing per-minute's window alone", points(),
		"ratekeeper.effective_limit{policy=per-minute} 100 {request}",
		"ratekeeper.effective_limit{policy=per-second} 10 {request}",
		"ratekeeper.limit.window{policy=per-minute} 3600 s",
		"ratekeeper.limit.window{policy=per-second} 1 s",
	)

	if err := m.SetPolicies([]*policy.Policy{
		policy.Must(policy.Per("per-second", 20, 2*time.Second, user)), policy.Must(policy.Per("per-minute", 100, time.Hour, user)),
	}); err != nil {
		t.Fatal(err)
	}
	wantLines(t, "right after a reload changing per-second's limit and window", points(),
		"ratekeeper.effective_limit{policy=per-minute} 100 {request}",
		"ratekeeper.effective_limit{policy=per-second} 20 {request}",
		"ratekeeper.limit.window{policy=per-minute} 3600 s",
		"ratekeeper.limit.window{policy=per-second} 2 s",
	)
}
