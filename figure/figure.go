// Package figure draws sweep results: one line with markers per series
// over a shaded band (e.g. the 5–95% range over trials), on linear or log
// axes, saved as PNG and SVG. It knows nothing of the runner: a Chart is
// plain data.
package figure

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"wcmc/internal/atomicfile"
)

// Series is one curve: Mean[i] at X[i], with an optional band from Lo[i]
// to Hi[i] (nil Lo and Hi: no band). Points are drawn in increasing X.
type Series struct {
	Name     string
	X, Mean  []float64
	Lo, Hi   []float64
	HideBand bool // draw no band even if Lo and Hi are set
}

// Chart is a figure: a title, axis labels and scales, and the series.
type Chart struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	Series                []Series
	// Width and Height of the figure; zero means 6 × 4.5 in.
	Width, Height vg.Length
}

// DefaultWidth and DefaultHeight are the figure size when Chart leaves it
// zero.
const (
	DefaultWidth  = 6 * vg.Inch
	DefaultHeight = 4.5 * vg.Inch
)

// palette holds nine colours that stay distinct for colour-blind readers
// and in grey print (the Okabe–Ito set plus two darker tones).
var palette = []color.NRGBA{
	{0, 114, 178, 255},   // blue
	{213, 94, 0, 255},    // vermillion
	{0, 158, 115, 255},   // bluish green
	{204, 121, 167, 255}, // reddish purple
	{230, 159, 0, 255},   // orange
	{86, 180, 233, 255},  // sky blue
	{0, 0, 0, 255},       // black
	{140, 86, 75, 255},   // brown
	{120, 120, 120, 255}, // grey
}

// Color returns the line colour of the i-th series.
func Color(i int) color.NRGBA { return palette[i%len(palette)] }

// checkShapes panics when a series' slices disagree in length.
func (s Series) checkShapes() {
	n := len(s.X)
	if len(s.Mean) != n {
		panic(fmt.Sprintf("figure: series %q: len(X)=%d, len(Mean)=%d", s.Name, n, len(s.Mean)))
	}
	if (s.Lo == nil) != (s.Hi == nil) || (s.Lo != nil && (len(s.Lo) != n || len(s.Hi) != n)) {
		panic(fmt.Sprintf("figure: series %q: Lo and Hi must both be nil or both have len(X)=%d", s.Name, n))
	}
}

// valid reports whether v can be placed on an axis (finite, and positive on
// a log axis).
func valid(v float64, log bool) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && (!log || v > 0)
}

// Plot builds the gonum plot of c. It panics if a series' slices differ in
// length. Values that cannot be drawn (non-finite, or ≤ 0 on a log axis)
// are left out, each case reported in the returned warnings; lines and
// bands are broken where points are missing.
func (c Chart) Plot() (*plot.Plot, []string, error) {
	p := plot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	p.Legend.Top = true
	p.Legend.ThumbnailWidth = 0.45 * vg.Inch
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 225}
	grid.Horizontal.Color = color.Gray{Y: 225}
	p.Add(grid)

	var warns []string
	var lines []*plotter.Line
	var dots []*plotter.Scatter
	ymin, ymax := math.Inf(1), math.Inf(-1)
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for si, s := range c.Series {
		s.checkShapes()
		col := Color(si)
		order := sortedIndex(s.X)
		var dropped, bandDropped []string
		var lineSegs, bandSegs []plotter.XYs
		var cur, curLo, curHi plotter.XYs
		flushBand := func() {
			if len(curLo) >= 2 {
				ring := make(plotter.XYs, 0, 2*len(curLo))
				ring = append(ring, curLo...)
				for j := len(curHi) - 1; j >= 0; j-- {
					ring = append(ring, curHi[j])
				}
				bandSegs = append(bandSegs, ring)
			}
			curLo, curHi = nil, nil
		}
		for _, i := range order {
			x, y := s.X[i], s.Mean[i]
			if !valid(x, c.LogX) || !valid(y, c.LogY) {
				dropped = append(dropped, fmtPoint(x, y))
				if len(cur) > 0 {
					lineSegs = append(lineSegs, cur)
					cur = nil
				}
			} else {
				cur = append(cur, plotter.XY{X: x, Y: y})
				xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
				ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
			}
			if s.Lo == nil || s.HideBand {
				continue
			}
			lo, hi := s.Lo[i], s.Hi[i]
			if !valid(x, c.LogX) || !valid(lo, c.LogY) || !valid(hi, c.LogY) {
				if valid(x, c.LogX) {
					bandDropped = append(bandDropped, fmtF(x))
				}
				flushBand()
				continue
			}
			curLo = append(curLo, plotter.XY{X: x, Y: lo})
			curHi = append(curHi, plotter.XY{X: x, Y: hi})
			xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
			ymin, ymax = math.Min(ymin, math.Min(lo, hi)), math.Max(ymax, math.Max(lo, hi))
		}
		if len(cur) > 0 {
			lineSegs = append(lineSegs, cur)
		}
		flushBand()
		if len(dropped) > 0 {
			warns = append(warns, fmt.Sprintf("series %q: %d point(s) not drawn (%s): %s",
				s.Name, len(dropped), why(c), strings.Join(dropped, ", ")))
		}
		if len(bandDropped) > 0 {
			warns = append(warns, fmt.Sprintf("series %q: band not drawn at x=%s (%s)",
				s.Name, strings.Join(bandDropped, ", "), why(c)))
		}

		for _, ring := range bandSegs {
			poly, err := plotter.NewPolygon(ring)
			if err != nil {
				return nil, nil, fmt.Errorf("series %q band: %w", s.Name, err)
			}
			poly.Color = color.NRGBA{R: col.R, G: col.G, B: col.B, A: 50}
			poly.LineStyle.Width = 0
			poly.LineStyle.Color = color.NRGBA{}
			p.Add(poly)
		}
		var first *plotter.Line
		var firstDot *plotter.Scatter
		for _, xys := range lineSegs {
			l, sc, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, nil, fmt.Errorf("series %q: %w", s.Name, err)
			}
			l.Color = col
			l.Width = vg.Points(1.5)
			l.Dashes = plotutil.Dashes(si)
			sc.Color = col
			sc.Shape = plotutil.Shape(si)
			sc.Radius = vg.Points(3)
			lines = append(lines, l)
			dots = append(dots, sc)
			if first == nil {
				first, firstDot = l, sc
			}
		}
		if first == nil { // nothing drawable: still show the series in the legend
			first = &plotter.Line{LineStyle: draw.LineStyle{Color: col, Width: vg.Points(1.5), Dashes: plotutil.Dashes(si)}}
			firstDot = &plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: col, Shape: plotutil.Shape(si), Radius: vg.Points(3)}}
		}
		p.Legend.Add(s.Name, first, firstDot)
	}
	// Lines above every band.
	for i := range lines {
		p.Add(lines[i], dots[i])
	}

	setAxis(&p.X, c.LogX, xmin, xmax)
	setAxis(&p.Y, c.LogY, ymin, ymax)
	return p, warns, nil
}

