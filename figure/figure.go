// Package figure draws sweep results in the style of a journal figure:
// one line with markers per series over a shaded band (a confidence
// interval or the spread of trials, as the caller computes it), on linear
// or log axes, with a title, a wrapped caption and the legend beside the
// plot, saved as PNG (print resolution), SVG and PDF. A ceiling
// (Chart.Ceiling) caps a y axis that diverging values would stretch. It
// knows nothing of the runner: a Chart is plain data.
//
// Tick labels follow one format per axis: a log axis is labelled at every
// decade (every second or third one beyond fifteen decades), as plain
// decimals from 0.001 to 10000 and as powers of ten (10⁻⁵) otherwise, and
// also at 2× and 5× when it spans less than two decades; a linear axis
// given XTicks is labelled at exactly those values (the swept points),
// with the same number of decimals on each.
package figure

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one curve: Mean[i] at X[i], with an optional band from Lo[i]
// to Hi[i] (nil Lo and Hi: no band; Lo[i] and Hi[i] both NaN: no band at
// that point). Points are drawn in increasing X. A band of one point
// between points without one is drawn as a vertical bar.
type Series struct {
	Name     string
	X, Mean  []float64
	Lo, Hi   []float64
	HideBand bool   // draw no band even if Lo and Hi are set
	Style    *Style // nil: StyleOf(the series' index)
	// Clipped, when set, marks the points at which some of the values
	// summarised lie above the chart's Ceiling: each gets an arrow there.
	Clipped []bool
}

// Style is how a series is drawn: its colour, its dash pattern (nil:
// solid) and its marker. The styles of StyleOf differ in dashes and
// markers as well as colour, so that they stay apart in grey print.
type Style struct {
	Color  color.NRGBA
	Dashes []vg.Length
	Shape  draw.GlyphDrawer
}

// Chart is a figure: a title, a caption, axis labels and scales, and the
// series.
type Chart struct {
	Title string
	// Caption is set under the title in a smaller font, wrapped to the
	// figure's width; a line break starts a new line.
	Caption    string
	XLabel     string
	YLabel     string
	LogX, LogY bool
	// XTicks, on a linear x axis, are the values labelled (e.g. the swept
	// points; every k-th one beyond MaxXLabels). Nil: automatic ticks.
	XTicks []float64
	Series []Series
	// Ceiling, when > 0, caps the y axis: Mean, Lo and Hi values above it
	// (+Inf included) are drawn at it and a dashed line marks it. A Mean
	// drawn there carries an upward arrow in the series' colour instead of
	// its marker; a point a series marks Clipped gets the arrow too.
	Ceiling float64
	// CeilingLabel is the legend entry of the arrows ("above the
	// ceiling" when empty); the entry is shown when an arrow is drawn.
	CeilingLabel string
	// Guide, when set, is a horizontal reference line (a metric's ideal
	// value), thin and black across the plot, within the y axis, with its
	// Label in the legend after the series.
	Guide *Guide
	// Width and Height of the figure; zero means DefaultWidth ×
	// DefaultHeight.
	Width, Height vg.Length
}

// DefaultWidth and DefaultHeight are the figure size when Chart leaves it
// zero.
const (
	DefaultWidth  = 7 * vg.Inch
	DefaultHeight = 5 * vg.Inch
)

// MaxXLabels is the most labels a linear x axis given XTicks carries.
const MaxXLabels = 12

// pt is a length in points.
func pt(v float64) vg.Length { return vg.Points(v) }

// styles are distinct in colour (the Okabe–Ito set, safe for colour-blind
// readers), dash pattern and marker (filled and open shapes).
var styles = []Style{
	{color.NRGBA{213, 94, 0, 255}, []vg.Length{pt(7), pt(2), pt(1.5), pt(2)}, draw.CrossGlyph{}},               // vermillion, dash-dot
	{color.NRGBA{230, 159, 0, 255}, []vg.Length{pt(6), pt(3)}, draw.SquareGlyph{}},                             // orange, dashed
	{color.NRGBA{204, 121, 167, 255}, []vg.Length{pt(3), pt(2)}, draw.TriangleGlyph{}},                         // reddish purple, short dashes
	{color.NRGBA{0, 158, 115, 255}, nil, draw.BoxGlyph{}},                                                      // bluish green, solid
	{color.NRGBA{0, 114, 178, 255}, nil, draw.PyramidGlyph{}},                                                  // blue, solid
	{color.NRGBA{120, 120, 120, 255}, []vg.Length{pt(1.5), pt(2)}, draw.RingGlyph{}},                           // grey, dotted
	{color.NRGBA{140, 86, 75, 255}, []vg.Length{pt(10), pt(3)}, draw.PlusGlyph{}},                              // brown, long dashes
	{color.NRGBA{0, 0, 0, 255}, []vg.Length{pt(7), pt(2), pt(1.5), pt(2), pt(1.5), pt(2)}, draw.CircleGlyph{}}, // black, dash-dot-dot
	{color.NRGBA{86, 180, 233, 255}, []vg.Length{pt(4), pt(4)}, draw.RingGlyph{}},                              // sky blue, even dashes
}

