package chart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// element is one drawn element of an SVG written by WriteSVG: its name,
// attributes and text, and the class and data-name of the group it is in.
type element struct {
	name, group, series, text string
	attr                      map[string]string
}

// f reads the numeric attribute a.
func (e element) f(t *testing.T, a string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(e.attr[a], 64)
	if err != nil {
		t.Fatalf("<%s %s=%q> in group %q: %v", e.name, a, e.attr[a], e.group, err)
	}
	return v
}

// drawing is an SVG written by WriteSVG, read back.
type drawing struct {
	width, height  float64
	viewBox, style string
	elems          []element
}

func readDrawing(t *testing.T, data []byte) drawing {
	t.Helper()
	var d drawing
	dec := xml.NewDecoder(bytes.NewReader(data))
	type open struct{ class, name string }
	var groups []open
	var cur *element
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
				d.viewBox, d.style = attr["viewBox"], attr["style"]
				w, err1 := strconv.ParseFloat(attr["width"], 64)
				h, err2 := strconv.ParseFloat(attr["height"], 64)
				if err1 != nil || err2 != nil {
					t.Fatalf("svg width %q height %q", attr["width"], attr["height"])
				}
				d.width, d.height = w, h
			case "g":
				groups = append(groups, open{attr["class"], attr["data-name"]})
			default:
				e := element{name: tok.Name.Local, attr: attr}
				if len(groups) > 0 {
					e.group, e.series = groups[len(groups)-1].class, groups[len(groups)-1].name
				}
				d.elems = append(d.elems, e)
				cur = &d.elems[len(d.elems)-1]
			}
		case xml.EndElement:
			if tok.Name.Local == "g" {
				groups = groups[:len(groups)-1]
			}
			cur = nil
		case xml.CharData:
			if cur != nil {
				cur.text += string(tok)
			}
		}
	}
	return d
}

// of returns the elements named name in group (and series, for a series
// group), in document order.
func (d drawing) of(group, series, name string) []element {
	var out []element
	for _, e := range d.elems {
		if e.group == group && e.series == series && e.name == name {
			out = append(out, e)
		}
	}
	return out
}

const eps = 1e-9

func near(a, b float64) bool { return math.Abs(a-b) < eps }

