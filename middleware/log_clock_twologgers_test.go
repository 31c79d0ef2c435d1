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

// TestTwoLoggersSampleOnTheMiddlewaresClock: with two loggers given to
// WithLogger, each LogObserver it built delimits its seconds (LogRate, 10
// records a second) on the middleware's clock, not only the last one:
// rejections in two seconds of the injected clock give each logger two
// seconds' worth of records (20), through a ServeMux and chi.
func TestTwoLoggersSampleOnTheMiddlewaresClock(t *testing.T) {
	for _, router := range []string{"ServeMux", "chi"} {
		clock := algotest.NewClock(time.Unix(1_700_000_040, 0))
		store, _ := newStore(t)
		var buf1, buf2 bytes.Buffer
		m := middleware.MustNew(store, []*policy.Policy{fixed("p", 1, time.Hour, remote)},
			middleware.WithLogger(slog.New(slog.NewJSONHandler(&buf1, nil))),
			middleware.WithLogger(slog.New(slog.NewJSONHandler(&buf2, nil))),
			middleware.WithClock(clock))
		h := routedBy(router, m)
		serve(h, "GET", "/") // admitted
		for range 30 {
			serve(h, "GET", "/")
		}
		clock.Advance(time.Second)
		for range 30 {
			serve(h, "GET", "/")
		}
		for i, buf := range []*bytes.Buffer{&buf1, &buf2} {
			if recs := logRecords(t, buf, "ratekeeper: request denied"); len(recs) != 20 {
				t.Errorf("%s: logger %d: %d rejection records in two seconds of the middleware's clock, want 20 (10 a second)", router, i+1, len(recs))
			}
		}
	}
}
