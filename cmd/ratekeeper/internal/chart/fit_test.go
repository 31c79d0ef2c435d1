package chart_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/chart"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/demo"
)

// The text metrics the test assumes, in em: a character is at most 0.7
// wide on average (DejaVu Sans, a common sans-serif, has digits of 0.64
// and an m of 0.97), rises 0.8 above the baseline and drops 0.25 below
// it; the middle of a digit is 0.35 above the baseline.
const (
	emPerChar = 0.7
	ascent    = 0.8
	descent   = 0.25
	digitMid  = 0.35
)

// svgText is a <text> read back, with its font size.
type svgText struct {
	x, y, size float64
	anchor     string
	text       string
	group      string
}

type svgLine struct{ x1, y1, x2, y2 float64 }

type svgRect struct {
	class      string
	bin, count int64
	y, h       float64
}

type svgSeries struct {
	name  string
	texts []svgText
	lines []svgLine
	rects []svgRect
}

type svgImage struct {
	w, h   float64
	texts  []svgText
	series []*svgSeries
}

func readImage(t *testing.T, data []byte) svgImage {
	t.Helper()
	var img svgImage
	dec := xml.NewDecoder(bytes.NewReader(data))
	var groups []string // class of each open group
	var cur *svgSeries
	var text *svgText
	num := func(attr map[string]string, a string) float64 {
		v, err := strconv.ParseFloat(attr[a], 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", a, attr[a], err)
		}
		return v
	}
	size := 12.0 // the <svg> style's font-size
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range tok.Attr {
				attr[a.Name.Local] = a.Value
			}
			switch tok.Name.Local {
			case "svg":
				img.w, img.h = num(attr, "width"), num(attr, "height")
				if vb := fmt.Sprintf("0 0 %g %g", img.w, img.h); attr["viewBox"] != vb {
					t.Fatalf("viewBox %q, want %q", attr["viewBox"], vb)
				}
				if !strings.Contains(attr["style"], "font-size: 12px") {
					t.Fatalf("svg style %q, want a font-size of 12px", attr["style"])
				}
			case "g":
				groups = append(groups, attr["class"])
				if attr["class"] == "series" {
					cur = &svgSeries{name: attr["data-name"]}
					img.series = append(img.series, cur)
				}
			case "text":
				s := size
				if v, ok := attr["font-size"]; ok {
					f, err := strconv.ParseFloat(strings.TrimSuffix(v, "px"), 64)
					if err != nil {
						t.Fatalf("font-size %q", v)
					}
					s = f
				}
				text = &svgText{x: num(attr, "x"), y: num(attr, "y"), size: s, anchor: attr["text-anchor"]}
				if len(groups) > 0 {
					text.group = groups[len(groups)-1]
				}
			case "line":
				if cur != nil && groups[len(groups)-1] == "series" {
					cur.lines = append(cur.lines, svgLine{num(attr, "x1"), num(attr, "y1"), num(attr, "x2"), num(attr, "y2")})
				}
			case "rect":
				if cur != nil && attr["data-bin"] != "" {
					bin, _ := strconv.ParseInt(attr["data-bin"], 10, 64)
					n, _ := strconv.ParseInt(attr["data-count"], 10, 64)
					cur.rects = append(cur.rects, svgRect{attr["class"], bin, n, num(attr, "y"), num(attr, "height")})
				}
			}
		case xml.CharData:
			if text != nil {
				text.text += string(tok)
			}
		case xml.EndElement:
			switch tok.Name.Local {
			case "text":
				img.texts = append(img.texts, *text)
				if cur != nil && text.group == "series" {
					cur.texts = append(cur.texts, *text)
				}
				text = nil
			case "g":
				if groups[len(groups)-1] == "series" {
					cur = nil
				}
				groups = groups[:len(groups)-1]
			}
		}
	}
	return img
}

// extent is the box a text takes, by the metrics above.
func (s svgText) extent() (left, top, right, bottom float64) {
	w := float64(utf8.RuneCountInString(s.text)) * s.size * emPerChar
	switch s.anchor {
	case "middle":
		left = s.x - w/2
	case "end":
		left = s.x - w
	default:
		left = s.x
	}
	return left, s.y - ascent*s.size, left + w, s.y + descent*s.size
}

