package middleware_test

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestWithLoggerSamplesOnTheMiddlewaresClock: the LogObserver WithLogger
// makes delimits its seconds (LogRate, 10 records a second) on the
// middleware's clock (WithClock, given before or after it), as every
// other decision of the middleware is timed: rejections in two seconds of
// the injected clock give two seconds' worth of records, however fast the
// system clock runs. It sampled on the system clock, so a test or a replay
// on an injected clock saw one second's records for any span.
func TestWithLoggerSamplesOnTheMiddlewaresClock(t *testing.T) {
	for _, clockFirst := range []bool{true, false} {
		clock := algotest.NewClock(time.Unix(1_700_000_040, 0))
		store, _ := newStore(t)
		var buf bytes.Buffer
		logger := middleware.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil)))
		opts := []middleware.Option{middleware.WithClock(clock), logger}
		if !clockFirst {
			opts = []middleware.Option{logger, middleware.WithClock(clock)}
		}
		m := middleware.MustNew(store, []*policy.Policy{fixed("p", 1, time.Hour, remote)}, opts...)
		h := routedBy("ServeMux", m)
		serve(h, "GET", "/") // admitted
		for range 30 {
			serve(h, "GET", "/")
		}
		clock.Advance(time.Second)
		for range 30 {
			serve(h, "GET", "/")
		}
		if recs := logRecords(t, &buf, "ratekeeper: request denied"); len(recs) != 20 {
			t.Errorf("WithClock first %v: %d rejection records in two seconds of the middleware's clock, want 20 (10 a second)", clockFirst, len(recs))
		}
	}
}
