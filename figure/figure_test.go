package figure

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func testChart() Chart {
	x := []float64{-10, 0, 10, 20, 30}
	c := Chart{Title: "Fig. 0: test", XLabel: "SNR (dB)", YLabel: "err2", LogY: true}
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

func TestSaveWritesPNGAndSVG(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "fig")
	files, warns, err := Save(testChart(), base)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Errorf("unexpected warnings %v", warns)
	}
	if len(files) != 2 || files[0] != base+".png" || files[1] != base+".svg" {
		t.Fatalf("files %v", files)
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
	// 6 × 4.5 in at PNGDPI.
	if b := img.Bounds(); b.Dx() != 6*PNGDPI || b.Dy() != 4.5*PNGDPI {
		t.Errorf("PNG size %v, want %d×%g", b, 6*PNGDPI, 4.5*PNGDPI)
	}
	svg, err := os.ReadFile(base + ".svg")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("schemei")) {
		t.Error("SVG lacks the svg element or the last legend entry")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("%d files in dir, want 2 (temp files left?)", len(entries))
	}
}

func TestLogAxisDropsNonPositive(t *testing.T) {
	c := Chart{Title: "zeros", LogY: true, Series: []Series{
		{Name: "zeros", X: []float64{1, 2, 3, 4}, Mean: []float64{0, 1, 0, 2},
			Lo: []float64{0, 0.5, 0, 1}, Hi: []float64{0, 2, 0, 3}},
		{Name: "allzero", X: []float64{1, 2}, Mean: []float64{0, 0}},
		{Name: "nan", X: []float64{1, 2, 3}, Mean: []float64{1, math.NaN(), 3}},
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

func TestLogTicksLabelNarrowRange(t *testing.T) {
	labelled := 0
	for _, tk := range (logTicks{}).Ticks(0.0021, 0.0079) {
		if tk.Label != "" && tk.Value >= 0.0021 && tk.Value <= 0.0079 {
			labelled++
		}
	}
	if labelled < 2 {
		t.Errorf("%d labelled ticks within a sub-decade range, want ≥ 2", labelled)
	}
}

func TestColorsDistinct(t *testing.T) {
	seen := map[[3]uint8]bool{}
	for i := range 9 {
		c := Color(i)
		k := [3]uint8{c.R, c.G, c.B}
		if seen[k] {
			t.Errorf("colour %d repeats", i)
		}
		seen[k] = true
	}
}
