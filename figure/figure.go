// Package figure draws sweep results in the style of a journal figure:
// one line with markers per series over a shaded band (a confidence
// interval or the spread of trials, as the caller computes it), on linear
// or log axes, with a title, a wrapped caption and the legend beside the
// plot, saved as PNG (print resolution), SVG and PDF. It knows nothing of
// the runner: a Chart is plain data.
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
	"io"
	"math"
	"strconv"
	"strings"

	stdfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"wcmc/internal/atomicfile"
)

// Series is one curve: Mean[i] at X[i], with an optional band from Lo[i]
// to Hi[i] (nil Lo and Hi: no band; Lo[i] and Hi[i] both NaN: no band at
// that point). Points are drawn in increasing X.
type Series struct {
	Name     string
	X, Mean  []float64
	Lo, Hi   []float64
	HideBand bool   // draw no band even if Lo and Hi are set
	Style    *Style // nil: StyleOf(the series' index)
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

// traced is a series cut into drawable stretches.
type traced struct {
	lines []plotter.XYs
	bands []band
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
		if len(cb.lo) >= 2 {
			t.bands = append(t.bands, cb)
		}
		cb = band{}
	}
	for _, i := range sortedIndex(s.X) {
		x, y := s.X[i], s.Mean[i]
		if !valid(x, c.LogX) || !valid(y, c.LogY) {
			dropped = append(dropped, fmtPoint(x, y))
			if len(cur) > 0 {
				t.lines = append(t.lines, cur)
				cur = nil
			}
		} else {
			cur = append(cur, plotter.XY{X: x, Y: y})
			xs.add(x)
			ys.add(y)
		}
		if s.Lo == nil || s.HideBand {
			continue
		}
		lo, hi := s.Lo[i], s.Hi[i]
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
	setXAxis(&p.X, c.LogX, xs, c.XTicks)
	setYAxis(&p.Y, c.LogY, ys)

	var lines []plot.Plotter
	for si, s := range c.Series {
		sty := StyleOf(si)
		if s.Style != nil {
			sty = *s.Style
		}
		col := sty.Color
		for _, b := range traces[si].bands {
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
			l, sc, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("series %q: %w", s.Name, err)
			}
			l.LineStyle, sc.GlyphStyle = lineStyle, glyph
			lines = append(lines, l, sc)
		}
		// Every series is in the legend, even with nothing drawable.
		leg.Add(s.Name, &plotter.Line{LineStyle: lineStyle}, &plotter.Scatter{GlyphStyle: glyph})
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

// setXAxis fixes the x axis: the data range with a 3% margin, log or
// linear ticks, and on a linear axis with ticks given, those.
func setXAxis(a *plot.Axis, log bool, e extent, ticks []float64) {
	lo, hi := e.lo, e.hi
	switch {
	case lo > hi: // no data
		lo, hi = 1, 10
		if !log {
			lo = 0
		}
	case lo == hi:
		if log {
			lo, hi = lo/math.Sqrt(10), hi*math.Sqrt(10)
		} else {
			lo, hi = lo-1, hi+1
		}
	case log:
		m := math.Pow(hi/lo, 0.03)
		lo, hi = lo/m, hi*m
	default:
		m := 0.03 * (hi - lo)
		lo, hi = lo-m, hi+m
	}
	a.Min, a.Max = lo, hi
	switch {
	case log:
		a.Scale = plot.LogScale{}
		a.Tick.Marker = logTicks{}
	case len(ticks) > 0:
		a.Tick.Marker = pointTicks(ticks)
	default:
		a.Tick.Marker = linearTicks{}
	}
}

// setYAxis fixes the y axis: on a log axis, whole decades around data
// that span one or more (a 3% margin otherwise); on a linear one, the data
// range with a 3% margin.
func setYAxis(a *plot.Axis, log bool, e extent) {
	lo, hi := e.lo, e.hi
	if !log {
		a.Tick.Marker = linearTicks{}
		switch {
		case lo > hi:
			lo, hi = 0, 1
		case lo == hi:
			lo, hi = lo-1, hi+1
		default:
			m := 0.03 * (hi - lo)
			lo, hi = lo-m, hi+m
		}
		a.Min, a.Max = lo, hi
		return
	}
	a.Scale = plot.LogScale{}
	a.Tick.Marker = logTicks{}
	switch {
	case lo > hi: // no data
		lo, hi = 1, 10
	case lo == hi:
		lo, hi = lo/math.Sqrt(10), hi*math.Sqrt(10)
	case hi/lo >= 10:
		lo, hi = math.Pow10(floorLog(lo)), math.Pow10(ceilLog(hi))
	default:
		m := math.Pow(hi/lo, 0.03)
		lo, hi = lo/m, hi*m
	}
	a.Min, a.Max = lo, hi
}

// floorLog and ceilLog are ⌊log10 v⌋ and ⌈log10 v⌉, exact at powers of ten.
func floorLog(v float64) int {
	e := int(math.Floor(math.Log10(v)))
	if math.Pow10(e+1) <= v {
		e++
	}
	return e
}

func ceilLog(v float64) int {
	e := int(math.Ceil(math.Log10(v)))
	if math.Pow10(e-1) >= v {
		e--
	}
	return e
}

// powerOf10 writes m·10^e as "10^−5" or "2×10^−5": tickText sets what
// follows the caret as a superscript (the Liberation fonts have no
// superscript minus, and gonum's LaTeX has no superscripts).
func powerOf10(m float64, e int) string {
	s := "10^" + minus(strconv.Itoa(e))
	if m != 1 {
		s = strconv.FormatFloat(m, 'f', -1, 64) + "×" + s
	}
	return s
}

// minus writes a negative number with the minus sign (U+2212) rather than
// a hyphen.
func minus(s string) string {
	if strings.HasPrefix(s, "-") {
		return "−" + s[1:]
	}
	return s
}

// decadeLabel writes m·10^e: as a plain decimal ("0.002", "5000"), or in
// powers of ten (powerOf10) when pow.
func decadeLabel(m, e int, pow bool) string {
	if pow {
		return powerOf10(float64(m), e)
	}
	return strconv.FormatFloat(float64(m)*math.Pow10(e), 'f', max(0, -e), 64)
}

// tickText sets tick labels, with what follows a caret as a superscript
// (see powerOf10).
var tickText text.Handler = superscripts{text.Plain{Fonts: font.DefaultCache}}

// superscripts is a text handler that sets "a^b" as a with b raised in a
// smaller font; other text as Plain does. It handles one line, unrotated.
type superscripts struct{ text.Plain }

// supScale and supRaise are the size of a superscript and how far it is
// raised, relative to the font size and ascent.
const supScale, supRaise = 0.72, 0.45

func (h superscripts) parts(txt string, fnt font.Font) (base, sup string, bf, sf font.Face, ok bool) {
	base, sup, ok = strings.Cut(txt, "^")
	if !ok {
		return "", "", font.Face{}, font.Face{}, false
	}
	small := fnt
	small.Size = vg.Length(supScale) * fnt.Size
	return base, sup, h.Fonts.Lookup(fnt, fnt.Size), h.Fonts.Lookup(small, small.Size), true
}

func (h superscripts) Box(txt string, fnt font.Font) (w, ht, d vg.Length) {
	base, sup, bf, sf, ok := h.parts(txt, fnt)
	if !ok {
		return h.Plain.Box(txt, fnt)
	}
	ext := bf.Extents()
	return bf.Width(base) + sf.Width(sup), ext.Ascent, ext.Descent
}

func (h superscripts) Draw(c vg.Canvas, txt string, sty text.Style, at vg.Point) {
	base, sup, bf, sf, ok := h.parts(txt, sty.Font)
	if !ok || sty.Rotation != 0 {
		h.Plain.Draw(c, txt, sty, at)
		return
	}
	c.SetColor(sty.Color)
	asc := bf.Extents().Ascent
	wb := bf.Width(base)
	at.Y += sty.Height(txt)*vg.Length(sty.YAlign) - asc + sty.Font.Size
	at.X += vg.Length(sty.XAlign) * (wb + sf.Width(sup))
	c.FillString(bf, at, base)
	c.FillString(sf, vg.Point{X: at.X + wb, Y: at.Y + vg.Length(supRaise)*asc}, sup)
}

// plainDecades is the range of decades written as plain decimals.
const plainLow, plainHigh = -3, 4

// maxLabelledDecades is the most decades labelled one by one; beyond it a
// log axis labels every second (or third, …) decade.
const maxLabelledDecades = 15

// logTicks labels every decade of a log axis (in one format, see
// decadeLabel), with unlabelled minor ticks at 2–9× when the axis spans at
// most ten decades; it labels 2× and 5× as well when fewer than two
// decades fall within the axis, and falls back to linear ticks within a
// range holding no decade and too few of those.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	lo, hi := floorLog(min), ceilLog(max)
	in := func(v float64) bool { return v >= min*(1-1e-9) && v <= max*(1+1e-9) }
	decadesIn := 0
	for e := lo; e <= hi; e++ {
		if in(math.Pow10(e)) {
			decadesIn++
		}
	}
	pow := false
	for e := lo; e <= hi; e++ {
		if in(math.Pow10(e)) && (e < plainLow || e > plainHigh) {
			pow = true
		}
	}
	step := 1 + (hi-lo-1)/maxLabelledDecades
	var ticks []plot.Tick
	for e := lo; e <= hi; e++ {
		for m := 1; m <= 9; m++ {
			if e == hi && m > 1 {
				break
			}
			v := float64(m) * math.Pow10(e)
			t := plot.Tick{Value: v}
			switch {
			case m == 1 && (e-lo)%step == 0:
				t.Label = decadeLabel(m, e, pow)
			case m > 1 && hi-lo > 10:
				continue // no minor ticks on a long axis
			case decadesIn < 2 && (m == 2 || m == 5):
				t.Label = decadeLabel(m, e, pow)
			}
			ticks = append(ticks, t)
		}
	}
	labelled := 0
	for _, t := range ticks {
		if t.Label != "" && in(t.Value) {
			labelled++
		}
	}
	if labelled >= 2 {
		return ticks
	}
	// A narrow range: label every minor tick, or else fall back to the
	// ticks of a linear axis.
	for i := range ticks {
		e := floorLog(ticks[i].Value)
		ticks[i].Label = decadeLabel(int(math.Round(ticks[i].Value/math.Pow10(e))), e, pow)
	}
	n := 0
	for _, t := range ticks {
		if in(t.Value) {
			n++
		}
	}
	if n >= 2 {
		return ticks
	}
	return linearTicks{}.Ticks(min, max)
}

// decimals returns the fewest decimals (at most 6) that write every value
// of vs exactly (to 1e-9 of the largest).
func decimals(vs []float64) int {
	scale := 0.0
	for _, v := range vs {
		scale = math.Max(scale, math.Abs(v))
	}
	for d := 0; d < 6; d++ {
		ok := true
		for _, v := range vs {
			f := v * math.Pow10(d)
			if math.Abs(f-math.Round(f)) > 1e-9*math.Max(1, scale*math.Pow10(d)) {
				ok = false
				break
			}
		}
		if ok {
			return d
		}
	}
	return 6
}

// fixedLabels labels the values with the same number of decimals (plain
// decimals below 1e6 in magnitude, powers of ten above).
func fixedLabels(vs []float64) []string {
	d := decimals(vs)
	out := make([]string, len(vs))
	big := false
	for _, v := range vs {
		if math.Abs(v) >= 1e6 {
			big = true
		}
	}
	for i, v := range vs {
		switch {
		case big && v != 0:
			e := floorLog(math.Abs(v))
			out[i] = powerOf10(v/math.Pow10(e), e)
		default:
			s := strconv.FormatFloat(v, 'f', d, 64)
			if strings.Trim(s, "-0.") == "" {
				s = strings.TrimPrefix(s, "-") // no "-0"
			}
			out[i] = minus(s)
		}
	}
	return out
}

// linearTicks are gonum's default linear ticks with labels in one format.
type linearTicks struct{}

func (linearTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	var vs []float64
	for _, t := range ticks {
		if t.Label != "" {
			vs = append(vs, t.Value)
		}
	}
	labels := fixedLabels(vs)
	j := 0
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = labels[j]
			j++
		}
	}
	return ticks
}