func why(c Chart) string {
	if c.LogX || c.LogY {
		return "non-finite, or ≤ 0 on a log axis"
	}
	return "non-finite"
}

// setAxis fixes the axis range (the data range, widened when empty or
// degenerate) and the scale and ticks of a log axis.
func setAxis(a *plot.Axis, log bool, lo, hi float64) {
	if !log {
		if lo > hi { // no data
			a.Min, a.Max = 0, 1
		}
		return
	}
	a.Scale = plot.LogScale{}
	a.Tick.Marker = logTicks{}
	switch {
	case lo > hi: // no data
		lo, hi = 1, 10
	case lo == hi:
		lo, hi = lo/math.Sqrt(10), hi*math.Sqrt(10)
	default: // 3% margin in log space
		m := math.Pow(hi/lo, 0.03)
		lo, hi = lo/m, hi*m
	}
	a.Min, a.Max = lo, hi
}

// logTicks places plot.LogTicks from the decade below the axis minimum and,
// when the axis spans less than two labelled decades, labels the minor
// ticks too so that the axis can be read.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	floor := math.Pow10(int(math.Floor(math.Log10(min))))
	ticks := plot.LogTicks{Prec: -1}.Ticks(floor, max)
	labelled := 0
	for _, t := range ticks {
		if t.Label != "" && t.Value >= min && t.Value <= max {
			labelled++
		}
	}
	if labelled < 2 {
		for i := range ticks {
			if ticks[i].Label == "" {
				ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'g', 3, 64)
			}
		}
	}
	return ticks
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

// Encode writes c in format ("png", "svg", "pdf", …) to w and returns the
// warnings of Plot.
func (c Chart) Encode(w io.Writer, format string) ([]string, error) {
	p, warns, err := c.Plot()
	if err != nil {
		return nil, err
	}
	wd, ht := c.Width, c.Height
	if wd == 0 {
		wd = DefaultWidth
	}
	if ht == 0 {
		ht = DefaultHeight
	}
	wt, err := p.WriterTo(wd, ht, format)
	if err != nil {
		return nil, err
	}
	if _, err := wt.WriteTo(w); err != nil {
		return nil, err
	}
	return warns, nil
}

// Save writes c to base+".png" and base+".svg", each through a temporary
// file renamed into place, and returns the paths written and the warnings
// of Plot.
func Save(c Chart, base string) (files, warnings []string, err error) {
	for _, ext := range []string{"png", "svg"} {
		path := base + "." + ext
		var w []string
		err := atomicfile.Write(path, func(f io.Writer) error {
			var err error
			w, err = c.Encode(f, ext)
			return err
		})
		if err != nil {
			return files, nil, fmt.Errorf("writing %s: %w", path, err)
		}
		warnings = w
		files = append(files, path)
	}
	return files, warnings, nil
}
