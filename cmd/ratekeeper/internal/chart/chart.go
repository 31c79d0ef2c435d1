// Package chart draws admitted and rejected requests over time as an SVG
// image: one panel per series, stacked bars per time bin (admitted below,
// rejected above), on a shared time axis. Each panel's scale runs from 0
// at its baseline to its tallest bar at a gridline, both labelled. The
// margins make room for the labels, whose width it estimates from their
// length. It writes the SVG by hand with encoding/xml and needs nothing
// else.
package chart

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"
)

// A Series is one panel: counts of admitted and rejected requests per bin.
// Admitted and Rejected have one element per bin of the Chart.
type Series struct {
	Name     string
	Admitted []int64
	Rejected []int64
}

// A Chart is a set of series sharing a time axis: bin i covers
// [Start + i·Bin, Start + (i+1)·Bin). Bin must be positive.
type Chart struct {
	Title string
	Start time.Time
	Bin   time.Duration
	// Origin is the time the axis labels count from ("+1m0s", and "-10s"
	// before it); the zero Origin means Start.
	Origin time.Time
	// Caption describes the time axis; empty means "time from <Origin>,
	// bins of <Bin>".
	Caption string
	Series  []Series
}

// Layout, in SVG user units. The margins left and right are at least
// these, and wider when a label needs it.
const (
	width       = 900
	panelHeight = 110
	panelGap    = 34
	marginLeft  = 60
	marginRight = 20
	marginTop   = 50
	axisHeight  = 40
	fontSize    = 12 // of all text but the title
)

// charWidth is the width of a character, in em, that the layout allows
// for: DejaVu Sans, a common sans-serif, has digits 0.64 em wide and an m
// of 0.97, so an estimate of 0.6 (Helvetica's digits) cut labels short.
const charWidth = 0.7

// textWidth estimates the width of s in a font of size.
func textWidth(s string, size float64) float64 {
	return float64(utf8.RuneCountInString(s)) * size * charWidth
}

// Colours of the bars.
const (
	colorAdmitted = "#4c9a2a"
	colorRejected = "#d43d1a"
)

