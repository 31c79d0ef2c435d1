package otelmetrics_test

import (
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/otelmetrics"
)

// TestEventWithoutResult: an Event without a Result records its duration
// and counts nothing else, as ObserveRequest's doc says.
func TestEventWithoutResult(t *testing.T) {
	obs, reader := newObserver(t)
	obs.ObserveRequest(middleware.Event{Outcome: middleware.Denied, Latency: 2 * time.Millisecond})
	points, hist := collect(t, reader)
	if got := only(points, "ratekeeper.requests") + only(points, "ratekeeper.errors"); got != "" {
		t.Errorf("counted:\n%s\nwant nothing", got)
	}
	if hist.count != 1 || hist.sum != 0.002 {
		t.Errorf("decision duration: count %d sum %v, want 1 and 0.002", hist.count, hist.sum)
	}
}

// TestTwoObserversOneProvider: two Observers on one MeterProvider without
// distinct WithAttributes record into the same series, as the Observer
// doc says: their counters add up, and their gauges, each observed by its
// own callback, do not add up (one callback's value is reported).
func TestTwoObserversOneProvider(t *testing.T) {
	reader := metric.NewManualReader()
	mp := metric.NewMeterProvider(metric.WithReader(reader))
	t.Cleanup(func() { mp.Shutdown(t.Context()) })
	var obs [2]*otelmetrics.Observer
	for i := range obs {
		var err error
		if obs[i], err = otelmetrics.New(mp); err != nil {
			t.Fatalf("Observer %d: %v", i, err)
		}
	}
	obs[0].ObserveLimit("p", 5, 5)
	obs[1].ObserveLimit("p", 7, 7)
	obs[0].ObserveGiveBack("p")
	obs[1].ObserveGiveBack("p")
	points, _ := collect(t, reader)
	if got := points["ratekeeper.given_back{policy=p}"]; got != 2 {
		t.Errorf("given_back{p} = %d, want 2 (added up)", got)
	}
	if got := points["ratekeeper.effective_limit{policy=p}"]; got != 5 && got != 7 {
		t.Errorf("effective_limit{p} = %d, want one Observer's value, 5 or 7", got)
	}
}