// TestWriteSVGGeometry checks what makes the chart readable, whatever its
// exact sizes: everything is inside the image; each panel has a baseline
// spanning the plot, its bars stand on it side by side (bin i at the i-th
// of equal slots, with a gap), rejected stacked on admitted, heights
// proportional to the counts and the peak's stack as high as every
// panel's, up to a gridline at the panel's top; its title (with the
// series' totals) is above it and below the panel before; its peak (1 in
// an empty panel) is labelled at its left level with the top gridline,
// and 0 level with the baseline; the time axis is below the last panel, its ticks at the bins'
// edges with their labels under them and the caption under those; the
// legend's swatches have the bars' colours, each name right of its own.
func TestWriteSVGGeometry(t *testing.T) {
	series := []Series{
		{Name: "a", Admitted: []int64{1, 0, 3, 2, 0, 1}, Rejected: []int64{0, 2, 1, 0, 0, 4}},
		{Name: "empty", Admitted: make([]int64, 6), Rejected: make([]int64, 6)},
		{Name: "one", Admitted: []int64{0, 0, 0, 0, 0, 1}, Rejected: make([]int64, 6)},
		{Name: "rejected only", Admitted: make([]int64, 6), Rejected: []int64{0, 7, 0, 0, 0, 0}},
	}
	c := &Chart{Title: "geometry", Start: time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC), Bin: time.Second, Series: series}
	var buf bytes.Buffer
	if err := c.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	d := readDrawing(t, buf.Bytes())
	W, H := d.width, d.height
	if d.viewBox != fmt.Sprintf("0 0 %g %g", W, H) {
		t.Errorf("viewBox %q for a %gx%g image", d.viewBox, W, H)
	}
	inside := func(what string, x, y float64) {
		t.Helper()
		if x < 0 || x > W || y < 0 || y > H {
			t.Errorf("%s at (%g, %g), outside the %gx%g image", what, x, y, W, H)
		}
	}
	for _, e := range d.elems {
		what := fmt.Sprintf("<%s> %q of group %q %q", e.name, e.text, e.group, e.series)
		switch e.name {
		case "rect":
			x, y, w, h := e.f(t, "x"), e.f(t, "y"), e.f(t, "width"), e.f(t, "height")
			if w <= 0 || h <= 0 {
				t.Errorf("%s is %gx%g", what, w, h)
			}
			inside(what, x, y)
			inside(what, x+w, y+h)
		case "line":
			inside(what, e.f(t, "x1"), e.f(t, "y1"))
			inside(what, e.f(t, "x2"), e.f(t, "y2"))
		case "text":
			inside(what, e.f(t, "x"), e.f(t, "y"))
		}
	}
	if bg := d.of("", "", "rect"); len(bg) != 1 || bg[0].f(t, "width") != W || bg[0].f(t, "height") != H {
		t.Errorf("background %v, want one rect of the whole image", bg)
	}

	// Panels. The panel height is that of the peak's stack, the same in
	// every panel that has bars.
	var panelH, lastBase float64
	for k, s := range series {
		lines := d.of("series", s.Name, "line")
		if len(lines) != 2 {
			t.Fatalf("series %s: %d lines, want its top gridline and its baseline", s.Name, len(lines))
		}
		grid, baseline := lines[0], lines[1]
		L, R, base := baseline.f(t, "x1"), baseline.f(t, "x2"), baseline.f(t, "y1")
		if baseline.f(t, "y2") != base || R <= L {
			t.Errorf("series %s: baseline from (%g, %g) to (%g, %g), want a horizontal one left to right", s.Name, L, base, R, baseline.f(t, "y2"))
		}
		gridY := grid.f(t, "y1")
		if grid.f(t, "x1") != L || grid.f(t, "x2") != R || grid.f(t, "y2") != gridY || gridY >= base {
			t.Errorf("series %s: top gridline from (%g, %g) to (%g, %g), want one above the baseline from %g to %g", s.Name, grid.f(t, "x1"), gridY, grid.f(t, "x2"), grid.f(t, "y2"), L, R)
		}
		if base <= lastBase {
			t.Errorf("series %s: baseline at y %g, not below the previous panel's (%g)", s.Name, base, lastBase)
		}
		slot := (R - L) / float64(len(s.Admitted))
		var peak, admitted, rejected int64
		for i := range s.Admitted {
			peak = max(peak, s.Admitted[i]+s.Rejected[i])
			admitted += s.Admitted[i]
			rejected += s.Rejected[i]
		}
		bars := d.of("series", s.Name, "rect")
		top := base // the top of the highest stack
		for _, b := range bars {
			top = min(top, b.f(t, "y"))
		}
		if peak > 0 {
			if panelH == 0 {
				panelH = base - top
			} else if !near(base-top, panelH) {
				t.Errorf("series %s: the peak's stack is %g high, want the panel height %g", s.Name, base-top, panelH)
			}
			if !near(top, gridY) {
				t.Errorf("series %s: the peak's stack rises to y %g, want it at the top gridline %g", s.Name, top, gridY)
			}
		}
		var nonzero int
		for i := range s.Admitted {
			nonzero += min(1, int(s.Admitted[i])) + min(1, int(s.Rejected[i]))
		}
		if len(bars) != nonzero {
			t.Errorf("series %s: %d bars, want one per nonzero count, %d", s.Name, len(bars), nonzero)
		}
		for _, b := range bars {
			bin, _ := strconv.Atoi(b.attr["data-bin"])
			x, y, w, h := b.f(t, "x"), b.f(t, "y"), b.f(t, "width"), b.f(t, "height")
			if !near(x, L+float64(bin)*slot) || w >= slot {
				t.Errorf("series %s bin %d: bar at x %g, %g wide; want at %g, narrower than its slot of %g", s.Name, bin, x, w, L+float64(bin)*slot, slot)
			}
			bottom := base
			if b.attr["class"] == "rejected" && s.Admitted[bin] != 0 {
				for _, a := range bars {
					if a.attr["class"] == "admitted" && a.attr["data-bin"] == b.attr["data-bin"] {
						bottom = a.f(t, "y")
					}
				}
			}
			if !near(y+h, bottom) {
				t.Errorf("series %s bin %d: %s bar from y %g to %g; want it to stand on %g", s.Name, bin, b.attr["class"], y, y+h, bottom)
			}
			n, _ := strconv.ParseInt(b.attr["data-count"], 10, 64)
			if want := map[string][]int64{"admitted": s.Admitted, "rejected": s.Rejected}[b.attr["class"]]; want == nil || n != want[bin] {
				t.Errorf("series %s bin %d: %s bar of %d", s.Name, bin, b.attr["class"], n)
			}
			if !near(h, float64(n)*panelH/float64(peak)) {
				t.Errorf("series %s bin %d: %s bar of %d is %g high; want %g (the panel's %g for the peak of %d)", s.Name, bin, b.attr["class"], n, h, float64(n)*panelH/float64(peak), panelH, peak)
			}
		}
		texts := d.of("series", s.Name, "text")
		if len(texts) != 3 {
			t.Fatalf("series %s: texts %v, want the title and two labels", s.Name, texts)
		}
		title, peakLabel, zero := texts[0], texts[1], texts[2]
		if want := fmt.Sprintf("%s — admitted %d, rejected %d", s.Name, admitted, rejected); title.text != want {
			t.Errorf("series %s: title %q, want %q", s.Name, title.text, want)
		}
		if y := title.f(t, "y"); y >= base-panelH || y <= lastBase || k == 0 && y <= d.of("", "", "text")[0].f(t, "y") {
			t.Errorf("series %s: title at y %g, want it between the panel's top %g and what is above (%g)", s.Name, y, base-panelH, lastBase)
		}
		// A label is level with its line when the middle of its digits,
		// 0.35 em above the baseline of its text, is on the line.
		const mid = 0.35 * 12
		if want := max(peak, 1); peakLabel.text != strconv.FormatInt(want, 10) || peakLabel.f(t, "x") >= L || !near(peakLabel.f(t, "y")-mid, gridY) {
			t.Errorf("series %s: peak label %q at (%g, %g); want %d left of %g, level with the top gridline %g", s.Name, peakLabel.text, peakLabel.f(t, "x"), peakLabel.f(t, "y"), want, L, gridY)
		}
		if zero.text != "0" || zero.f(t, "x") >= L || !near(zero.f(t, "y")-mid, base) {
			t.Errorf("series %s: zero label %q at (%g, %g); want 0 left of %g, level with the baseline %g", s.Name, zero.text, zero.f(t, "x"), zero.f(t, "y"), L, base)
		}
		lastBase = base
	}

	// The time axis: bins of 1s over 6s, a label every second, at the
	// edges of the first panel's slots.
	first := d.of("series", "a", "line")[1] // the baseline
	L, R := first.f(t, "x1"), first.f(t, "x2")
	ticks, labels := d.of("axis", "", "line"), d.of("axis", "", "text")
	if len(ticks) != 7 || len(labels) != 8 {
		t.Fatalf("axis: %d ticks and %d texts, want 7 and 7 labels and a caption", len(ticks), len(labels))
	}
	for i, tick := range ticks {
		x := L + float64(i)*(R-L)/6
		y1, y2 := tick.f(t, "y1"), tick.f(t, "y2")
		label := labels[i]
		if !near(tick.f(t, "x1"), x) || tick.f(t, "x2") != tick.f(t, "x1") || y1 >= y2 || y1 <= lastBase {
			t.Errorf("tick %d from (%g, %g) to (%g, %g); want a vertical one at x %g below the last baseline %g", i, tick.f(t, "x1"), y1, tick.f(t, "x2"), y2, x, lastBase)
		}
		if want := fmt.Sprintf("+%ds", i); label.text != want || label.f(t, "x") != tick.f(t, "x1") || label.f(t, "y") <= y2 {
			t.Errorf("label %d %q at (%g, %g); want %q under its tick (%g, below %g)", i, label.text, label.f(t, "x"), label.f(t, "y"), want, tick.f(t, "x1"), y2)
		}
	}
	caption := labels[7]
	if want := "time from 2024-03-10T12:00:00Z, bins of 1s"; caption.text != want || caption.f(t, "y") <= labels[0].f(t, "y") {
		t.Errorf("caption %q at y %g; want %q under the labels (%g)", caption.text, caption.f(t, "y"), want, labels[0].f(t, "y"))
	}

	// The legend.
	swatches, names := d.of("legend", "", "rect"), d.of("legend", "", "text")
	if len(swatches) != 2 || len(names) != 2 {
		t.Fatalf("legend: %d swatches and %d names, want 2 and 2", len(swatches), len(names))
	}
	for i, class := range []string{"admitted", "rejected"} {
		var fill string
		for _, b := range d.elems {
			if b.attr["class"] == class {
				fill = b.attr["fill"]
			}
		}
		sw, name := swatches[i], names[i]
		x, y, w, h := sw.f(t, "x"), sw.f(t, "y"), sw.f(t, "width"), sw.f(t, "height")
		if sw.attr["fill"] != fill || name.text != class || name.f(t, "x") <= x+w || name.f(t, "y") <= y || name.f(t, "y") > y+h+eps {
			t.Errorf("legend %d: swatch %s at (%g, %g) %gx%g, name %q at (%g, %g); want the %s bars' %s, the name right of it, its baseline by it", i, sw.attr["fill"], x, y, w, h, name.text, name.f(t, "x"), name.f(t, "y"), class, fill)
		}
		if i == 1 && x <= names[0].f(t, "x") {
			t.Errorf("legend: the rejected swatch at x %g, not right of the admitted name at %g", x, names[0].f(t, "x"))
		}
	}
}

