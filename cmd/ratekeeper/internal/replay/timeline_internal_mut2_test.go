package replay

import (
	"testing"
	"time"
)

// TestTimelineRoundBins: a span takes the shortest round bin that cuts it
// into fewer than the bins asked for: 59 bins of each round length take
// that length, 61 the next.
func TestTimelineRoundBins(t *testing.T) {
	round := []time.Duration{
		time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
		time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
	}
	for i, b := range round {
		if tl := newTimeline(t0, t0.Add(59*b), 60); time.Duration(tl.bin) != b || tl.n != 60 {
			t.Errorf("59 x %s: %d bins of %s, want 60 of %s", b, tl.n, time.Duration(tl.bin), b)
		}
		if i+1 < len(round) {
			if tl := newTimeline(t0, t0.Add(61*b), 60); time.Duration(tl.bin) != round[i+1] {
				t.Errorf("61 x %s: bins of %s, want %s", b, time.Duration(tl.bin), round[i+1])
			}
		}
	}
	// Past 60 days, whole days: as many as keep to the bins asked for.
	const day = 24 * time.Hour
	for _, tc := range []struct {
		span, bin time.Duration
	}{{61 * day, 2 * day}, {200 * day, 4 * day}, {1000 * day, 17 * day}} {
		tl := newTimeline(t0, t0.Add(tc.span), 60)
		if time.Duration(tl.bin) != tc.bin || tl.n > 60 || time.Duration(tl.n)*tc.bin <= tc.span {
			t.Errorf("%s: %d bins of %s, want bins of %s, at most 60, covering the span", tc.span, tl.n, time.Duration(tl.bin), tc.bin)
		}
	}
}
