package model

import (
	"math"
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
	lo, hi := math.Nextafter(tailSwitch, math.Inf(-1)), tailSwitch
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
