package adaptive_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestOneSlowFailureInAQuietPeriod: what the package documentation says
// a single client can do. In a period of 20 to 99 requests, one slow 5xx
// makes it slow and failing and lowers the limit; a default IsError
// counts a 501 the client asked for, one counting only the service's
// failures does not.
func TestOneSlowFailureInAQuietPeriod(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n       int
		status  int
		isError func(int) bool
		want    float64
	}{
		{"20 requests, one slow 503", 20, 503, nil, 0.8},
		{"99 requests, one slow 503", 99, 503, nil, 0.8},
		{"100 requests, one slow 503", 100, 503, nil, 1},
		{"20 requests, one slow 501", 20, 501, nil, 0.8},
		{"20 requests, one slow 501, IsError without 501", 20, 501, func(s int) bool { return s >= 500 && s != 501 }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMiddleware(t, 100)
			clock := algotest.NewClock(t0)
			c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond, IsError: tc.isError})
			if err != nil {
				t.Fatal(err)
			}
			for range tc.n - 1 {
				c.Observe(10*time.Millisecond, 200)
			}
			c.Observe(30*time.Second, tc.status) // the one client's request
			clock.Advance(time.Minute)
			if err := c.Evaluate(); err != nil {
				t.Fatal(err)
			}
			if got := c.Level(); got != tc.want {
				t.Errorf("level %v, want %v", got, tc.want)
			}
		})
	}
}
