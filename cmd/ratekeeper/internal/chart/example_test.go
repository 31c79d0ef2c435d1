package chart_test

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/chart"
)

func ExampleChart_WriteSVG() {
	c := &chart.Chart{
		Title: "boundary burst, 100 per minute",
		Start: time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC),
		Bin:   time.Second,
		Series: []chart.Series{
			{Name: "fixed_window", Admitted: []int64{100, 0, 100}, Rejected: []int64{0, 0, 0}},
			{Name: "sliding_log", Admitted: []int64{100, 0, 0}, Rejected: []int64{0, 0, 100}},
		},
	}
	var buf bytes.Buffer
	if err := c.WriteSVG(&buf); err != nil {
		fmt.Println(err)
		return
	}
	svg := buf.String()
	fmt.Println(strings.Count(svg, `<g class="series"`), "series,",
		strings.Count(svg, `class="admitted"`), "admitted bars,",
		strings.Count(svg, `class="rejected"`), "rejected bar")
	// Output:
	// 2 series, 3 admitted bars, 1 rejected bar
}