// StyleOf returns the i-th of the distinct styles (cycling after nine).
func StyleOf(i int) Style { return styles[i%len(styles)] }

// Color returns the line colour of StyleOf(i).
func Color(i int) color.NRGBA { return StyleOf(i).Color }

// checkShapes panics when a series' slices disagree in length.
func (s Series) checkShapes() {
	n := len(s.X)
	if len(s.Mean) != n {
		panic(fmt.Sprintf("figure: series %q: len(X)=%d, len(Mean)=%d", s.Name, n, len(s.Mean)))
	}
	if (s.Lo == nil) != (s.Hi == nil) || (s.Lo != nil && (len(s.Lo) != n || len(s.Hi) != n)) {
		panic(fmt.Sprintf("figure: series %q: Lo and Hi must both be nil or both have len(X)=%d", s.Name, n))
	}
	if s.Clipped != nil && len(s.Clipped) != n {
		panic(fmt.Sprintf("figure: series %q: len(X)=%d, len(Clipped)=%d", s.Name, n, len(s.Clipped)))
	}
}

// valid reports whether v can be placed on an axis (finite, and positive on
// a log axis).
func valid(v float64, log bool) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && (!log || v > 0)
}

// Font sizes, in points.
const (
	titleSize   = 12
	captionSize = 9
	labelSize   = 11
	tickSize    = 10
	legendSize  = 10
)

// band is one stretch of a series' band: its lower and upper edges at
// increasing x. A lower edge at or below zero on a log axis (e.g. a
// confidence interval reaching below zero) is drawn down to the axis.
type band struct{ lo, hi plotter.XYs }

// traced is a series cut into drawable stretches, with the points that
// carry its marker and those that carry a ceiling arrow instead.
type traced struct {
	lines  []plotter.XYs
	bands  []band
	points plotter.XYs
	arrows plotter.XYs
}

// extent is a data range, empty while lo > hi.
type extent struct{ lo, hi float64 }

func emptyExtent() extent { return extent{math.Inf(1), math.Inf(-1)} }

func (e *extent) add(v float64) { e.lo, e.hi = math.Min(e.lo, v), math.Max(e.hi, v) }

// trace cuts s into the stretches that can be drawn on c's axes, widening
// the extents with the values drawn, and returns the warnings about
// values left out.
func (c Chart) trace(s Series, xs, ys *extent) (traced, []string) {
	var t traced
	var dropped, bandDropped []string
	var cur plotter.XYs
	var cb band
	flushBand := func() {
		if len(cb.lo) >= 1 {
			t.bands = append(t.bands, cb)
		}
		cb = band{}
	}
	for _, i := range sortedIndex(s.X) {
		x, y := s.X[i], c.capped(s.Mean[i])
		capped := y != s.Mean[i] && !math.IsNaN(s.Mean[i])
		if !valid(x, c.LogX) || !valid(y, c.LogY) {
			dropped = append(dropped, fmtPoint(x, s.Mean[i]))
			if len(cur) > 0 {
				t.lines = append(t.lines, cur)
				cur = nil
			}
		} else {
			cur = append(cur, plotter.XY{X: x, Y: y})
			if !capped {
				t.points = append(t.points, plotter.XY{X: x, Y: y})
			}
			xs.add(x)
			ys.add(y)
		}
		if c.Ceiling > 0 && valid(x, c.LogX) && (capped || (s.Clipped != nil && s.Clipped[i])) {
			t.arrows = append(t.arrows, plotter.XY{X: x, Y: c.Ceiling})
			xs.add(x)
			ys.add(c.Ceiling)
		}
		if s.Lo == nil || s.HideBand {
			continue
		}
		lo, hi := c.capped(s.Lo[i]), c.capped(s.Hi[i])
		if math.IsNaN(lo) && math.IsNaN(hi) { // no band at this point
			flushBand()
			continue
		}
		// A lower edge ≤ 0 on a log axis is drawn down to the axis (see
		// band); any other value that cannot be drawn breaks the band.
		loOK := valid(lo, c.LogY) || (c.LogY && lo <= 0)
		if !valid(x, c.LogX) || !loOK || !valid(hi, c.LogY) {
			if valid(x, c.LogX) {
				bandDropped = append(bandDropped, fmtF(x))
			}
			flushBand()
			continue
		}
		cb.lo = append(cb.lo, plotter.XY{X: x, Y: lo})
		cb.hi = append(cb.hi, plotter.XY{X: x, Y: hi})
		xs.add(x)
		ys.add(hi)
		if valid(lo, c.LogY) {
			ys.add(lo)
		}
	}
	if len(cur) > 0 {
		t.lines = append(t.lines, cur)
	}
	flushBand()
	var warns []string
	if len(dropped) > 0 {
		warns = append(warns, fmt.Sprintf("series %q: %d point(s) not drawn (%s): %s",
			s.Name, len(dropped), why(c), strings.Join(dropped, ", ")))
	}
	if len(bandDropped) > 0 {
		warns = append(warns, fmt.Sprintf("series %q: band not drawn at x=%s (%s)",
			s.Name, strings.Join(bandDropped, ", "), why(c)))
	}
	return t, warns
}

