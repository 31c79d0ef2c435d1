package demo

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"path/filepath"
	"strings"
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

// TestProfilesAsListed: Profiles holds the seven header profiles that
// "ratekeeper demo --help" lists, each under its own name; under
// legacy-unix the demo's X-RateLimit-Reset is a Unix time of the simulated
// clock (Start plus the 2 s the per-second counter needs), not of the
// machine's.
func TestProfilesAsListed(t *testing.T) {
	want := []string{"ietf", "ietf-most-constraining", "draft-7", "draft-6", "legacy", "legacy-unix", "none"}
	if len(Profiles) != len(want) {
		t.Errorf("Profiles has %d names, want %q", len(Profiles), want)
	}
	for _, name := range want {
		p, ok := Profiles[name]
		if !ok || p.String() != name {
			t.Errorf("Profiles[%q] = %v, %t; want the profile of that name", name, p, ok)
		}
	}
	var out bytes.Buffer
	if err := Run(&out, filepath.Join(t.TempDir(), "d.svg"), Profiles["legacy-unix"]); err != nil {
		t.Fatal(err)
	}
	if line := fmt.Sprintf("X-RateLimit-Reset: %d\n", Start.Add(2*time.Second).Unix()); !strings.Contains(out.String(), line) {
		t.Errorf("legacy-unix demo lacks %q:\n%.600s", line, out.String())
	}
}
