package figure

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

func testChart() Chart {
	x := []float64{-10, 0, 10, 20, 30}
	c := Chart{Title: "Fig. 0 — test", Caption: "A caption long enough to need wrapping across the width of the figure, " +
		"so that the wrapping is exercised.\nA second line.", XLabel: "SNR (dB)", YLabel: "second-order test error", LogY: true, XTicks: x}
	for i := range 9 {
		s := Series{Name: "scheme" + string(rune('a'+i)), X: x}
		for _, xv := range x {
			m := math.Pow(10, -xv/20) * float64(i+1) / 3
			s.Mean = append(s.Mean, m)
			s.Lo = append(s.Lo, m/1.5)
			s.Hi = append(s.Hi, m*1.5)
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// svgTexts returns the text elements of an SVG document.
func svgTexts(svg []byte) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<text[^>]*>([^<]*)</text>`).FindAllSubmatch(svg, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

func TestSaveWritesPNGSVGAndPDF(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "fig")
	files, warns, err := Save(testChart(), base)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Errorf("unexpected warnings %v", warns)
	}
	if want := []string{base + ".png", base + ".svg", base + ".pdf"}; !slices.Equal(files, want) {
		t.Fatalf("files %v, want %v", files, want)
	}
	f, err := os.Open(base + ".png")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("PNG does not decode: %v", err)
	}
	// 7 × 5 in at print resolution.
	if b := img.Bounds(); b.Dx() != 7*PNGDPI || b.Dy() != 5*PNGDPI {
		t.Errorf("PNG size %v, want %d×%d", b, 7*PNGDPI, 5*PNGDPI)
	}
	svg, err := os.ReadFile(base + ".svg")
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(svg)
	for _, want := range []string{"schemei", "Fig. 0 — test", "A second line.", "SNR (dB)", "second-order test error"} {
		if !slices.Contains(texts, want) {
			t.Errorf("SVG lacks the text %q: %q", want, texts)
		}
	}
	pdf, err := os.ReadFile(base + ".pdf")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) || !bytes.Contains(pdf, []byte("%%EOF")) {
		t.Error("the PDF is not a complete PDF document")
	}
	// Text is drawn as glyph outlines: no font (whose code page would
	// lose the minus sign, exponents and Greek letters).
	if bytes.Contains(pdf, []byte("/BaseFont")) {
		t.Error("the PDF sets text in a font rather than outlines")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("%d files in dir, want 3 (temp files left?)", len(entries))
	}
}

// The caption is wrapped to the figure's width: no line is wider, and
// every word is kept.
func TestCaptionWrapped(t *testing.T) {
	sty := textStyle(captionSize, 0, false)
	c := testChart()
	lines := wrap(sty, c.Caption, 3*72)
	if len(lines) < 3 {
		t.Fatalf("%d lines, want ≥ 3: %q", len(lines), lines)
	}
	for _, l := range lines {
		if sty.Width(l) > 3*72 {
			t.Errorf("line %q is %v wide, more than 216 pt", l, sty.Width(l))
		}
	}
	if got, want := strings.Fields(strings.Join(lines, " ")), strings.Fields(c.Caption); !slices.Equal(got, want) {
		t.Errorf("words changed:\n%q\n%q", got, want)
	}
}

// labels returns the labels of the ticks within [min, max].
func labels(ticks []plot.Tick, min, max float64) []string {
	var out []string
	for _, t := range ticks {
		if t.Label != "" && t.Value >= min*(1-1e-9) && t.Value <= max*(1+1e-9) {
			out = append(out, t.Label)
		}
	}
	return out
}

// Every decade of a log axis is labelled, in one format: plain decimals
// within 0.001–10000, powers of ten beyond; never a rounding artefact such
// as 9.999999999999999e-05.
func TestLogTicksLabelEveryDecade(t *testing.T) {
	for _, c := range []struct {
		min, max float64
		want     []string
	}{
		{0.01, 10, []string{"0.01", "0.1", "1", "10"}},
		{1e-4, 100, []string{"0.0001"}}, // checked below: 10^−4 is outside the plain range
		{1e-11, 10, nil},
		{1e5, 1e7, []string{"10^5", "10^6", "10^7"}},
		{7, 2000, []string{"10", "100", "1000"}},
	} {
		got := labels(logTicks{}.Ticks(c.min, c.max), c.min, c.max)
		lo, hi := floorLog(c.min), ceilLog(c.max)
		var want []string
		pow := lo < plainLow || hi > plainHigh
		for e := lo; e <= hi; e++ {
			if v := math.Pow10(e); v >= c.min && v <= c.max {
				want = append(want, decadeLabel(1, e, pow))
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("[%g, %g]: labels %q, want %q", c.min, c.max, got, want)
		}
		if c.want != nil && c.min >= 1e-3 && c.max <= 1e4 && !slices.Equal(got, c.want) {
			t.Errorf("[%g, %g]: labels %q, want %q", c.min, c.max, got, c.want)
		}
		for _, l := range got {
			if strings.Contains(l, "e-") || strings.Contains(l, "e+") || strings.Contains(l, "999") {
				t.Errorf("[%g, %g]: label %q", c.min, c.max, l)
			}
		}
	}
	// Every decade from 10^−12 to 10^12 is written exactly.
	for e := -12; e <= 12; e++ {
		if got, want := decadeLabel(1, e, true), "10^"+minus(fmt.Sprint(e)); got != want {
			t.Errorf("decade %d: %q, want %q", e, got, want)
		}
		if e >= plainLow && e <= plainHigh {
			want := fmt.Sprint(math.Pow10(e))
			if got := decadeLabel(1, e, false); got != want {
				t.Errorf("decade %d: %q, want %q", e, got, want)
			}
		}
	}
}

// Fewer than two decades within the axis: 2× and 5× are labelled too; a
// range within one decade labels its minor ticks.
func TestLogTicksLabelNarrowRange(t *testing.T) {
	got := labels(logTicks{}.Ticks(0.015, 0.5), 0.015, 0.5)
	if want := []string{"0.02", "0.05", "0.1", "0.2", "0.5"}; !slices.Equal(got, want) {
		t.Errorf("[0.015, 0.5]: %q, want %q", got, want)
	}
	got = labels(logTicks{}.Ticks(0.0021, 0.0079), 0.0021, 0.0079)
	if want := []string{"0.003", "0.004", "0.005", "0.006", "0.007"}; !slices.Equal(got, want) {
		t.Errorf("[0.0021, 0.0079]: %q, want %q", got, want)
	}
	if got := labels(logTicks{}.Ticks(0.31, 0.35), 0.31, 0.35); len(got) < 2 {
		t.Errorf("[0.31, 0.35]: %q, want ≥ 2 labels", got)
	}
}

// A y axis whose data span a decade or more runs from decade to decade, so
// that both ends are labelled.
func TestLogYAxisWholeDecades(t *testing.T) {
	var a plot.Axis
	setYAxis(&a, true, extent{0.015, 1.5})
	if a.Min != 0.01 || a.Max != 10 {
		t.Errorf("axis [%g, %g], want [0.01, 10]", a.Min, a.Max)
	}
}

// A linear x axis given the swept points labels each, with one number of
// decimals and the minus sign.
func TestLinearXTicksAtSweptPoints(t *testing.T) {
	x := []float64{-10, -5, 0, 5, 10, 15, 20, 25, 30}
	got := labels(pointTicks(x).Ticks(-11, 31), -11, 31)
	if want := []string{"−10", "−5", "0", "5", "10", "15", "20", "25", "30"}; !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
	if got := fixedLabels([]float64{0, 0.5, 1, 1.5}); !slices.Equal(got, []string{"0.0", "0.5", "1.0", "1.5"}) {
		t.Errorf("fixedLabels: %q", got)
	}
	if got := fixedLabels([]float64{5e5, 1e6, 2e6}); !slices.Equal(got, []string{"5×10^5", "10^6", "2×10^6"}) {
		t.Errorf("fixedLabels of large values: %q", got)
	}
	// Beyond MaxXLabels points, every k-th is labelled.
	var many []float64
	for i := range 30 {
		many = append(many, float64(i))
	}
	if n := len(labels(pointTicks(many).Ticks(-1, 30), -1, 30)); n > MaxXLabels || n < MaxXLabels/2 {
		t.Errorf("%d labels for 30 points, want at most %d", n, MaxXLabels)
	}
}

// The SVG of a chart over eleven decades has a label at each decade (the
// exponent set apart as a superscript) and no rounding artefacts.
func TestSVGLabelsEveryDecade(t *testing.T) {
	c := Chart{LogY: true, XTicks: []float64{1, 2, 3}, Series: []Series{
		{Name: "a", X: []float64{1, 2, 3}, Mean: []float64{1e-10, 1e-3, 0.5}}}}
	var buf bytes.Buffer
	if _, err := c.Encode(&buf, "svg"); err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(buf.Bytes())
	for e := -10; e <= 0; e++ {
		if !slices.Contains(texts, minus(fmt.Sprint(e))) {
			t.Errorf("no exponent %d among the SVG texts %q", e, texts)
		}
	}
	for _, s := range texts {
		if strings.Contains(s, "e-") || strings.Contains(s, "999") {
			t.Errorf("label %q", s)
		}
	}
}

func TestLogAxisDropsNonPositive(t *testing.T) {
	c := Chart{Title: "zeros", LogY: true, Series: []Series{
		{Name: "zeros", X: []float64{1, 2, 3, 4}, Mean: []float64{0, 1, 0, 2},
			Lo: []float64{0, 0.5, 0, 1}, Hi: []float64{0, 2, 0, 3}},
		{Name: "allzero", X: []float64{1, 2}, Mean: []float64{0, 0}},
		{Name: "nan", X: []float64{1, 2, 3}, Mean: []float64{1, math.NaN(), 3}},
		{Name: "noband", X: []float64{1, 2}, Mean: []float64{1, 2}, Lo: []float64{math.NaN(), 1}, Hi: []float64{math.NaN(), 3}},
	}}
	var buf bytes.Buffer
	warns, err := c.Encode(&buf, "png")
	if err != nil {
		t.Fatal(err)
	}
	if buf.Len() == 0 {
		t.Error("empty PNG")
	}
	all := strings.Join(warns, "\n")
	for _, w := range []string{`"zeros": 2 point(s) not drawn`, `(1, 0)`, `(3, 0)`, `"allzero": 2 point(s)`,
		`"zeros": band not drawn at x=1, 3`, `"nan": 1 point(s) not drawn`} {
		if !strings.Contains(all, w) {
			t.Errorf("warnings lack %q:\n%s", w, all)
		}
	}
	if strings.Contains(all, "noband") {
		t.Errorf("a point with no band (Lo and Hi NaN) was warned about:\n%s", all)
	}
	// A chart with nothing drawable still renders, on log and linear axes.
	for _, logY := range []bool{true, false} {
		empty := Chart{LogY: logY, LogX: true, Series: []Series{{Name: "none", X: []float64{0}, Mean: []float64{0}}}}
		if _, err := empty.Encode(&bytes.Buffer{}, "svg"); err != nil {
			t.Errorf("logY=%v: %v", logY, err)
		}
	}
	// A single positive value (degenerate range) on a log axis.
	one := Chart{LogY: true, Series: []Series{{Name: "one", X: []float64{5}, Mean: []float64{0.3}}}}
	if _, err := one.Encode(&bytes.Buffer{}, "png"); err != nil {
		t.Error(err)
	}
}

func TestShapeMismatchPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for len(Mean) != len(X)")
		}
	}()
	Chart{Series: []Series{{Name: "bad", X: []float64{1, 2}, Mean: []float64{1}}}}.Encode(&bytes.Buffer{}, "svg")
}

// The styles differ in colour, and in dash pattern or marker, so that they
// stay apart in grey print.
func TestStylesDistinct(t *testing.T) {
	seen := map[[3]uint8]bool{}
	grey := map[string]bool{}
	for i := range len(styles) {
		s := StyleOf(i)
		k := [3]uint8{s.Color.R, s.Color.G, s.Color.B}
		if seen[k] {
			t.Errorf("colour %d repeats", i)
		}
		seen[k] = true
		g := fmt.Sprintf("%v %T", s.Dashes, s.Shape)
		if grey[g] {
			t.Errorf("style %d has the dashes and marker of another: %s", i, g)
		}
		grey[g] = true
	}
}

// A translucent colour reaches the PDF canvas with its own components and
// its alpha apart, not premultiplied (which would darken every band).
func TestStraightAlpha(t *testing.T) {
	r, g, b, a := straightAlpha(color.NRGBA{213, 94, 0, 40}).RGBA()
	if r>>8 != 213 || g>>8 != 94 || b != 0 || a>>8 != 40 {
		t.Errorf("RGBA = %d %d %d %d, want 213 94 0 40 (×257)", r>>8, g>>8, b>>8, a>>8)
	}
}

func TestSourceDate(t *testing.T) {
	for _, c := range []struct {
		v    string
		ok   bool
		want int64
	}{{"1700000000", true, 1700000000}, {"0", true, 0}, {"", false, 0}, {"-5", false, 0}, {"1.5", false, 0}, {"soon", false, 0}} {
		got, ok := SourceDate(c.v)
		if ok != c.ok || (ok && got.Unix() != c.want) {
			t.Errorf("SourceDate(%q) = %v, %v; want %d, %v", c.v, got, ok, c.want, c.ok)
		}
	}
}

// Values above the ceiling, +Inf included, are drawn at it: the y axis
// ends just above it, nothing is left out, and the capped mean and the
// points marked Clipped carry an arrow instead of a marker.
func TestCeilingCapsTheAxis(t *testing.T) {
	c := Chart{LogY: true, Ceiling: 1e4, Series: []Series{
		{Name: "wild", X: []float64{1, 2, 3}, Mean: []float64{1, 2, 1e30},
			Lo: []float64{0.5, 1, 1}, Hi: []float64{2, 3, math.Inf(1)}},
		{Name: "tame", X: []float64{1, 2, 3}, Mean: []float64{1, 1, 1}, Clipped: []bool{true, false, false}},
	}}
	p, _, warns, err := c.build()
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Errorf("values left out: %v", warns)
	}
	if top := 1e4 * math.Pow(1e4/p.Y.Min, ceilingMargin); p.Y.Min != 0.1 || p.Y.Max != top {
		t.Errorf("y axis [%g, %g], want [0.1, %g]", p.Y.Min, p.Y.Max, top)
	}
	var xs, ys extent
	wild, _ := c.trace(c.Series[0], &xs, &ys)
	if len(wild.points) != 2 || len(wild.arrows) != 1 || wild.arrows[0].X != 3 || wild.arrows[0].Y != 1e4 {
		t.Errorf("wild: markers %v, arrows %v", wild.points, wild.arrows)
	}
	if b := wild.bands[0]; len(b.hi) != 3 || b.hi[2].Y != 1e4 || wild.lines[0][2].Y != 1e4 {
		t.Errorf("wild: band %v, line %v; want both capped at 1e4", b.hi, wild.lines[0])
	}
	tame, _ := c.trace(c.Series[1], &xs, &ys)
	if len(tame.points) != 3 || len(tame.arrows) != 1 || tame.arrows[0].X != 1 {
		t.Errorf("tame: markers %v, arrows %v", tame.points, tame.arrows)
	}
	// Without a ceiling the axis spans every value.
	c.Ceiling = 0
	p, _, _, err = c.build()
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Max < 1e30 {
		t.Errorf("without a ceiling the axis ends at %g", p.Y.Max)
	}
}

// A band of one point, between points without one, is kept (drawn as a
// bar) rather than dropped.
func TestBandOfOnePoint(t *testing.T) {
	c := Chart{LogY: true}
	s := Series{Name: "one", X: []float64{1, 2, 3}, Mean: []float64{1, 2, 3},
		Lo: []float64{math.NaN(), 1, math.NaN()}, Hi: []float64{math.NaN(), 4, math.NaN()}}
	var xs, ys extent
	tr, warns := c.trace(s, &xs, &ys)
	if len(warns) != 0 || len(tr.bands) != 1 || len(tr.bands[0].lo) != 1 || tr.bands[0].hi[0].Y != 4 {
		t.Errorf("bands %v, warnings %v", tr.bands, warns)
	}
	c.Series = []Series{s}
	if _, err := c.Encode(&bytes.Buffer{}, "svg"); err != nil {
		t.Error(err)
	}
}

// A guide line widens the y axis to its value, is labelled in the legend
// and is left out on a log axis where it is not positive.
func TestGuide(t *testing.T) {
	c := Chart{Title: "coverage", XLabel: "x", YLabel: "mass", Guide: &Guide{Y: 0.9, Label: "ideal 0.9"},
		Series: []Series{{Name: "a", X: []float64{1, 2, 3}, Mean: []float64{0.1, 0.3, 0.5}}}}
	p, _, _, err := c.build()
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Max < 0.9 {
		t.Errorf("y axis ends at %g, below the guide at 0.9", p.Y.Max)
	}
	svgOf := func(c Chart) string {
		var b bytes.Buffer
		if _, err := c.Encode(&b, "svg"); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if !strings.Contains(svgOf(c), ">ideal 0.9<") {
		t.Error("the legend lacks the guide")
	}
	c.LogY, c.Guide = true, &Guide{Y: 0, Label: "zero guide"}
	if strings.Contains(svgOf(c), "zero guide") {
		t.Error("a guide at 0 is drawn on a log axis")
	}
}
