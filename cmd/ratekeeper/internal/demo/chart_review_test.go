package demo

import (
	"bytes"
	"encoding/xml"
	"testing"
	"time"
)

// TestChartAxisLabels: on the demo's chart (ChartScenario in bins of 5 s)
// the axis labels every third bin from the chart's left end, +45s, the
// start of the chart counted from the start of the first window, as
// Chart's documentation says.
func TestChartAxisLabels(t *testing.T) {
	c, err := Chart(ChartScenario, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := c.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []struct {
			Class string   `xml:"class,attr"`
			Texts []string `xml:"text"`
		} `xml:"g"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, g := range doc.Groups {
		if g.Class == "axis" {
			labels = g.Texts[:len(g.Texts)-1] // the last is the caption
		}
	}
	bins := len(c.Series[0].Admitted)
	var want []string
	for i := 0; i <= bins; i += 3 {
		want = append(want, "+"+(c.Start.Sub(c.Origin)+time.Duration(i)*c.Bin).String())
	}
	if len(labels) != len(want) {
		t.Fatalf("axis labels %q, want %q", labels, want)
	}
	for i := range want {
		if labels[i] != want[i] {
			t.Errorf("axis labels %q, want %q", labels, want)
			break
		}
	}
	if labels[0] != "+45s" {
		t.Errorf("the axis starts at %s, want +45s", labels[0])
	}
}
