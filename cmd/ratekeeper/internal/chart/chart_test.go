package chart

import (
	"bytes"
	"encoding/xml"
	"strconv"
	"strings"
	"testing"
	"time"
)

// svgDoc is the part of an SVG document the tests read back.
type svgDoc struct {
	Groups []struct {
		Class string `xml:"class,attr"`
		Name  string `xml:"data-name,attr"`
		Rects []struct {
			Class  string `xml:"class,attr"`
			Bin    string `xml:"data-bin,attr"`
			Count  string `xml:"data-count,attr"`
			Height string `xml:"height,attr"`
		} `xml:"rect"`
	} `xml:"g"`
}

// ParseSeries reads the series back from an SVG written by WriteSVG:
// name -> class -> bin -> count.
func parseSeries(t *testing.T, data []byte) map[string]map[string]map[int]int64 {
	t.Helper()
	var doc svgDoc
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the SVG is not well-formed XML: %v", err)
	}
	out := map[string]map[string]map[int]int64{}
	for _, g := range doc.Groups {
		if g.Class != "series" {
			continue
		}
		out[g.Name] = map[string]map[int]int64{"admitted": {}, "rejected": {}}
		for _, r := range g.Rects {
			bin, err1 := strconv.Atoi(r.Bin)
			n, err2 := strconv.ParseInt(r.Count, 10, 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("rect with bin %q count %q", r.Bin, r.Count)
			}
			out[g.Name][r.Class][bin] = n
		}
	}
	return out
}

func TestWriteSVG(t *testing.T) {
	c := &Chart{
		Title: "boundary <burst> & co",
		Start: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
		Bin:   time.Second,
		Series: []Series{
			{Name: "fixed_window", Admitted: []int64{0, 100, 100, 0}, Rejected: []int64{0, 0, 0, 0}},
			{Name: "sliding_log", Admitted: []int64{0, 100, 0, 0}, Rejected: []int64{0, 0, 100, 3}},
		},
	}
	var buf bytes.Buffer
	if err := c.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	got := parseSeries(t, buf.Bytes())
	if len(got) != 2 {
		t.Fatalf("series = %v, want 2", got)
	}
	for _, s := range c.Series {
		for bin := range s.Admitted {
			if a := got[s.Name]["admitted"][bin]; a != s.Admitted[bin] {
				t.Errorf("%s bin %d admitted = %d, want %d", s.Name, bin, a, s.Admitted[bin])
			}
			if r := got[s.Name]["rejected"][bin]; r != s.Rejected[bin] {
				t.Errorf("%s bin %d rejected = %d, want %d", s.Name, bin, r, s.Rejected[bin])
			}
		}
	}
	if !strings.Contains(buf.String(), "boundary &lt;burst&gt; &amp; co") {
		t.Error("title not escaped")
	}
}

func TestWriteSVGErrors(t *testing.T) {
	for name, c := range map[string]*Chart{
		"no series":  {Bin: time.Second},
		"ragged":     {Bin: time.Second, Series: []Series{{Name: "a", Admitted: []int64{1}, Rejected: []int64{1}}, {Name: "b", Admitted: []int64{1, 2}, Rejected: []int64{1, 2}}}},
		"empty bins": {Bin: time.Second, Series: []Series{{Name: "a"}}},
	} {
		if err := c.WriteSVG(&bytes.Buffer{}); err == nil {
			t.Errorf("%s: WriteSVG succeeded", name)
		}
	}
}

// TestAxisOrigin draws a chart that starts 45 s after the origin of its
// labels: the axis reads +45s at its left end, not +0s.
func TestAxisOrigin(t *testing.T) {
	origin := time.Unix(0, 0)
	c := &Chart{Start: origin.Add(45 * time.Second), Origin: origin, Bin: 5 * time.Second,
		Series: []Series{{Name: "a", Admitted: make([]int64, 27), Rejected: make([]int64, 27)}}}
	var buf bytes.Buffer
	if err := c.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	for _, want := range []string{">+45s<", ">+1m0s<", ">+1m30s<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("axis lacks %s", want)
		}
	}
	if strings.Contains(svg, ">+0s<") {
		t.Error("axis starts at +0s")
	}
}

// TestAxisRoundLabels checks that the axis labels fall on round times
// (every 30 minutes over two hours in bins of 2 minutes), not every
// seventh bin.
func TestAxisRoundLabels(t *testing.T) {
	c := &Chart{Start: time.Unix(0, 0), Bin: 2 * time.Minute,
		Series: []Series{{Name: "a", Admitted: make([]int64, 60), Rejected: make([]int64, 60)}}}
	var buf bytes.Buffer
	if err := c.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	for _, want := range []string{">+0s<", ">+30m0s<", ">+1h0m0s<", ">+1h30m0s<", ">+2h0m0s<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("axis lacks %s", want)
		}
	}
	if strings.Contains(svg, ">+14m0s<") {
		t.Error("axis labels every seventh bin (+14m0s)")
	}
}
