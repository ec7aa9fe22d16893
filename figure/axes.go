package figure

// Axes: ranges, tick marks and tick labels (the formats the package
// documentation states), and the superscript text handler of the labels.

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

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
