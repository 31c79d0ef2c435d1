package replay

import (
	"math"
	"testing"
)

// TestFloorDiv: windows and bins are aligned to the Unix epoch on both
// sides of it: floorDiv rounds towards minus infinity.
func TestFloorDiv(t *testing.T) {
	for _, c := range [][2]int64{
		{-60, 60}, {-61, 60}, {-59, 60}, {-30, 60}, {-1, 60}, {0, 60}, {1, 60}, {59, 60}, {60, 60}, {61, 60},
		{-30e9, 60e9}, {-120e9, 60e9}, {30e9, 60e9},
	} {
		want := int64(math.Floor(float64(c[0]) / float64(c[1])))
		if got := floorDiv(c[0], c[1]); got != want {
			t.Errorf("floorDiv(%d, %d) = %d, want %d", c[0], c[1], got, want)
		}
	}
}

// TestRatesLastWindows: every key's last window counts, one of a single
// request too, and a key whose requests all went uncounted (count: failed,
// and only successes) has no window and no busiest window, not one of 0.
func TestRatesLastWindows(t *testing.T) {
	events := []event{
		{t: 0, key: 0, uncounted: true}, {t: 1, key: 0, uncounted: true},
		{t: 0, key: 1},
		{t: 0, key: 2}, {t: 1, key: 2}, {t: 2, key: 2},
		{t: 5, key: 3, uncounted: true},
		{t: 10, key: 2},
	}
	w, p := windowCounts(events, 4, 10)
	// Windows: key 1's {1}, key 2's {3, 1}; busiest: key 1's 1, key 2's 3.
	want := Rates{Keys: 4, Windows: 3, P50: 1, P95: 3, P99: 3, Max: 3, Peak: Percentiles{P50: 1, P95: 3, P99: 3}}
	if got := rates(w, p, 4); got != want {
		t.Errorf("rates = %+v, want %+v", got, want)
	}
}