// pointTicks label the given values (every k-th beyond MaxXLabels), each
// with the same number of decimals.
type pointTicks []float64

func (p pointTicks) Ticks(min, max float64) []plot.Tick {
	var vs []float64
	for _, v := range p {
		if v >= min && v <= max {
			vs = append(vs, v)
		}
	}
	labels := fixedLabels(vs)
	step := 1 + (len(vs)-1)/MaxXLabels
	ticks := make([]plot.Tick, len(vs))
	for i, v := range vs {
		ticks[i].Value = v
		if i%step == 0 {
			ticks[i].Label = labels[i]
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

// wrap breaks s into lines at most width long in sty (a line break in s
// always starts a new line; a word longer than width stands alone).
func wrap(sty text.Style, s string, width vg.Length) []string {
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, w := range strings.Fields(para) {
			switch {
			case line == "":
				line = w
			case sty.Width(line+" "+w) <= width:
				line += " " + w
			default:
				out = append(out, line)
				line = w
			}
		}
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}

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
		size = max(pt(7), size*room/w)
	}
	return label, size
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// PNGDPI is the resolution of PNG figures: print resolution.
const PNGDPI = 300

// Formats are the file formats Save writes, in order.
var Formats = []string{"png", "svg", "pdf"}

// textStyle returns the text style of the figure at size points, centred
// horizontally and aligned at y, bold if asked.
func textStyle(size float64, y draw.YAlignment, bold bool) text.Style {
	f := font.From(plot.DefaultFont, pt(size))
	if bold {
		f.Weight = stdfont.WeightBold
	}
	return text.Style{Color: color.Black, Font: f, XAlign: draw.XCenter, YAlign: y, Handler: plot.DefaultTextHandler}
}

// Encode writes c in format ("png", "svg", "pdf", …) to w: the title and
// the wrapped caption across the top, the plot, and the legend in a
// column on its right. It returns the warnings about values left out (see
// Series) and panics if a series' slices differ in length.
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
	switch format {
	case "png":
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(wd, ht), vgimg.UseDPI(PNGDPI))}
	case "pdf":
		cw = newOutlinedPDF(wd, ht)
	default:
		if cw, err = draw.NewFormattedCanvas(wd, ht, format); err != nil {
			return nil, err
		}
	}
	dc := draw.New(cw)
	gap := pt(6)
	dc = draw.Crop(dc, gap, -gap, gap/2, -gap/2)

	// Title and caption, centred across the figure.
	y := dc.Max.Y
	if c.Title != "" {
		sty := textStyle(titleSize, draw.YTop, true)
		for _, line := range wrap(sty, c.Title, dc.Size().X) {
			dc.FillText(sty, vg.Point{X: dc.Center().X, Y: y}, line)
			y -= sty.FontExtents().Height
		}
	}
	if c.Caption != "" {
		sty := textStyle(captionSize, draw.YTop, false)
		sty.Color = color.Gray{Y: 60}
		for _, line := range wrap(sty, c.Caption, dc.Size().X-2*gap) {
			dc.FillText(sty, vg.Point{X: dc.Center().X, Y: y}, line)
			y -= sty.FontExtents().Height
		}
	}
	if y < dc.Max.Y {
		y -= gap
	}
	dc.Max.Y = y

	r := leg.Rectangle(dc)
	legW := r.Max.X - r.Min.X + 2*gap

	// The axis labels are drawn here rather than by gonum, which reserves
	// room for them around the arithmetic middle of the axis range: on a
	// log axis that is far off-centre and squeezes the data area.
	xl := p.X.Label.Text
	xsty := textStyle(labelSize, draw.YBottom, false)
	ysty := textStyle(labelSize, draw.YBottom, false)
	yl, ysize := fitLabel(ysty, p.Y.Label.Text, dc.Size().Y-0.6*vg.Inch)
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

// Save writes c to base+".png", ".svg" and ".pdf" (Formats), each through
// a temporary file renamed into place, and returns the paths written and
// the warnings of Encode.
func Save(c Chart, base string) (files, warnings []string, err error) {
	for _, ext := range Formats {
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
