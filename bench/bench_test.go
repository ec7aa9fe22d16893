package bench

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
)

// TestRunTiny runs the whole suite on tiny problems and checks the report
// is complete and consistent (no timing assertions: only that every time
// is positive, every ratio is time/bound time, the parallel run reproduced
// the sequential samples, allocations where the design forbids them are
// zero, and the markdown and chart carry every kernel and series).
func TestRunTiny(t *testing.T) {
	r, err := Run(context.Background(), Config{Reps: 1, MinSample: time.Millisecond, sizes: tinySizes()})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, k := range r.Kernels {
		names[k.Name] = true
		if !(k.Time > 0) || !(k.Rate > 0) || math.IsInf(k.Rate, 0) {
			t.Errorf("%s %s: time %v, rate %v", k.Name, k.Size, k.Time, k.Rate)
		}
		if k.Bound != "" {
			if want := float64(k.Time) / float64(k.BoundTime); math.Abs(k.Ratio-want) > 1e-12*want {
				t.Errorf("%s: ratio %v, want %v", k.Name, k.Ratio, want)
			}
		}
		switch k.Name {
		case "Gibbs sweep", gibbs32Name, "SGLD iteration", "WVCMC value + gradient", specialName:
			if k.Allocs != 0 {
				t.Errorf("%s %s: %v allocations per operation", k.Name, k.Size, k.Allocs)
			}
		case "K workers in parallel":
			if !strings.Contains(k.Note, "identical to the 1-core run: true") {
				t.Errorf("parallel workers: %s", k.Note)
			}
		}
	}
	for _, want := range []string{"Gibbs sweep", gibbs32Name, "truncated-normal latent draws", "StdNormalAbove (one call)",
		"probit gradient (batched)", "probit log-joint + gradient (fused)", specialName, "SGLD iteration",
		"WVCMC value + gradient", "K workers in parallel"} {
		if !names[want] {
			t.Errorf("no %q in the report", want)
		}
	}
	// One WVCMC row per size, each with its bound (the same margins'
	// arithmetic at the vector peak) where the machine has one, and the
	// special functions' time alone in its note.
	_, _, _, hasPeak := vectorPeak()
	var wv int
	for _, k := range r.Kernels {
		if k.Name != "WVCMC value + gradient" {
			continue
		}
		wv++
		if hasPeak && (k.Bound == "" || !(k.BoundTime > 0) || math.Abs(k.BoundRate*k.BoundTime.Seconds()-1) > 1e-12) {
			t.Errorf("WVCMC %s: bound %q, time %v, rate %v", k.Size, k.Bound, k.BoundTime, k.BoundRate)
		}
		if !strings.Contains(k.Note, "of which the special functions alone") {
			t.Errorf("WVCMC %s: the note does not give the special functions' share: %q", k.Size, k.Note)
		}
	}
	if want := len(tinySizes().wvcmc); wv != want {
		t.Errorf("%d WVCMC rows, want %d (d = 5, 30 and a large d)", wv, want)
	}
	// Two special-function rows (fitted and tail margins), each with its
	// bound where the machine has the vector peaks.
	_, _, _, hasDiv := divisionPeak()
	var sp int
	for _, k := range r.Kernels {
		if k.Name != specialName {
			continue
		}
		sp++
		if hasPeak && hasDiv && (k.Bound == "" || !(k.BoundTime > 0) || math.Abs(k.BoundRate*k.BoundTime.Seconds()/float64(tinySizes().specialN)-1) > 1e-12) {
			t.Errorf("special functions %s: bound %q, time %v, rate %v", k.Size, k.Bound, k.BoundTime, k.BoundRate)
		}
	}
	if sp != 2 {
		t.Errorf("%d special-function rows, want 2", sp)
	}
	if len(r.Scaling) != 4 {
		t.Fatalf("%d scaling series, want 4 (N, d, S, K)", len(r.Scaling))
	}
	for _, s := range r.Scaling {
		if len(s.X) != len(s.Seconds) || len(s.X) < 2 || math.IsNaN(s.Slope) {
			t.Errorf("series %q: %d sizes, %d times, slope %v", s.Name, len(s.X), len(s.Seconds), s.Slope)
		}
	}
	var md bytes.Buffer
	if err := r.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if rows := strings.Count(md.String(), "\n| "); rows != 1+len(r.Kernels)+1+len(r.Scaling) {
		t.Errorf("markdown has %d table rows, want %d:\n%s", rows, 2+len(r.Kernels)+len(r.Scaling), md.String())
	}
	if c := r.Chart(); len(c.Series) != 4 || !c.LogX || !c.LogY {
		t.Errorf("chart: %d series, log axes %v %v", len(c.Series), c.LogX, c.LogY)
	}
}

func TestLogLogSlope(t *testing.T) {
	x := []float64{1, 2, 4, 8}
	y := make([]float64, 4)
	for i, v := range x {
		y[i] = 3 * math.Pow(v, 1.5)
	}
	if s := logLogSlope(x, y); math.Abs(s-1.5) > 1e-12 {
		t.Errorf("slope %v, want 1.5", s)
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{12345.6, "12,300"}, {987.65, "988"}, {1.2345, "1.23"}, {1234567, "1,230,000"}, {0.5, "0.5"}} {
		if got := fmtRate(c.v); got != c.want {
			t.Errorf("fmtRate(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{1500 * time.Millisecond, "1.50 s"}, {2346 * time.Microsecond, "2.35 ms"}, {1234 * time.Nanosecond, "1.23 µs"}, {7 * time.Nanosecond, "7 ns"}} {
		if got := fmtDur(c.d); got != c.want {
			t.Errorf("fmtDur(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// BenchmarkReadU times the memory-bandwidth bound of the (15000, 300)
// Gibbs sweep: one pass of floats.Sum over the 36 MB design matrix.
func BenchmarkReadU(b *testing.B) {
	u := probitData(1, 15000, 300).U.RawMatrix().Data
	b.SetBytes(int64(8 * len(u)))
	b.ReportAllocs()
	var s float64
	for b.Loop() {
		s += floats.Sum(u)
	}
	_ = s
}

// BenchmarkNormFloat64 times plain normal draws, the bound of the
// truncated-normal draws.
func BenchmarkNormFloat64(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	var s float64
	for b.Loop() {
		s += rng.NormFloat64()
	}
	_ = s
}

// BenchmarkDgemmGradientShapes times the two matrix products of the
// batched probit gradient at N = 15000, d = 300, S = 1000 as single
// blas64.Gemm calls (compare with model's BenchmarkGradLogJoint; run with
// -cpu 1 for the one-core rate).
func BenchmarkDgemmGradientShapes(b *testing.B) {
	const n, d, s = 15000, 300, 1000
	u := probitData(1, n, d).U.RawMatrix()
	th := blas64.General{Rows: s, Cols: d, Stride: d, Data: make([]float64, s*d)}
	for i := range th.Data {
		th.Data[i] = 0.01 * float64(i%7)
	}
	m := blas64.General{Rows: s, Cols: n, Stride: n, Data: make([]float64, s*n)}
	g := blas64.General{Rows: s, Cols: d, Stride: d, Data: make([]float64, s*d)}
	b.ReportAllocs()
	for b.Loop() {
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, th, u, 0, m)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, m, u, 0, g)
	}
	b.ReportMetric(4*n*d*s*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
