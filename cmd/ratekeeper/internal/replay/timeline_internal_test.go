package replay

import (
	"testing"
	"time"
)

// A timeline keeps to about the bins asked for whatever the span: one log
// line with a wrong clock (1970, or decades ahead) among a day's traffic
// made a bin per day, tens of thousands of them, in the SVG and the JSON.
func TestTimelineBinsBoundedForLongSpans(t *testing.T) {
	day := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name        string
		first, last time.Time
	}{
		{"an hour", day, day.Add(time.Hour)},
		{"a week", day, day.AddDate(0, 0, 7)},
		{"since 1970", time.Unix(0, 0).UTC(), day},
		{"to 2200", day, time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		tl := newTimeline(tc.first, tc.last, 60)
		if tl.n > 61 || tl.n < 1 {
			t.Errorf("%s: %d bins of %s; want at most 61", tc.name, tl.n, time.Duration(tl.bin))
		}
		if tl.start > tc.first.UnixNano() || tl.start+int64(tl.n)*tl.bin <= tc.last.UnixNano() {
			t.Errorf("%s: bins [%s, +%d×%s) do not cover [%s, %s]", tc.name, tl.Start(), tl.n, time.Duration(tl.bin), tc.first, tc.last)
		}
	}
}
