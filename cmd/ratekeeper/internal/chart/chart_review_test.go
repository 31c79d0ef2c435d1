package chart

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestWriteSVGBinNotPositive: a Chart whose Bin is zero or negative has no
// time axis to draw; WriteSVG says so with an error, as it does for a chart
// without series or bins (the axis divided by the bin: a zero Bin panicked
// with an integer divide by zero).
func TestWriteSVGBinNotPositive(t *testing.T) {
	for _, bin := range []time.Duration{0, -time.Second} {
		c := &Chart{Start: time.Unix(0, 0), Bin: bin,
			Series: []Series{{Name: "a", Admitted: []int64{1, 2}, Rejected: []int64{0, 1}}}}
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("Bin %s: WriteSVG panicked: %v", bin, p)
				}
			}()
			err = c.WriteSVG(&bytes.Buffer{})
		}()
		if err == nil || !strings.Contains(err.Error(), "bin") {
			t.Errorf("Bin %s: WriteSVG = %v, want an error about the bin", bin, err)
		}
	}
}

// TestWriteSVGEscapesNames: series names, the title and the caption with
// XML's special characters (<, &, both quotes) and characters XML cannot
// hold (a control character) still make a well-formed document whose
// text and data-name read back as given (the control character replaced).
func TestWriteSVGEscapesNames(t *testing.T) {
	name := `login <"admin" & 'root'>`
	c := &Chart{Title: `a < b & "c"`, Caption: `x > 'y' & z`, Start: time.Unix(0, 0), Bin: time.Second,
		Series: []Series{
			{Name: name, Admitted: []int64{1, 2}, Rejected: []int64{0, 1}},
			{Name: "bell\x07", Admitted: []int64{1, 2}, Rejected: []int64{0, 1}},
		}}
	var buf bytes.Buffer
	if err := c.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	d := readDrawing(t, buf.Bytes()) // fails the test if not well-formed
	got := parseSeries(t, buf.Bytes())
	if _, ok := got[name]; !ok {
		t.Errorf("series names read back: %v, want %q among them", keys(got), name)
	}
	if _, ok := got["bell\uFFFD"]; !ok {
		t.Errorf("series names read back: %v, want the control character replaced", keys(got))
	}
	var texts []string
	for _, e := range d.elems {
		if e.name == "text" {
			texts = append(texts, e.text)
		}
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{c.Title, c.Caption, name + " — admitted 3, rejected 1"} {
		if !strings.Contains(all, want) {
			t.Errorf("texts %q lack %q", texts, want)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestAxisBeforeOrigin: a chart that starts before its Origin labels the
// times before it with a minus sign ("-10s"), not "+-10s".
func TestAxisBeforeOrigin(t *testing.T) {
	origin := time.Unix(100, 0)
	c := &Chart{Start: origin.Add(-10 * time.Second), Origin: origin, Bin: 5 * time.Second,
		Series: []Series{{Name: "a", Admitted: make([]int64, 4), Rejected: make([]int64, 4)}}}
	var buf bytes.Buffer
	if err := c.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, e := range readDrawing(t, buf.Bytes()).of("axis", "", "text") {
		labels = append(labels, e.text)
	}
	labels = labels[:len(labels)-1] // the caption
	want := []string{"-10s", "-5s", "+0s", "+5s", "+10s"}
	if strings.Join(labels, " ") != strings.Join(want, " ") {
		t.Errorf("axis labels %q, want %q", labels, want)
	}
}