// WriteSVG writes c as a standalone SVG document. Each series is a <g
// class="series" data-name="..."> holding one <rect> per non-empty bar,
// with class "admitted" or "rejected" and data-bin and data-count
// attributes, so that the image can be checked by machine as well as by
// eye.
func (c *Chart) WriteSVG(w io.Writer) error {
	if len(c.Series) == 0 {
		return errors.New("chart: no series")
	}
	bins := len(c.Series[0].Admitted)
	for _, s := range c.Series {
		if len(s.Admitted) != bins || len(s.Rejected) != bins {
			return fmt.Errorf("chart: series %q has %d/%d bins, want %d", s.Name, len(s.Admitted), len(s.Rejected), bins)
		}
	}
	if bins == 0 {
		return errors.New("chart: no bins")
	}
	if c.Bin <= 0 {
		return fmt.Errorf("chart: bin %s, want a positive duration", c.Bin)
	}
	height := marginTop + len(c.Series)*(panelHeight+panelGap) + axisHeight
	// The margins hold the labels: the widest value label left of the
	// panels, half the first time label left of the axis and half the
	// last right of it.
	labels := c.axisLabels(bins)
	left, right := float64(marginLeft), float64(marginRight)
	for _, s := range c.Series {
		left = max(left, textWidth(strconv.FormatInt(s.top(), 10), fontSize)+labelGap+2)
	}
	if len(labels) > 0 {
		left = max(left, textWidth(labels[0].text, fontSize)/2+2)
		last := labels[len(labels)-1]
		if last.bin == bins {
			right = max(right, textWidth(last.text, fontSize)/2+2)
		}
	}
	doc := svg{
		XMLNS: "http://www.w3.org/2000/svg", Width: width, Height: height,
		ViewBox: fmt.Sprintf("0 0 %d %d", width, height),
		Style:   "font-family: sans-serif; font-size: " + strconv.Itoa(fontSize) + "px",
	}
	doc.Children = append(doc.Children,
		rect{X: "0", Y: "0", Width: num(width), Height: num(float64(height)), Fill: "white"},
		text{X: left, Y: 22, Weight: "bold", Size: "15px", Text: c.Title},
		legend(width-marginRight-230, 22),
	)
	plotW := width - left - right
	barW := plotW / float64(bins)
	for i, s := range c.Series {
		top := float64(marginTop + i*(panelHeight+panelGap))
		doc.Children = append(doc.Children, panel(s, left, top, barW, plotW))
	}
	doc.Children = append(doc.Children, c.axis(labels, left, float64(height-axisHeight), barW))
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", " ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// top returns the value at the top of s's panel: its tallest bar (1 when
// it has none), so that the axis covers every bar.
func (s Series) top() int64 {
	var peak int64 = 1
	for i := range s.Admitted {
		peak = max(peak, s.Admitted[i]+s.Rejected[i])
	}
	return peak
}

// labelGap is the gap between a value label and the panel; digitMid is
// how far the middle of a digit is above its baseline, in em, so that a
// label at y+digitMid·size reads as level with y.
const (
	labelGap = 6
	digitMid = 0.35
)

// panel draws s from x left, top down: its title above; a gridline at the
// top, for the tallest bar, and the baseline, each labelled with its value
// level with it; the bars.
func panel(s Series, left, top, barW, plotW float64) group {
	var admitted, rejected int64
	for i := range s.Admitted {
		admitted += s.Admitted[i]
		rejected += s.Rejected[i]
	}
	peak := s.top()
	base := top + panelHeight
	g := group{Class: "series", Name: s.Name}
	g.Children = append(g.Children,
		text{X: left, Y: top - 6, Weight: "bold", Text: fmt.Sprintf("%s — admitted %d, rejected %d", s.Name, admitted, rejected)},
		line{Class: "grid", X1: num(left), Y1: num(top), X2: num(left + plotW), Y2: num(top), Stroke: "#ddd"},
		line{Class: "baseline", X1: num(left), Y1: num(base), X2: num(left + plotW), Y2: num(base), Stroke: "#999"},
		text{X: left - labelGap, Y: top + digitMid*fontSize, Anchor: "end", Text: strconv.FormatInt(peak, 10)},
		text{X: left - labelGap, Y: base + digitMid*fontSize, Anchor: "end", Text: "0"},
	)
	scale := panelHeight / float64(peak)
	for i := range s.Admitted {
		x := left + float64(i)*barW
		y := base // the top of the stack so far
		for _, part := range []struct {
			class, fill string
			n           int64
		}{{"admitted", colorAdmitted, s.Admitted[i]}, {"rejected", colorRejected, s.Rejected[i]}} {
			if part.n == 0 {
				continue
			}
			h := float64(part.n) * scale
			y -= h
			g.Children = append(g.Children, rect{
				Class: part.class, Bin: strconv.Itoa(i), Count: strconv.FormatInt(part.n, 10),
				X: num(x), Y: num(y), Width: num(max(barW-1, 0.5)), Height: num(h), Fill: part.fill,
			})
		}
	}
	return g
}

// An axisLabel is the label of the edge before bin (bins, for the last
// edge).
type axisLabel struct {
	bin  int
	text string
}

// origin returns the time the axis labels count from.
func (c *Chart) origin() time.Time {
	if c.Origin.IsZero() {
		return c.Start
	}
	return c.Origin
}

// axisLabels returns the labels of the bins' edges whose offset from the
// origin is a multiple of labelStep's interval: that offset.
func (c *Chart) axisLabels(bins int) []axisLabel {
	var out []axisLabel
	offset := c.Start.Sub(c.origin())
	every := labelStep(c.Bin, time.Duration(bins)*c.Bin)
	for i := 0; i <= bins; i++ {
		at := offset + time.Duration(i)*c.Bin
		if at%every != 0 {
			continue
		}
		label := at.String() // "-10s" before the origin
		if at >= 0 {
			label = "+" + label
		}
		out = append(out, axisLabel{i, label})
	}
	return out
}

// axis draws the time axis at y, from x left: a tick and its label at
// each of labels, and the caption under them.
func (c *Chart) axis(labels []axisLabel, left, y, barW float64) group {
	g := group{Class: "axis"}
	for _, l := range labels {
		x := left + float64(l.bin)*barW
		g.Children = append(g.Children,
			line{X1: num(x), Y1: num(y - 4), X2: num(x), Y2: num(y + 2), Stroke: "#999"},
			text{X: x, Y: y + 16, Anchor: "middle", Text: l.text},
		)
	}
	caption := c.Caption
	if caption == "" {
		caption = fmt.Sprintf("time from %s, bins of %s", c.origin().UTC().Format(time.RFC3339), c.Bin)
	}
	g.Children = append(g.Children, text{X: left, Y: y + 32, Text: caption})
	return g
}

// roundSteps are the label intervals of the time axis.
var roundSteps = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// labelStep returns the interval between axis labels: the shortest round
// multiple of bin that puts at most ten labels on span.
func labelStep(bin, span time.Duration) time.Duration {
	for _, d := range roundSteps {
		if d >= bin && d%bin == 0 && span/d < 10 {
			return d
		}
	}
	return bin * max(1, span/bin/9)
}

func legend(x, y float64) group {
	return group{Class: "legend", Children: []any{
		rect{X: num(x), Y: num(y - 10), Width: "12", Height: "12", Fill: colorAdmitted},
		text{X: x + 16, Y: y, Text: "admitted"},
		rect{X: num(x + 100), Y: num(y - 10), Width: "12", Height: "12", Fill: colorRejected},
		text{X: x + 116, Y: y, Text: "rejected"},
	}}
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

type svg struct {
	XMLName  xml.Name `xml:"svg"`
	XMLNS    string   `xml:"xmlns,attr"`
	Width    int      `xml:"width,attr"`
	Height   int      `xml:"height,attr"`
	ViewBox  string   `xml:"viewBox,attr"`
	Style    string   `xml:"style,attr"`
	Children []any
}

type group struct {
	XMLName  xml.Name `xml:"g"`
	Class    string   `xml:"class,attr,omitempty"`
	Name     string   `xml:"data-name,attr,omitempty"`
	Children []any
}

type rect struct {
	XMLName xml.Name `xml:"rect"`
	Class   string   `xml:"class,attr,omitempty"`
	Bin     string   `xml:"data-bin,attr,omitempty"`
	Count   string   `xml:"data-count,attr,omitempty"`
	X       string   `xml:"x,attr"`
	Y       string   `xml:"y,attr"`
	Width   string   `xml:"width,attr"`
	Height  string   `xml:"height,attr"`
	Fill    string   `xml:"fill,attr"`
}

type line struct {
	XMLName xml.Name `xml:"line"`
	Class   string   `xml:"class,attr,omitempty"`
	X1      string   `xml:"x1,attr"`
	Y1      string   `xml:"y1,attr"`
	X2      string   `xml:"x2,attr"`
	Y2      string   `xml:"y2,attr"`
	Stroke  string   `xml:"stroke,attr"`
}

type text struct {
	XMLName xml.Name `xml:"text"`
	X       float64  `xml:"x,attr"`
	Y       float64  `xml:"y,attr"`
	Anchor  string   `xml:"text-anchor,attr,omitempty"`
	Weight  string   `xml:"font-weight,attr,omitempty"`
	Size    string   `xml:"font-size,attr,omitempty"`
	Text    string   `xml:",chardata"`
}
