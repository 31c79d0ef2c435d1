package chart_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/chart"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/demo"
)

// TestChartFits: the demo's chart, and charts of long time labels, fit
// their image and their axes. The demo's chart once cut its last time
// label, +3m0s, at the right edge, and its value labels stood a little
// under the values they named (the fixed window's bar of 110 rose above
// the label 110).
func TestChartFits(t *testing.T) {
	c, err := demo.Chart(demo.ChartScenario, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	chart.CheckFit(t, "demo", c)

	hours := &chart.Chart{Title: "a day in hours", Start: time.Unix(0, 0), Bin: time.Hour,
		Series: []chart.Series{{Name: "a", Admitted: make([]int64, 24), Rejected: make([]int64, 24)}}}
	hours.Series[0].Admitted[23] = 123456
	hours.Series[0].Rejected[0] = 1
	chart.CheckFit(t, "hours", hours)

	before := &chart.Chart{Title: "before the origin", Start: time.Unix(0, 0), Origin: time.Unix(90*60, 0), Bin: 10 * time.Minute,
		Series: []chart.Series{{Name: "b", Admitted: []int64{0, 3, 1, 0, 0, 2, 0, 0, 1}, Rejected: make([]int64, 9)}, {Name: "empty", Admitted: make([]int64, 9), Rejected: make([]int64, 9)}}}
	chart.CheckFit(t, "before", before)
}
