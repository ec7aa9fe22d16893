package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats/scalar"
)

// Reference values computed with mpmath 1.3.0 at 60 significant digits:
// log(ncdf(x)) and npdf(x)/ncdf(x), rounded to 22 digits. At x = 40,
// Φ(40) = 1 − 3.66e−350 and φ(40) = 5.4e−349 are below the smallest double,
// so log Φ(40) and λ(40) are 0 in floating point.
var normalRefs = []struct {
	x, logPhi, invMills float64
}{
	{-1e5, -5000000012.431863998275, 100000.000009999999998},
	{-1000, -500007.8266948121843098, 1000.00099999800001},
	{-40, -804.6084420137537881666, 40.02496884720726372324},
	{-38, -726.5572160188201300965, 38.02627946657586898752},
	{-10, -53.23128515051247057835, 10.09809323396251196284},
	{-8, -35.01343715991454989550, 8.121368112236112680654},
	{-5, -15.06499839398872573608, 5.186503967125842115617},
	{-1, -1.841021645009263505771, 1.525135276160981209089},
	{0, -0.6931471805599453094172, 0.7978845608028653558799},
	{1, -0.1727537790234498895265, 0.2875999709391783612287},
	{2.5, -0.006229025485860002380986, 0.01763782548691673478796},
	{5, -2.866516129637635933846e-7, 1.486719940904905712442e-6},
	{10, -7.619853024160526070429e-24, 7.694598626706419346339e-23},
	{40, 0, 0},
}

func TestLogPhiInvMillsReference(t *testing.T) {
	const tol = 1e-13 // relative; double rounding plus erfc's own error.
	for _, r := range normalRefs {
		if got := LogPhi(r.x); !scalar.EqualWithinAbsOrRel(got, r.logPhi, 0, tol) {
			t.Errorf("LogPhi(%v) = %.17g, want %.17g", r.x, got, r.logPhi)
		}
		if got := InvMills(r.x); !scalar.EqualWithinAbsOrRel(got, r.invMills, 0, tol) {
			t.Errorf("InvMills(%v) = %.17g, want %.17g", r.x, got, r.invMills)
		}
	}
	if !math.IsInf(LogPhi(math.Inf(-1)), -1) || LogPhi(math.Inf(1)) != 0 {
		t.Errorf("LogPhi(±Inf) = %v, %v", LogPhi(math.Inf(-1)), LogPhi(math.Inf(1)))
	}
	if !math.IsInf(InvMills(math.Inf(-1)), 1) || InvMills(math.Inf(1)) != 0 {
		t.Errorf("InvMills(±Inf) = %v, %v", InvMills(math.Inf(-1)), InvMills(math.Inf(1)))
	}
}

// TestTailBranchMatchesErfc checks that the continued fraction and the
// erfc form agree where both are accurate, down from well above the switch
// (t = 5) to t = 30, and that the functions are continuous at the switch.
func TestTailBranchMatchesErfc(t *testing.T) {
	for _, tt := range []float64{5, 6, 7, 8, 9, 12, 20, 30} {
		x := -tt
		erfcLog := math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
		erfcLam := invSqrt2Pi * math.Exp(-0.5*x*x) / (0.5 * math.Erfc(-x/math.Sqrt2))
		f, _ := millsTail(tt)
		cfLog := -0.5*x*x - logSqrt2Pi - math.Log(f)
		// The erfc form loses ~t²·ε relative in exp(−t²/2); allow for it.
		tol := 4e-16 * (1 + tt*tt)
		if !scalar.EqualWithinRel(cfLog, erfcLog, tol) {
			t.Errorf("t=%v: log Φ continued fraction %.17g, erfc %.17g", tt, cfLog, erfcLog)
		}
		if !scalar.EqualWithinRel(f, erfcLam, tol) {
			t.Errorf("t=%v: λ continued fraction %.17g, erfc %.17g", tt, f, erfcLam)
		}
	}
	lo, hi := tailSwitch, math.Nextafter(tailSwitch, 0) // continued fraction, polynomial
	if !scalar.EqualWithinRel(LogPhi(lo), LogPhi(hi), 1e-14) {
		t.Errorf("LogPhi jumps at the switch: %.17g vs %.17g", LogPhi(lo), LogPhi(hi))
	}
	if !scalar.EqualWithinRel(InvMills(lo), InvMills(hi), 1e-14) {
		t.Errorf("InvMills jumps at the switch: %.17g vs %.17g", InvMills(lo), InvMills(hi))
	}
}

