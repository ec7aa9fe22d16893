package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// rowMargins returns n margins and signs mixing every branch of the row
// functions: both polynomial ranges, their edges (0, ±0, 6, −8 and the
// neighbouring floats), the tails, infinities and NaN.
func rowMargins(rng *rand.Rand, n int) (ms, sg []float64) {
	edges := []float64{0, math.Copysign(0, -1), rightPolyMax, tailSwitch, math.Inf(1), math.Inf(-1), math.NaN(),
		math.Nextafter(rightPolyMax, 0), math.Nextafter(rightPolyMax, 10), math.Nextafter(tailSwitch, 0),
		math.Nextafter(tailSwitch, -10), 5e-324, -5e-324, 0.125, -0.25, 38.7, -40, tailMax, -tailMax,
		math.Nextafter(tailMax, 0), -1e200, -math.MaxFloat64, math.MaxFloat64, 7.99, 6.01}
	ms, sg = make([]float64, n), make([]float64, n)
	for i := range ms {
		switch r := rng.Float64(); {
		case r < 0.1:
			ms[i] = edges[rng.IntN(len(edges))]
		case r < 0.2:
			ms[i] = 30 * rng.NormFloat64()
		default:
			ms[i] = 3 * rng.NormFloat64()
		}
		sg[i] = 1
		if rng.IntN(2) == 0 {
			sg[i] = -1
		}
	}
	return ms, sg
}

// sameBits reports whether a and b are the same float64, bit for bit (NaNs
// of any payload count as equal).
func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

// rowKernels returns the implementations of the row functions this machine
// runs, fastest first: "avx512" and "avx2" (the vector kernels, where the
// CPU has them) and "generic" (the loops of normal_rows.go).
func rowKernels() []string {
	var ks []string
	if hasRows512 {
		ks = append(ks, "avx512")
	}
	if hasPolyRows {
		ks = append(ks, "avx2")
	}
	return append(ks, "generic")
}

// vectorKernels returns rowKernels without the generic loops.
func vectorKernels() []string {
	ks := rowKernels()
	return ks[:len(ks)-1]
}

// useRowKernel makes the row functions run the implementation name (one of
// rowKernels) until the function it returns restores the previous one.
func useRowKernel(name string) (restore func()) {
	u, w := usePolyRows, useRows512
	usePolyRows, useRows512 = name != "generic", name == "avx512"
	return func() { usePolyRows, useRows512 = u, w }
}

// forVectorKernels runs f as a subtest with each vector kernel in use, and
// skips t where there is none.
func forVectorKernels(t *testing.T, f func(t *testing.T)) {
	ks := vectorKernels()
	if len(ks) == 0 {
		t.Skip("no vector kernel on this CPU or build: the row functions are the generic loops")
	}
	for _, k := range ks {
		t.Run(k, func(t *testing.T) {
			defer useRowKernel(k)()
			f(t)
		})
	}
}

// TestRowFunctionsVectorGeneric checks that the row functions, with each
// vector kernel the CPU has, give bit for bit the values and sums of the
// generic loops, at every length around the kernels' groups (4 and 8) and
// chunk (polyChunk) sizes.
func TestRowFunctionsVectorGeneric(t *testing.T) {
	forVectorKernels(t, testRowFunctionsVectorGeneric)
}

func testRowFunctionsVectorGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 9, 13, 15, 16, 17, 255, 256, 257, 260, 263, 264, 513, 2000} {
		for rep := range 5 {
			ms, sg := rowMargins(rng, n)
			scale := []float64{1, 0.37, -2.5, 1e-3, 3}[rep]

			got, want := append([]float64(nil), ms...), append([]float64(nil), ms...)
			invMillsRow(got, sg, scale)
			invMillsRowGeneric(want, sg, scale)
			for j := range got {
				if !sameBits(got[j], want[j]) {
					t.Fatalf("invMillsRow n=%d j=%d margin %v sign %v: %v, generic %v", n, j, ms[j], sg[j], got[j], want[j])
				}
			}

			row := append([]float64(nil), ms...)
			if s, w := logPhiRow(row, sg), logPhiRowAcc(0, ms, sg); !sameBits(s, w) {
				t.Fatalf("logPhiRow n=%d: %v, generic %v", n, s, w)
			}
			for j := range row {
				if !sameBits(row[j], ms[j]) {
					t.Fatalf("logPhiRow changed margin %d", j)
				}
			}

			got, want = append([]float64(nil), ms...), append([]float64(nil), ms...)
			s, w := logPhiMillsRow(got, sg, scale), logPhiMillsRowAcc(0, want, sg, scale)
			if !sameBits(s, w) {
				t.Fatalf("logPhiMillsRow n=%d: sum %v, generic %v", n, s, w)
			}
			for j := range got {
				if !sameBits(got[j], want[j]) {
					t.Fatalf("logPhiMillsRow n=%d j=%d margin %v: %v, generic %v", n, j, ms[j], got[j], want[j])
				}
			}
		}
	}
}

// TestRowFunctionsTail walks the tails, where the kernels evaluate the
// continued fraction (8 ≤ x < tailMax, and x ≤ −8 in the AVX-512 kernel),
// the band 6 ≤ x < 8 and their edges finely, against the generic loops.
func TestRowFunctionsTail(t *testing.T) {
	forVectorKernels(t, testRowFunctionsTail)
}

func testRowFunctionsTail(t *testing.T) {
	var ms []float64
	for x := 5.9; x < 41; x += 1.3e-3 {
		ms = append(ms, x, -x)
	}
	for x := 40.0; x < 1e300; x *= 1.37 {
		ms = append(ms, -x)
	}
	ms = append(ms, -tailSwitch, math.Nextafter(-tailSwitch, 0), tailSwitch, math.Nextafter(tailSwitch, -10),
		tailMax, math.Nextafter(tailMax, 0), rightPolyMax, math.Nextafter(rightPolyMax, 0), 40, math.Nextafter(40, 41),
		math.Inf(1), math.Inf(-1), math.MaxFloat64, 0, 0, 0)
	ms = ms[:len(ms)&^7]
	sg := make([]float64, len(ms))
	for i := range sg {
		sg[i] = 1
	}
	got, want := append([]float64(nil), ms...), append([]float64(nil), ms...)
	s, w := logPhiMillsRow(got, sg, 0.7), logPhiMillsRowAcc(0, want, sg, 0.7)
	for j := range got {
		if !sameBits(got[j], want[j]) {
			t.Fatalf("x = %v: scaled λ %v, generic %v", ms[j], got[j], want[j])
		}
	}
	if !sameBits(s, w) || !sameBits(logPhiRow(ms, sg), logPhiRowAcc(0, ms, sg)) {
		t.Fatalf("sums: %v, generic %v", s, w)
	}
	got = append(got[:0], ms...)
	invMillsRow(got, sg, 1.5)
	want = append(want[:0], ms...)
	invMillsRowGeneric(want, sg, 1.5)
	for j := range got {
		if !sameBits(got[j], want[j]) {
			t.Fatalf("x = %v: λ %v, generic %v", ms[j], got[j], want[j])
		}
	}
	// Per margin, the terms of the sum, so that no difference hides in it:
	// a group of either kernel whose other margins add log Φ(50) = −0.
	one := []float64{1, 1, 1, 1, 1, 1, 1, 1}
	for _, x := range ms {
		row := []float64{x, 50, 50, 50, 50, 50, 50, 50}
		if g, w := logPhiRow(row, one), logPhiRowAcc(0, row, one); !sameBits(g, w) {
			t.Fatalf("x = %v: log Φ = %v, generic %v", x, g, w)
		}
		w := logPhiMillsRowAcc(0, append([]float64(nil), row...), one, 1)
		if g := logPhiMillsRow(row, one, 1); !sameBits(g, w) {
			t.Fatalf("x = %v: log Φ (with λ) = %v, generic %v", x, g, w)
		}
	}
}