// checkFit checks what a reader of the chart expects: every text within
// the image, not cut at its edge; in each panel, the value labels on
// their gridlines, and every bar at or below the top one (the axis covers
// the data), as high as its count on that scale.
func checkFit(t *testing.T, name string, c *chart.Chart) {
	t.Helper()
	var buf bytes.Buffer
	if err := c.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	img := readImage(t, buf.Bytes())
	for _, s := range img.texts {
		if l, tp, r, b := s.extent(); l < 0 || tp < 0 || r > img.w || b > img.h {
			t.Errorf("%s: text %q (%gpx, anchor %q at %g, %g) spans x %.1f to %.1f, y %.1f to %.1f: outside the %gx%g image",
				name, s.text, s.size, s.anchor, s.x, s.y, l, r, tp, b, img.w, img.h)
		}
	}
	for _, sr := range img.series {
		type label struct {
			v   int64
			mid float64
		}
		var labels []label
		for _, s := range sr.texts {
			if v, err := strconv.ParseInt(s.text, 10, 64); err == nil && s.anchor == "end" {
				labels = append(labels, label{v, s.y - digitMid*s.size})
			}
		}
		if len(labels) < 2 {
			t.Errorf("%s, %s: value labels %v, want 0 and a top one", name, sr.name, labels)
			continue
		}
		zero, top := labels[0], labels[0]
		for _, l := range labels {
			if l.v < zero.v {
				zero = l
			}
			if l.v > top.v {
				top = l
			}
		}
		if zero.v != 0 || top.v <= 0 {
			t.Errorf("%s, %s: value labels from %d to %d, want from 0 to a positive top", name, sr.name, zero.v, top.v)
			continue
		}
		for _, l := range labels {
			on := false
			for _, ln := range sr.lines {
				on = on || ln.y1 == ln.y2 && math.Abs(ln.y1-l.mid) <= 1
			}
			if !on {
				t.Errorf("%s, %s: the label %d, centred at y %.1f, is on no gridline (lines %v)", name, sr.name, l.v, l.mid, sr.lines)
			}
		}
		perCount := (zero.mid - top.mid) / float64(top.v)
		stacks := map[int64]int64{}
		tops := map[int64]float64{}
		for _, r := range sr.rects {
			stacks[r.bin] += r.count
			if y, ok := tops[r.bin]; !ok || r.y < y {
				tops[r.bin] = r.y
			}
		}
		scaled := false // one bar out of scale is reported, not all
		for _, bin := range slices.Sorted(maps.Keys(stacks)) {
			n, y := stacks[bin], tops[bin]
			if n > top.v || y < top.mid-0.5 {
				t.Errorf("%s, %s: bin %d's bar of %d rises to y %.1f, above the top gridline, %d at y %.1f", name, sr.name, bin, n, y, top.v, top.mid)
			} else if want := zero.mid - float64(n)*perCount; math.Abs(y-want) > 0.5 && !scaled {
				scaled = true
				t.Errorf("%s, %s: bin %d's bar of %d rises to y %.1f; on the axis from 0 at y %.1f to %d at y %.1f, want %.1f", name, sr.name, bin, n, y, zero.mid, top.v, top.mid, want)
			}
		}
	}
}

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
	checkFit(t, "demo", c)

	hours := &chart.Chart{Title: "a day in hours", Start: time.Unix(0, 0), Bin: time.Hour,
		Series: []chart.Series{{Name: "a", Admitted: make([]int64, 24), Rejected: make([]int64, 24)}}}
	hours.Series[0].Admitted[23] = 123456
	hours.Series[0].Rejected[0] = 1
	checkFit(t, "hours", hours)

	before := &chart.Chart{Title: "before the origin", Start: time.Unix(0, 0), Origin: time.Unix(90*60, 0), Bin: 10 * time.Minute,
		Series: []chart.Series{{Name: "b", Admitted: []int64{0, 3, 1, 0, 0, 2, 0, 0, 1}, Rejected: make([]int64, 9)}, {Name: "empty", Admitted: make([]int64, 9), Rejected: make([]int64, 9)}}}
	checkFit(t, "before", before)
}