// build makes the gonum plot of c and its legend, drawn apart. It panics if
// a series' slices differ in length. Values that cannot be drawn
// (non-finite, or ≤ 0 on a log axis) are left out, each case reported in
// the returned warnings; lines and bands are broken where points are
// missing.
func (c Chart) build() (*plot.Plot, *plot.Legend, []string, error) {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = c.XLabel, c.YLabel
	p.X.Tick.Label.Font.Size, p.Y.Tick.Label.Font.Size = pt(tickSize), pt(tickSize)
	p.X.Tick.Label.Handler, p.Y.Tick.Label.Handler = tickText, tickText
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.ThumbnailWidth = 0.45 * vg.Inch
	leg.TextStyle.Font.Size = pt(legendSize)
	leg.Padding = pt(2.5)
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 228}
	grid.Horizontal.Color = color.Gray{Y: 228}
	p.Add(grid)

	var warns []string
	xs, ys := emptyExtent(), emptyExtent()
	traces := make([]traced, len(c.Series))
	for si, s := range c.Series {
		s.checkShapes()
		t, w := c.trace(s, &xs, &ys)
		traces[si] = t
		warns = append(warns, w...)
	}
	if g := c.Guide; g != nil && valid(g.Y, c.LogY) {
		ys.add(g.Y)
	}
	setXAxis(&p.X, c.LogX, xs, c.XTicks)
	setYAxis(&p.Y, c.LogY, ys)
	guide := c.Guide != nil && valid(c.Guide.Y, c.LogY)
	if guide {
		p.Add(c.Guide)
	}

	if c.Ceiling > 0 && ys.hi >= c.Ceiling { // something is drawn at the ceiling
		setCeiling(&p.Y, c.Ceiling)
		p.Add(ceilingLine(c.Ceiling))
	}

	var lines []plot.Plotter
	arrows := false
	for si, s := range c.Series {
		sty := StyleOf(si)
		if s.Style != nil {
			sty = *s.Style
		}
		col := sty.Color
		for _, b := range traces[si].bands {
			if len(b.lo) == 1 {
				bar, err := c.bar(p, b, col)
				if err != nil {
					return nil, nil, nil, fmt.Errorf("series %q band: %w", s.Name, err)
				}
				p.Add(bar)
				continue
			}
			ring := make(plotter.XYs, 0, 2*len(b.lo))
			for _, q := range b.lo {
				if c.LogY && q.Y <= 0 {
					q.Y = p.Y.Min
				}
				ring = append(ring, q)
			}
			for j := len(b.hi) - 1; j >= 0; j-- {
				ring = append(ring, b.hi[j])
			}
			poly, err := plotter.NewPolygon(ring)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("series %q band: %w", s.Name, err)
			}
			poly.Color = color.NRGBA{R: col.R, G: col.G, B: col.B, A: 40}
			poly.LineStyle.Width = 0
			poly.LineStyle.Color = color.NRGBA{}
			p.Add(poly)
		}
		lineStyle := draw.LineStyle{Color: col, Width: pt(1.5), Dashes: sty.Dashes}
		glyph := draw.GlyphStyle{Color: col, Shape: sty.Shape, Radius: pt(3)}
		for _, xys := range traces[si].lines {
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("series %q: %w", s.Name, err)
			}
			l.LineStyle = lineStyle
			lines = append(lines, l)
		}
		for _, m := range []struct {
			pts   plotter.XYs
			glyph draw.GlyphStyle
		}{{traces[si].points, glyph}, {traces[si].arrows, arrowStyle(col)}} {
			if len(m.pts) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(m.pts)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("series %q: %w", s.Name, err)
			}
			sc.GlyphStyle = m.glyph
			lines = append(lines, sc)
		}
		arrows = arrows || len(traces[si].arrows) > 0
		// Every series is in the legend, even with nothing drawable.
		leg.Add(s.Name, &plotter.Line{LineStyle: lineStyle}, &plotter.Scatter{GlyphStyle: glyph})
	}
	if guide {
		leg.Add(c.Guide.Label, c.Guide)
	}
	if arrows {
		label := c.CeilingLabel
		if label == "" {
			label = "above the ceiling"
		}
		leg.Add(label, arrowThumb{arrowStyle(color.NRGBA{A: 255})})
	}
	p.Add(lines...) // lines above every band
	return p, &leg, warns, nil
}

func why(c Chart) string {
	if c.LogX || c.LogY {
		return "non-finite, or ≤ 0 on a log axis"
	}
	return "non-finite"
}

func sortedIndex(x []float64) []int {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	// Stable insertion sort: sweeps are short, and NaN keeps its place.
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && x[idx[j]] < x[idx[j-1]]; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	return idx
}

func fmtF(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func fmtPoint(x, y float64) string { return "(" + fmtF(x) + ", " + fmtF(y) + ")" }
