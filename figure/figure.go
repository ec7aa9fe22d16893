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
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

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

// build makes the gonum plot of c and its legend, drawn apart. It panics if
// a series' slices differ in length. Values that cannot be drawn
// (non-finite, or ≤ 0 on a log axis) are left out, each case reported in
// the returned warnings; lines and bands are broken where points are
// missing.
func (c Chart) build() (*plot.Plot, *plot.Legend, []string, error) {
	p := plot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.ThumbnailWidth = 0.4 * vg.Inch
	leg.TextStyle.Font.Size = vg.Points(10)
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
				return nil, nil, nil, fmt.Errorf("series %q band: %w", s.Name, err)
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
				return nil, nil, nil, fmt.Errorf("series %q: %w", s.Name, err)
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
		leg.Add(s.Name, first, firstDot)
	}
	// Lines above every band.
	for i := range lines {
		p.Add(lines[i], dots[i])
	}

	setAxis(&p.X, c.LogX, xmin, xmax)
	setAxis(&p.Y, c.LogY, ymin, ymax)
	return p, &leg, warns, nil
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

// fitLabel returns label, broken onto two lines at the space nearest its
// middle and then set in a smaller font (down to 7 pt) as needed, so that
// it is at most room long.
func fitLabel(sty text.Style, label string, room vg.Length) (string, vg.Length) {
	size := sty.Font.Size
	if room <= 0 || sty.Width(label) <= room {
		return label, size
	}
	if !strings.Contains(label, "\n") {
		best := -1
		for i, r := range label {
			if r == ' ' && (best < 0 || abs(i-len(label)/2) < abs(best-len(label)/2)) {
				best = i
			}
		}
		if best > 0 {
			label = label[:best] + "\n" + label[best+1:]
		}
	}
	if w := sty.Width(label); w > room {
		size = max(vg.Points(7), size*room/w)
	}
	return label, size
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// PNGDPI is the resolution of PNG figures.
const PNGDPI = 150

// Encode writes c in format ("png", "svg", "pdf", …) to w: the plot, with
// the legend in a column on its right, and returns the warnings about
// values left out (see Series). It panics if a series' slices differ in
// length.
func (c Chart) Encode(w io.Writer, format string) ([]string, error) {
	p, leg, warns, err := c.build()
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
	var cw vg.CanvasWriterTo
	if format == "png" {
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(wd, ht), vgimg.UseDPI(PNGDPI))}
	} else if cw, err = draw.NewFormattedCanvas(wd, ht, format); err != nil {
		return nil, err
	}
	dc := draw.New(cw)
	gap := vg.Points(6)
	r := leg.Rectangle(dc)
	legW := r.Max.X - r.Min.X + 2*gap

	// The axis labels are drawn here rather than by gonum, which reserves
	// room for them around the arithmetic middle of the axis range: on a
	// log axis that is far off-centre and squeezes the data area.
	xl, xsty := p.X.Label.Text, p.X.Label.TextStyle
	room := ht - p.Title.TextStyle.Height(p.Title.Text) - p.Title.Padding - 0.7*vg.Inch
	yl, ysize := fitLabel(p.Y.Label.TextStyle, p.Y.Label.Text, room)
	ysty := p.Y.Label.TextStyle
	ysty.Font.Size = ysize
	p.X.Label.Text, p.Y.Label.Text = "", ""
	var left, bottom vg.Length
	if yl != "" {
		left = ysty.Height(yl) + gap
	}
	if xl != "" {
		bottom = xsty.Height(xl) + gap/2
	}
	area := draw.Crop(dc, left, -legW, bottom, 0)
	p.Draw(area)
	data := p.DataCanvas(area)
	if yl != "" {
		rot := ysty
		rot.Rotation += math.Pi / 2
		dc.FillText(rot, vg.Point{X: dc.Min.X + ysty.Height(yl) - ysty.FontExtents().Descent, Y: data.Center().Y}, yl)
	}
	if xl != "" {
		dc.FillText(xsty, vg.Point{X: data.Center().X, Y: dc.Min.Y + xsty.FontExtents().Descent}, xl)
	}

	lc := dc
	lc.Min.X = dc.Max.X - legW + gap
	lc.Max.Y = data.Max.Y
	leg.Draw(lc)
	if _, err := cw.WriteTo(w); err != nil {
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