// TestDerivatives checks d/dx log Φ = λ and −dλ/dx = λ(x+λ) = w against
// central finite differences (relative error O(h²) plus rounding).
func TestDerivatives(t *testing.T) {
	for _, x := range []float64{-40, -12, -8.5, -7.5, -3, -0.5, 0, 0.7, 3, 6} {
		h := 1e-4 * math.Max(1, math.Abs(x))
		dLog := fd.Derivative(LogPhi, x, &fd.Settings{Formula: fd.Central, Step: h})
		if lam := InvMills(x); !scalar.EqualWithinAbsOrRel(dLog, lam, 1e-12, 1e-6) {
			t.Errorf("x=%v: d log Φ/dx = %v, λ = %v", x, dLog, lam)
		}
		dLam := fd.Derivative(InvMills, x, &fd.Settings{Formula: fd.Central, Step: h})
		lam, w := invMillsCurv(x)
		if lam != InvMills(x) {
			t.Errorf("x=%v: invMillsCurv λ = %v, InvMills = %v", x, lam, InvMills(x))
		}
		if !(w > 0 && w < 1) || !scalar.EqualWithinAbsOrRel(-dLam, w, 1e-10, 1e-5) {
			t.Errorf("x=%v: −dλ/dx = %v, w = %v", x, -dLam, w)
		}
	}
}

// refNormal returns log Φ(x) and λ(x) computed independently of the
// package's polynomials: φ(x) from exp(−x_h²/2)·exp(−(x−x_h)(x+x_h)/2)
// with x_h = x rounded to float32 (x_h² exact), so ≲ 2ε relative; for
// |x| < 5, Φ and Q from erfc, whose relative error is ≲ (2 + x²)ε
// (erfc'(z)/erfc(z) ≈ −2z times the rounding of z = x/√2); for |x| ≥ 5,
// R(|x|) from Laplace's continued fraction at depth 500 (exact to
// rounding there).
func refNormal(x float64) (logPhi, lam float64) {
	xh := float64(float32(x))
	phi := invSqrt2Pi * math.Exp(-0.5*xh*xh) * math.Exp(-0.5*(x-xh)*(x+xh))
	t := math.Abs(x)
	var q float64 // Q(|x|)
	if t < 5 {
		q = 0.5 * math.Erfc(t/math.Sqrt2)
	} else {
		g := t
		for k := 500; k >= 1; k-- {
			g = t + float64(k)/g
		}
		q = phi / g
	}
	if x > 0 {
		return math.Log1p(-q), phi / (1 - q)
	}
	return math.Log(q), phi / q
}

// TestNormalFuncsAccuracy compares LogPhi, InvMills and LogPhiMills with
// refNormal on a grid of step 1e−4 over [−8, 8] (every polynomial piece on
// both sides). The tolerance adds the error bounds: refNormal ≲ (4 + x²)ε
// for |x| < 5 and ≲ 4ε beyond, the polynomial fits ≲ 4e−15 ≈ 18ε.
func TestNormalFuncsAccuracy(t *testing.T) {
	for i := -80000; i <= 80000; i++ {
		x := float64(i) * 1e-4
		lp, lam := refNormal(x)
		tol := 22 * 0x1p-52
		if math.Abs(x) < 5 {
			tol += x * x * 0x1p-52
		}
		gl, gm := LogPhiMills(x)
		if !scalar.EqualWithinRel(LogPhi(x), lp, tol) || gl != LogPhi(x) {
			t.Fatalf("x=%v: LogPhi %.17g, LogPhiMills %.17g, reference %.17g", x, LogPhi(x), gl, lp)
		}
		if !scalar.EqualWithinRel(InvMills(x), lam, tol) || gm != InvMills(x) {
			t.Fatalf("x=%v: InvMills %.17g, LogPhiMills %.17g, reference %.17g", x, InvMills(x), gm, lam)
		}
	}
}

