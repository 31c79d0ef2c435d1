package chart

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The text metrics the test assumes, in em: a character is at most 0.7
// wide on average (DejaVu Sans, a common sans-serif, has digits of 0.64
// and an m of 0.97), rises 0.8 above the baseline and drops 0.25 below
// it; the middle of a digit is 0.35 above the baseline. They are the
// test's own, not the package's (charWidth, digitMid).
const (
	emPerChar       = 0.7
	ascent          = 0.8
	descent         = 0.25
	assumedDigitMid = 0.35
)

// fitText is a <text> of a drawing, with its font size.
type fitText struct {
	x, y, size float64
	anchor     string
	text       string
}

// textOf reads the <text> e, its font size that of the <svg> style (12px)
// unless it has its own.
func textOf(t *testing.T, e element) fitText {
	t.Helper()
	size := 12.0
	if v, ok := e.attr["font-size"]; ok {
		f, err := strconv.ParseFloat(strings.TrimSuffix(v, "px"), 64)
		if err != nil {
			t.Fatalf("font-size %q", v)
		}
		size = f
	}
	return fitText{x: e.f(t, "x"), y: e.f(t, "y"), size: size, anchor: e.attr["text-anchor"], text: e.text}
}

// extent is the box a text takes, by the metrics above.
func (s fitText) extent() (left, top, right, bottom float64) {
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
func checkFit(t *testing.T, name string, c *Chart) {
	t.Helper()
	var buf bytes.Buffer
	if err := c.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	d := readDrawing(t, buf.Bytes())
	if vb := fmt.Sprintf("0 0 %g %g", d.width, d.height); d.viewBox != vb {
		t.Fatalf("viewBox %q, want %q", d.viewBox, vb)
	}
	if !strings.Contains(d.style, "font-size: 12px") {
		t.Fatalf("svg style %q, want a font-size of 12px", d.style)
	}
	for _, e := range d.elems {
		if e.name != "text" {
			continue
		}
		s := textOf(t, e)
		if l, tp, r, b := s.extent(); l < 0 || tp < 0 || r > d.width || b > d.height {
			t.Errorf("%s: text %q (%gpx, anchor %q at %g, %g) spans x %.1f to %.1f, y %.1f to %.1f: outside the %gx%g image",
				name, s.text, s.size, s.anchor, s.x, s.y, l, r, tp, b, d.width, d.height)
		}
	}
	for _, sr := range c.Series {
		type label struct {
			v   int64
			mid float64
		}
		var labels []label
		for _, e := range d.of("series", sr.Name, "text") {
			s := textOf(t, e)
			if v, err := strconv.ParseInt(s.text, 10, 64); err == nil && s.anchor == "end" {
				labels = append(labels, label{v, s.y - assumedDigitMid*s.size})
			}
		}
		if len(labels) < 2 {
			t.Errorf("%s, %s: value labels %v, want 0 and a top one", name, sr.Name, labels)
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
			t.Errorf("%s, %s: value labels from %d to %d, want from 0 to a positive top", name, sr.Name, zero.v, top.v)
			continue
		}
		lines := d.of("series", sr.Name, "line")
		for _, l := range labels {
			on := false
			for _, ln := range lines {
				y1, y2 := ln.f(t, "y1"), ln.f(t, "y2")
				on = on || y1 == y2 && math.Abs(y1-l.mid) <= 1
			}
			if !on {
				t.Errorf("%s, %s: the label %d, centred at y %.1f, is on no gridline (lines %v)", name, sr.Name, l.v, l.mid, lines)
			}
		}
		perCount := (zero.mid - top.mid) / float64(top.v)
		stacks := map[int64]int64{}
		tops := map[int64]float64{}
		for _, r := range d.of("series", sr.Name, "rect") {
			if r.attr["data-bin"] == "" {
				continue
			}
			bin, _ := strconv.ParseInt(r.attr["data-bin"], 10, 64)
			n, _ := strconv.ParseInt(r.attr["data-count"], 10, 64)
			stacks[bin] += n
			if y, ok := tops[bin]; !ok || r.f(t, "y") < y {
				tops[bin] = r.f(t, "y")
			}
		}
		scaled := false // one bar out of scale is reported, not all
		for _, bin := range slices.Sorted(maps.Keys(stacks)) {
			n, y := stacks[bin], tops[bin]
			if n > top.v || y < top.mid-0.5 {
				t.Errorf("%s, %s: bin %d's bar of %d rises to y %.1f, above the top gridline, %d at y %.1f", name, sr.Name, bin, n, y, top.v, top.mid)
			} else if want := zero.mid - float64(n)*perCount; math.Abs(y-want) > 0.5 && !scaled {
				scaled = true
				t.Errorf("%s, %s: bin %d's bar of %d rises to y %.1f; on the axis from 0 at y %.1f to %d at y %.1f, want %.1f", name, sr.Name, bin, n, y, zero.mid, top.v, top.mid, want)
			}
		}
	}
}