// TestWriteSVGRagged: a series whose Rejected alone, or Admitted alone,
// has another number of bins than the first series' is an error, not a
// panic.
func TestWriteSVGRagged(t *testing.T) {
	for _, s := range []Series{
		{Name: "b", Admitted: []int64{1, 2}, Rejected: []int64{1}},
		{Name: "b", Admitted: []int64{1}, Rejected: []int64{1, 2}},
	} {
		c := &Chart{Bin: time.Second, Series: []Series{{Name: "a", Admitted: []int64{1, 2}, Rejected: []int64{0, 0}}, s}}
		if err := c.WriteSVG(&bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), `"b"`) {
			t.Errorf("series of %d/%d bins after one of 2: WriteSVG = %v, want an error naming it", len(s.Admitted), len(s.Rejected), err)
		}
	}
}

// TestCaption: a Caption given is the axis' caption as it is.
func TestCaption(t *testing.T) {
	c := &Chart{Start: time.Unix(0, 0), Bin: time.Second, Caption: "seconds since the burst",
		Series: []Series{{Name: "a", Admitted: []int64{1}, Rejected: []int64{0}}}}
	var buf bytes.Buffer
	if err := c.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	axis := readDrawing(t, buf.Bytes()).of("axis", "", "text")
	if got := axis[len(axis)-1].text; got != "seconds since the burst" {
		t.Errorf("caption %q, want the Chart's", got)
	}
}

