package adaptive_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestFloorNotUndercut: Config.Floor is "the lowest effective limit, as a
// fraction of the configured limit". An integer limit cannot be 1.5, so
// the floor of a configured 3 at 50% is 2, not 1 (a third of the limit):
// the floor is rounded up, the levels above it down.
func TestFloorNotUndercut(t *testing.T) {
	for _, tc := range []struct {
		limit int64
		floor float64
		want  string
	}{
		{3, 0.5, "2"},    // 1.5 -> 2; was 1
		{7, 0.3, "3"},    // 2.1 -> 3; was 2
		{100, 0.5, "50"}, // exact
		{1, 0.5, "1"},    // at least 1
	} {
		m := newMiddleware(t, tc.limit)
		clock := algotest.NewClock(t0)
		c, err := adaptive.New(m, adaptive.Config{Clock: clock, Floor: tc.floor, Baseline: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		for range 10 { // slow and failing: down to the floor
			period(t, c, clock, 100, 10, 10*time.Millisecond)
		}
		if got := limitsOf(m); got != tc.want {
			t.Errorf("limit %d, floor %v: at the floor %s, want %s", tc.limit, tc.floor, got, tc.want)
		}
	}
}
