// Package chart draws admitted and rejected requests over time as an SVG
// image: one panel per series, stacked bars per time bin (admitted below,
// rejected above), on a shared time axis. It writes the SVG by hand with
// encoding/xml and needs nothing else.
package chart

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
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

// Layout, in SVG user units.
const (
	width       = 900
	panelHeight = 110
	panelGap    = 34
	marginLeft  = 60
	marginRight = 20
	marginTop   = 50
	axisHeight  = 40
)

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
	doc := svg{
		XMLNS: "http://www.w3.org/2000/svg", Width: width, Height: height,
		ViewBox: fmt.Sprintf("0 0 %d %d", width, height),
		Style:   "font-family: sans-serif; font-size: 12px",
	}
	doc.Children = append(doc.Children,
		rect{X: "0", Y: "0", Width: num(width), Height: num(float64(height)), Fill: "white"},
		text{X: marginLeft, Y: 22, Weight: "bold", Size: "15px", Text: c.Title},
		legend(width-marginRight-230, 22),
	)
	plotW := float64(width - marginLeft - marginRight)
	barW := plotW / float64(bins)
	for i, s := range c.Series {
		top := float64(marginTop + i*(panelHeight+panelGap))
		doc.Children = append(doc.Children, panel(s, top, barW, plotW))
	}
	doc.Children = append(doc.Children, c.axis(float64(height-axisHeight), barW, bins))
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

func panel(s Series, top, barW, plotW float64) group {
	var peak, admitted, rejected int64
	for i := range s.Admitted {
		peak = max(peak, s.Admitted[i]+s.Rejected[i])
		admitted += s.Admitted[i]
		rejected += s.Rejected[i]
	}
	g := group{Class: "series", Name: s.Name}
	g.Children = append(g.Children,
		text{X: marginLeft, Y: top - 6, Weight: "bold", Text: fmt.Sprintf("%s — admitted %d, rejected %d", s.Name, admitted, rejected)},
		line{X1: num(marginLeft), Y1: num(top + panelHeight), X2: num(marginLeft + plotW), Y2: num(top + panelHeight), Stroke: "#999"},
		text{X: marginLeft - 6, Y: top + 10, Anchor: "end", Text: strconv.FormatInt(peak, 10)},
		text{X: marginLeft - 6, Y: top + panelHeight, Anchor: "end", Text: "0"},
	)
	if peak == 0 {
		return g
	}
	scale := panelHeight / float64(peak)
	for i := range s.Admitted {
		x := marginLeft + float64(i)*barW
		base := top + panelHeight
		for _, part := range []struct {
			class, fill string
			n           int64
		}{{"admitted", colorAdmitted, s.Admitted[i]}, {"rejected", colorRejected, s.Rejected[i]}} {
			if part.n == 0 {
				continue
			}
			h := float64(part.n) * scale
			base -= h
			g.Children = append(g.Children, rect{
				Class: part.class, Bin: strconv.Itoa(i), Count: strconv.FormatInt(part.n, 10),
				X: num(x), Y: num(base), Width: num(max(barW-1, 0.5)), Height: num(h), Fill: part.fill,
			})
		}
	}
	return g
}

// axis labels the bins' edges whose offset from Origin (Start when zero) is
// a multiple of labelStep's interval, with that offset.
func (c *Chart) axis(y, barW float64, bins int) group {
	g := group{Class: "axis"}
	origin := c.Origin
	if origin.IsZero() {
		origin = c.Start
	}
	offset := c.Start.Sub(origin)
	every := labelStep(c.Bin, time.Duration(bins)*c.Bin)
	for i := 0; i <= bins; i++ {
		at := offset + time.Duration(i)*c.Bin
		if at%every != 0 {
			continue
		}
		x := marginLeft + float64(i)*barW
		label := at.String() // "-10s" before the origin
		if at >= 0 {
			label = "+" + label
		}
		g.Children = append(g.Children,
			line{X1: num(x), Y1: num(y - 4), X2: num(x), Y2: num(y + 2), Stroke: "#999"},
			text{X: x, Y: y + 16, Anchor: "middle", Text: label},
		)
	}
	caption := c.Caption
	if caption == "" {
		caption = fmt.Sprintf("time from %s, bins of %s", origin.UTC().Format(time.RFC3339), c.Bin)
	}
	g.Children = append(g.Children, text{X: marginLeft, Y: y + 32, Text: caption})
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