// TestRowFunctionsFiniteSum checks the vector sums on margins without NaN
// or infinities, where a wrong lane could not hide behind a NaN total.
func TestRowFunctionsFiniteSum(t *testing.T) {
	forVectorKernels(t, testRowFunctionsFiniteSum)
}

func testRowFunctionsFiniteSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	ms, sg := make([]float64, 1001), make([]float64, 1001)
	for i := range ms {
		ms[i], sg[i] = 4*rng.NormFloat64(), float64(1-2*rng.IntN(2))
	}
	if s, w := logPhiRow(ms, sg), logPhiRowAcc(0, ms, sg); !sameBits(s, w) || math.IsNaN(s) {
		t.Fatalf("logPhiRow: %v, generic %v", s, w)
	}
	got, want := append([]float64(nil), ms...), append([]float64(nil), ms...)
	if s, w := logPhiMillsRow(got, sg, 0.5), logPhiMillsRowAcc(0, want, sg, 0.5); !sameBits(s, w) || math.IsNaN(s) {
		t.Fatalf("logPhiMillsRow: %v, generic %v", s, w)
	}
}

// BenchmarkRowFunctions times the row functions per margin (ns/op is per
// margin) with each implementation the machine runs (rowKernels) on
// margins drawn like a fitted probit model's (as BenchmarkNormalFuncs),
// like a confident model's (-tail) and like a poorly fitting map's
// (-wide).
func BenchmarkRowFunctions(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 4096
	ms, sg := make([]float64, n), make([]float64, n)
	for i := range ms {
		ms[i], sg[i] = 2.1*rng.NormFloat64(), 1
		if rng.Float64() < 0.8 {
			ms[i] = math.Abs(ms[i])
		}
	}
	// Margins of a confident model (MNIST's): mostly in the right tail.
	tail := make([]float64, n)
	for i := range tail {
		tail[i] = 8 + 20*rng.Float64()
	}
	// Margins of a poorly fitting map at high dimension: wide on both
	// sides, a third beyond the polynomial ranges.
	wide := make([]float64, n)
	for i := range wide {
		wide[i] = 12 * rng.NormFloat64()
	}
	row := make([]float64, n)
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"invMills", func() { copy(row, ms); invMillsRow(row, sg, 1) }},
		{"logPhi", func() { sink = logPhiRow(ms, sg) }},
		{"logPhiMills", func() { copy(row, ms); sink = logPhiMillsRow(row, sg, 1) }},
		{"invMills-tail", func() { copy(row, tail); invMillsRow(row, sg, 1) }},
		{"logPhiMills-tail", func() { copy(row, tail); sink = logPhiMillsRow(row, sg, 1) }},
		{"invMills-wide", func() { copy(row, wide); invMillsRow(row, sg, 1) }},
		{"logPhiMills-wide", func() { copy(row, wide); sink = logPhiMillsRow(row, sg, 1) }},
	} {
		for _, k := range rowKernels() {
			b.Run(c.name+"/"+k, func(b *testing.B) {
				defer useRowKernel(k)()
				for b.Loop() {
					c.f()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/margin")
			})
		}
	}
}

// TestCDFRowVectorGeneric checks that cdfRowAdd, with each vector kernel
// the CPU has, adds bit for bit what out[j] += normCDF(m[j]) adds, over
// margins in every branch and lengths around the group and chunk sizes,
// onto nonzero sums.
func TestCDFRowVectorGeneric(t *testing.T) {
	forVectorKernels(t, testCDFRowVectorGeneric)
}

func testCDFRowVectorGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 9, 13, 16, 255, 256, 257, 1000} {
		for range 4 {
			ms, _ := rowMargins(rng, n)
			got, want := make([]float64, n), make([]float64, n)
			for j := range got {
				got[j] = 10 * rng.Float64()
				want[j] = got[j]
			}
			cdfRowAdd(got, ms)
			for j, mv := range ms {
				want[j] += normCDF(mv)
			}
			for j := range got {
				if !sameBits(got[j], want[j]) {
					t.Fatalf("n=%d j=%d margin %v: %v, generic %v", n, j, ms[j], got[j], want[j])
				}
			}
		}
	}
	// Every margin of the polynomial ranges and the tails, finely: the
	// exponential's reduction and scaling at every exponent.
	ms := make([]float64, 0, 330001)
	for x := -41.0; x <= 41; x += 2.5e-4 {
		ms = append(ms, x)
	}
	got, want := make([]float64, len(ms)), make([]float64, len(ms))
	cdfRowAdd(got, ms)
	for j, mv := range ms {
		want[j] += normCDF(mv)
		if !sameBits(got[j], want[j]) {
			t.Fatalf("margin %v: %v, generic %v", mv, got[j], want[j])
		}
	}
}

// BenchmarkCDFRow times cdfRowAdd per margin with each implementation on
// margins like a predictive distribution's θᵀu (N(0, 2.1²)) and like a
// confident model's (-wide: N(0, 12²)).
func BenchmarkCDFRow(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 4096
	ms, wide, out := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range ms {
		ms[i], wide[i] = 2.1*rng.NormFloat64(), 12*rng.NormFloat64()
	}
	for _, c := range []struct {
		name string
		m    []float64
	}{{"normal", ms}, {"wide-tail", wide}} {
		for _, k := range rowKernels() {
			b.Run(c.name+"/"+k, func(b *testing.B) {
				defer useRowKernel(k)()
				for b.Loop() {
					cdfRowAdd(out, c.m)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/margin")
			})
		}
	}
}

// TestUnderflowShortcut checks that the far tails, where φ(x) underflows
// and the functions skip the continued fraction, give exactly what the
// continued-fraction formulas give there.
func TestUnderflowShortcut(t *testing.T) {
	for x := 8.0; x < 1e6; x *= 1.0001 {
		f, _ := millsTail(x)
		phi := npdf(x)
		lp, lam := LogPhiMills(x)
		if !sameBits(lp, -phi/f) || !sameBits(lam, phi) || !sameBits(LogPhi(x), -phi/f) {
			t.Fatalf("x = %v: log Φ %v, λ %v; formula %v, %v", x, lp, lam, -phi/f, phi)
		}
		if !sameBits(normCDF(x), 1-phi/f) || !sameBits(normCDF(-x), phi/f) {
			t.Fatalf("x = %v: Φ(±x) = %v, %v; formula %v, %v", x, normCDF(x), normCDF(-x), 1-phi/f, phi/f)
		}
	}
}

// TestBandLog1pBranch checks what the AVX-512 kernel relies on in the band
// 6 ≤ x < 8: there q = φ(x)/M(x) = Q(x), as the scalar functions compute
// it, lies in [2⁻⁵⁴, 2⁻²⁹), where math.Log1p(−q) returns
// (−q) − (−q)(−q)·½, which the kernel computes.
func TestBandLog1pBranch(t *testing.T) {
	for x := rightPolyMax; x < -tailSwitch; x += 1e-5 {
		q := npdf(x) / polyLeft(&invMillsPoly, x)
		if !(q >= 0x1p-54 && q < 0x1p-29) {
			t.Fatalf("x = %v: q = %v outside [2⁻⁵⁴, 2⁻²⁹)", x, q)
		}
		if lp, series := math.Log1p(-q), -q-(-q)*(-q)*0.5; lp != series {
			t.Fatalf("x = %v: log1p(−q) = %v, series %v", x, lp, series)
		}
	}
	x := math.Nextafter(-tailSwitch, 0)
	if q := npdf(x) / polyLeft(&invMillsPoly, x); !(q >= 0x1p-54) {
		t.Fatalf("x = %v: q = %v below 2⁻⁵⁴", x, q)
	}
}
