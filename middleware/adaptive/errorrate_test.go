package adaptive_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestErrorRateExact: a period fails when MORE than ErrorRate of its
// requests failed, judged against the rate as written: 29 errors in 100
// requests do not exceed 0.29. The product ErrorRate·n in floating point
// (0.29·100 = 28.999999999999996) made exactly 29% exceed 29%, and so for
// 128 of the rates k/100 and k/1000 at some period size (0.011 at 23,000
// requests), lowering the limit of a service that had not crossed its
// threshold.
func TestErrorRateExact(t *testing.T) {
	for _, tc := range []struct {
		rate      float64
		n, errs   int
		wantLevel float64
	}{
		{0.29, 100, 29, 1},
		{0.29, 100, 30, 0.8},
		{0.57, 100, 57, 1},
		{0.011, 23000, 253, 1},
		{0.011, 23000, 254, 0.8},
		{0.01, 100, 1, 1},
		{0.01, 100, 2, 0.8},
	} {
		m := newMiddleware(t, 100)
		clock := algotest.NewClock(t0)
		c, err := adaptive.New(m, adaptive.Config{Clock: clock, Period: time.Minute, ErrorRate: tc.rate})
		if err != nil {
			t.Fatal(err)
		}
		period(t, c, clock, 200, 0, 10*time.Millisecond) // the baseline
		period(t, c, clock, tc.n, tc.errs, 50*time.Millisecond)
		if got := c.Level(); got != tc.wantLevel {
			t.Errorf("ErrorRate %v, %d errors in %d slow requests: level %v, want %v", tc.rate, tc.errs, tc.n, got, tc.wantLevel)
		}
	}
}