// TestNormCDF compares normCDF with ½erfc(−x/√2) on a grid of step 1e−3
// over [−8, 8] (relative error of the reference ≲ (2 + x²)ε, from erfc and
// the rounding of its argument, plus ≲ 18ε for the polynomials), and with
// mpmath values in the tails (Φ(−10) = Q(10) from normalRefs' log Φ(10),
// Φ(−40) ≈ 3.7e−350 underflows to 0).
func TestNormCDF(t *testing.T) {
	for i := -8000; i <= 8000; i++ {
		x := float64(i) * 1e-3
		want := 0.5 * math.Erfc(-x/math.Sqrt2)
		if tol := (20 + x*x) * 0x1p-52; !scalar.EqualWithinRel(normCDF(x), want, tol) {
			t.Fatalf("Φ(%v) = %.17g, want %.17g", x, normCDF(x), want)
		}
	}
	for _, c := range []struct{ x, want float64 }{
		{-10, 7.619853024160526070429e-24}, {10, 1}, {40, 1}, {-40, 0}, {math.Inf(-1), 0}, {math.Inf(1), 1},
	} {
		if got := normCDF(c.x); !scalar.EqualWithinAbsOrRel(got, c.want, 0, 1e-14) {
			t.Errorf("Φ(%v) = %.17g, want %.17g", c.x, got, c.want)
		}
	}
	if !math.IsNaN(normCDF(math.NaN())) {
		t.Error("Φ(NaN) is not NaN")
	}
}

// BenchmarkNormalFuncs times the per-margin special functions on margins
// drawn like a fitted probit model's s·θᵀu (|N(0, 2.1²)|, 80% on the
// predicted side); ns/op is per margin.
func BenchmarkNormalFuncs(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 4096)
	for i := range x {
		x[i] = 2.1 * rng.NormFloat64()
		if rng.Float64() < 0.8 {
			x[i] = math.Abs(x[i])
		}
	}
	for _, c := range []struct {
		name string
		f    func(float64) float64
	}{
		{"InvMills", InvMills},
		{"LogPhi", LogPhi},
		{"LogPhiMills", func(v float64) float64 { a, b := LogPhiMills(v); return a + b }},
		{"normCDF", normCDF},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var s float64
			for i := 0; i < b.N; i++ {
				s += c.f(x[i&4095])
			}
			sink = s
		})
	}
}

var sink float64

// TestMillsTailDepth checks that the shortened continued fraction of
// millsTail agrees with a deep (2000-level) evaluation to an ulp over the
// tail, t ∈ [8, 10⁴].
func TestMillsTailDepth(t *testing.T) {
	for tt := 8.0; tt < 1e4; tt *= 1.01 {
		g := tt
		for k := 2000; k >= 2; k-- {
			g = tt + float64(k)/g
		}
		want := tt + 1/g
		if f, _ := millsTail(tt); !scalar.EqualWithinRel(f, want, 0x1p-52) {
			t.Fatalf("t=%v: 1/R = %.17g, deep evaluation %.17g", tt, f, want)
		}
	}
}

// TestRowFunctions checks that the row forms used by Probit give exactly
// the scalar functions' values, over margins in every branch (both tails,
// both polynomial ranges, 6 ≤ x < 8, ±0, NaN) and both signs s.
func TestRowFunctions(t *testing.T) {
	var ms []float64
	for x := -50.0; x <= 50; x += 0.0137 {
		ms = append(ms, x)
	}
	ms = append(ms, 0, math.Copysign(0, -1), 8, -8, 6, -6, math.NaN(), 1e5, -1e5)
	sg := make([]float64, len(ms))
	for i := range sg {
		sg[i] = float64(1 - 2*(i%2))
	}
	const scale = 0.75
	same := func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }
	lam := append([]float64(nil), ms...)
	invMillsRow(lam, sg, scale)
	fused := append([]float64(nil), ms...)
	sumFused := logPhiMillsRow(fused, sg, scale)
	sumLog := logPhiRow(ms, sg)
	var want float64
	for i, m := range ms {
		x := sg[i] * m
		if w := scale * sg[i] * InvMills(x); !same(lam[i], w) || !same(fused[i], w) {
			t.Fatalf("x=%v: rows give %v, %v; InvMills %v", x, lam[i], fused[i], w)
		}
		want += LogPhi(x)
	}
	if !same(sumLog, want) || !same(sumFused, want) {
		t.Errorf("Σ log Φ: rows %v, %v; LogPhi %v", sumLog, sumFused, want)
	}
	// Without the NaN, to compare the sums as numbers.
	n := len(ms) - 3
	want = 0
	for i, m := range ms[:n] {
		want += LogPhi(sg[i] * m)
	}
	if got := logPhiRow(ms[:n], sg); got != want {
		t.Errorf("Σ log Φ = %v, want %v", got, want)
	}
}