// failingWriter fails its n-th Write and takes every other.
type failingWriter struct {
	n, calls int
	out      bytes.Buffer
}

var errWrite = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	w.calls++
	if w.calls == w.n {
		return 0, errWrite
	}
	return w.out.Write(p)
}

// TestWriteSVGWriteErrors: WriteSVG returns the error of whichever write
// fails, the later ones succeeding or not; the document it writes when
// none fails ends with a newline.
func TestWriteSVGWriteErrors(t *testing.T) {
	c := &Chart{Start: time.Unix(0, 0), Bin: time.Second,
		Series: []Series{{Name: "a", Admitted: []int64{1, 2}, Rejected: []int64{0, 1}}}}
	all := &failingWriter{}
	if err := c.WriteSVG(all); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(all.out.String(), "</svg>\n") {
		t.Errorf("the document ends %q, want </svg> and a newline", all.out.String()[max(0, all.out.Len()-20):])
	}
	if all.calls < 3 {
		t.Fatalf("%d writes, want at least the header's, the document's and the newline's", all.calls)
	}
	for n := 1; n <= all.calls; n++ {
		if err := c.WriteSVG(&failingWriter{n: n}); !errors.Is(err, errWrite) {
			t.Errorf("write %d of %d failing: WriteSVG returned %v", n, all.calls, err)
		}
	}
}

// TestLabelStep: the interval between axis labels is the shortest round
// multiple of the bin that puts at most ten labels on the span (each
// round interval once), else a multiple of the bin giving about ten.
func TestLabelStep(t *testing.T) {
	const (
		s = time.Second
		m = time.Minute
		h = time.Hour
	)
	for _, tc := range []struct{ bin, span, want time.Duration }{
		{s, 9 * s, s},
		{s, 10 * s, 2 * s},
		{s, 30 * s, 5 * s},
		{s, 60 * s, 10 * s},
		{s, 120 * s, 15 * s},
		{s, 240 * s, 30 * s},
		{s, 8 * m, m},
		{m, 15 * m, 2 * m},
		{m, 40 * m, 5 * m},
		{m, 90 * m, 10 * m},
		{m, 140 * m, 15 * m},
		{m, 4 * h, 30 * m},
		{m, 8 * h, h},
		{h, 15 * h, 2 * h},
		{h, 24 * h, 3 * h},
		{h, 48 * h, 6 * h},
		{h, 96 * h, 12 * h},
		{h, 239 * h, 24 * h},           // 9 of 24h, where the fallback would give 26h
		{7 * s, 5 * 7 * s, 7 * s},      // no round multiple of 7s: the bin itself
		{7 * s, 70 * 7 * s, 7 * 7 * s}, // 490s over 9: 7 bins
		{h, 30 * 24 * h, 80 * h},       // 720h over 9: 80 bins
		{h, 100 * 24 * h, 266 * h},     // 2400h over 9: 266 bins, rounded down
	} {
		if got := labelStep(tc.bin, tc.span); got != tc.want {
			t.Errorf("labelStep(%s, %s) = %s, want %s", tc.bin, tc.span, got, tc.want)
		}
	}
}
