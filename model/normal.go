package model

import "math"

// Standard normal numerics for the probit terms (docs/MATH.md note 10).
//
// Write Q(t) = 1 − Φ(t) = Φ(−t) and R(t) = Q(t)/φ(t) (Mills' ratio, a
// smooth, slowly varying function: R(0) = √(π/2), R(t) ≈ 1/t for large t).
// With t = −x on the left,
//
//	x ≤ 0:  log Φ(x) = −t²/2 − ½ log(2π) + G(t),   λ(x) = φ(x)/Φ(x) = M(t),
//	x > 0:  log Φ(x) = log1p(−Q(x)),  λ(x) = φ(x)/(1 − Q(x)),  Q = φ(x)/M(x),
//
// where M = 1/R and G = log R are smooth and slowly varying. No term
// cancels and none over- or underflows before the true value does, so both
// functions are accurate in relative terms for every x (e.g.
// log Φ(−40) = −804.6084…, λ(−40) = 40.0250…, λ(40) = 0).
//
// The work per margin is a polynomial or two and no exponential where the
// margins of a fitted model mostly are: M and G are evaluated on [0, 8) by
// piecewise polynomials, and on the right, for 0 < x < 6, λ(x) and
// −log Φ(x) themselves (smooth, and within a piece of width 1/8 far from
// zero); only 6 ≤ x < 8 goes through φ(x) and M(x), and beyond 8,
// Φ(x) = 1 to rounding, λ(x) = φ(x) and log Φ(x) = −φ(x)R(x). Each piece
// is the degree-10 Chebyshev interpolant of its function, evaluated by
// Estrin's scheme (fused multiply-adds) in the local variable u ∈ [−1, 1]:
// 32 pieces of width 1/4 for M and G (and P = 1/Φ on (0, 8), for normCDF),
// 48 of width 1/8 for the right side. The coefficients are computed once at
// start-up (≈ 0.3 ms) from reference values good to a few ulps (refMills);
// the interpolants agree with independent references to ≲ 4e−15 relative
// (checked in the tests). The erfc form costs an erfc (up to two
// exponentials and a rational function), an exponential, a division and a
// logarithm instead.
//
// For t ≥ 8 R comes from Laplace's continued fraction for Mills' ratio,
//
//	R(t) = 1/(t + 1/(t + 2/(t + 3/(t + ...)))),   t > 0,
//
// obtained by integrating Q(t) = ∫_t^∞ φ(s) ds by parts repeatedly
// (Q(t) = φ(t)/t − ∫_t^∞ φ(s)/s² ds, ...) and converting the resulting
// alternating series to its continued fraction. All partial numerators are
// positive, so successive convergents bracket R(t) and the truncation error
// is below the distance between two convergents; that distance shrinks as t
// grows. Evaluated backwards with 20 levels it agrees with the erfc form
// to ≲ 2e-15 relative at t = 5 and better for larger t (checked in the
// tests), so at t ≥ 8 it is exact to rounding with fewer (millsTail).
//
// φ(x) = exp(−x²/2)/√(2π) is computed as exp(−p/2)(1 − e/2) with
// p + e = x² exactly (e by a fused multiply-add), so that the rounding of
// x² — which would cost x²ε/2 relative, 8e−14 at x = 38 — does not enter.

const (
	// tailSwitch is the argument at and below which the continued fraction
	// is used (and −tailSwitch the end of the polynomial range).
	tailSwitch = -8.0
	// tailTerms is the depth of the backward continued-fraction evaluation.
	tailTerms = 20
	// rightPolyMax is the end of the direct fits of λ and −log Φ for x > 0.
	rightPolyMax = 6.0

	logSqrt2Pi = 0.91893853320467274178032973640562 // ½ log(2π)
	invSqrt2Pi = 0.39894228040143267793994605993438 // 1/√(2π)
)

// Piecewise polynomial tables: piece k of a table with scale c covers
// [k/c, (k+1)/c).
const (
	polyDegree = 10 // estrin is written out for this degree
	leftScale  = 4  // pieces per unit for M, G and P on [0, 8)
	rightScale = 8  // pieces per unit for λ and −log Φ on [0, 6)
)

type polyPiece = [polyDegree + 1]float64

var (
	invMillsPoly [-tailSwitch * leftScale]polyPiece   // M(t) = 1/R(t) = λ(−t)
	logMillsPoly [-tailSwitch * leftScale]polyPiece   // G(t) = log R(t)
	invPhiPoly   [-tailSwitch * leftScale]polyPiece   // P(x) = 1/Φ(x)
	lamPoly      [rightPolyMax * rightScale]polyPiece // λ(x), x > 0
	negLogPoly   [rightPolyMax * rightScale]polyPiece // −log Φ(x), x > 0
)

func init() {
	for k := range invMillsPoly {
		a, b := float64(k)/leftScale, float64(k+1)/leftScale
		var m, g, p polyPiece
		for i, t := range chebNodes(a, b) {
			r := refMills(t)
			m[i], g[i] = 1/r, math.Log(r)
			p[i] = 1 / (1 - npdf(t)*r)
		}
		invMillsPoly[k] = chebMonomial(&m)
		logMillsPoly[k] = chebMonomial(&g)
		invPhiPoly[k] = chebMonomial(&p)
	}
	for k := range lamPoly {
		a, b := float64(k)/rightScale, float64(k+1)/rightScale
		var l, h polyPiece
		for i, x := range chebNodes(a, b) {
			phi := npdf(x)
			q := phi * refMills(x) // Q(x)
			l[i], h[i] = phi/(1-q), -math.Log1p(-q)
		}
		lamPoly[k] = chebMonomial(&l)
		negLogPoly[k] = chebMonomial(&h)
	}
}

// refMills returns R(t), t ≥ 0, to a few ulps for the polynomial fits:
// ½erfc(t/√2)/φ(t) for t < 3/2 (relative error ≲ (2 + 3t²/2)ε ≤ 6ε), and
// Laplace's continued fraction evaluated backwards from depth
// 40 + 800/t² beyond, at which it has converged to rounding (the depth
// needed falls like 1/t²: about 200 at t = 3/2, 20 at t = 8).
func refMills(t float64) float64 {
	if t < 1.5 {
		return 0.5 * math.Erfc(t/math.Sqrt2) / (invSqrt2Pi * math.Exp(-0.5*t*t))
	}
	g := t
	for k := 40 + int(800/(t*t)); k >= 1; k-- {
		g = t + float64(k)/g
	}
	return 1 / g
}

// chebNodes returns the Chebyshev points t_k = (a+b)/2 + (b−a)/2·cos(π(k+½)/n),
// n = polyDegree+1, of [a, b].
func chebNodes(a, b float64) (t [polyDegree + 1]float64) {
	for k := range t {
		u := math.Cos(math.Pi * (float64(k) + 0.5) / float64(len(t)))
		t[k] = 0.5*(a+b) + 0.5*(b-a)*u
	}
	return t
}

// chebMonomial returns the monomial coefficients, in u = (2t − a − b)/(b − a),
// of the polynomial of degree polyDegree taking the values fv at the
// Chebyshev points of [a, b] (chebNodes).
func chebMonomial(fv *[polyDegree + 1]float64) [polyDegree + 1]float64 {
	const n = polyDegree + 1
	var c, mono [n]float64
	for j := range c {
		var s float64
		for k := range fv {
			s += fv[k] * math.Cos(math.Pi*float64(j)*(float64(k)+0.5)/n)
		}
		c[j] = 2 * s / n
	}
	c[0] /= 2
	// Σ c_j T_j(u) in powers of u, with T_{j+1} = 2u T_j − T_{j−1}.
	var tPrev, tCur [n]float64
	tPrev[0], tCur[1] = 1, 1
	mono[0], mono[1] = c[0], c[1]
	for j := 2; j < n; j++ {
		var tNext [n]float64
		for k := range tNext {
			if k > 0 {
				tNext[k] = 2 * tCur[k-1]
			}
			tNext[k] -= tPrev[k]
		}
		for k := range mono {
			mono[k] += c[j] * tNext[k]
		}
		tPrev, tCur = tCur, tNext
	}
	return mono
}

// polyLeft and polyRight evaluate a piecewise polynomial of the left
// (scale 4, [0, 8)) and right (scale 8, [0, 6)) kind at t in its range.
func polyLeft(p *[-tailSwitch * leftScale]polyPiece, t float64) float64 {
	k := int(t * leftScale)
	return estrin(&p[k], 2*leftScale*t-float64(2*k+1))
}

func polyRight(p *[rightPolyMax * rightScale]polyPiece, t float64) float64 {
	k := int(t * rightScale)
	return estrin(&p[k], 2*rightScale*t-float64(2*k+1))
}

// estrin evaluates the polynomial c at u by Estrin's scheme (pairs, then
// powers u², u⁴), whose dependency chain is a third of Horner's.
func estrin(c *polyPiece, u float64) float64 {
	u2 := u * u
	u4 := u2 * u2
	a0 := math.FMA(c[1], u, c[0])
	a1 := math.FMA(c[3], u, c[2])
	a2 := math.FMA(c[5], u, c[4])
	a3 := math.FMA(c[7], u, c[6])
	a4 := math.FMA(c[9], u, c[8])
	b0 := math.FMA(a1, u2, a0)
	b1 := math.FMA(a3, u2, a2)
	b2 := math.FMA(c[10], u2, a4) // degree 8–10 part
	return math.FMA(math.FMA(b2, u4, b1), u4, b0)
}

// estrin2 evaluates two polynomials at the same u, sharing the powers;
// each result is exactly estrin's.
func estrin2(c, e *polyPiece, u float64) (float64, float64) {
	u2 := u * u
	u4 := u2 * u2
	a0 := math.FMA(c[1], u, c[0])
	a1 := math.FMA(c[3], u, c[2])
	a2 := math.FMA(c[5], u, c[4])
	a3 := math.FMA(c[7], u, c[6])
	a4 := math.FMA(c[9], u, c[8])
	b0 := math.FMA(a1, u2, a0)
	b1 := math.FMA(a3, u2, a2)
	b2 := math.FMA(c[10], u2, a4)
	p := math.FMA(math.FMA(b2, u4, b1), u4, b0)
	a0 = math.FMA(e[1], u, e[0])
	a1 = math.FMA(e[3], u, e[2])
	a2 = math.FMA(e[5], u, e[4])
	a3 = math.FMA(e[7], u, e[6])
	a4 = math.FMA(e[9], u, e[8])
	b0 = math.FMA(a1, u2, a0)
	b1 = math.FMA(a3, u2, a2)
	b2 = math.FMA(e[10], u2, a4)
	return p, math.FMA(math.FMA(b2, u4, b1), u4, b0)
}

// npdf returns φ(x) = exp(−x²/2)/√(2π) without the rounding error of x².
func npdf(x float64) float64 {
	p := x * x
	if p > 1600 {
		return 0 // exp(−x²/2) underflows from |x| ≈ 38.6
	}
	e := math.FMA(x, x, -p) // x² = p + e exactly
	return invSqrt2Pi * math.Exp(-0.5*p) * (1 - 0.5*e)
}

// millsTail returns f(t) = 1/R(t) = t + 1/g(t) and 1/g(t) = f(t) − t for
// t ≥ −tailSwitch, by backward evaluation of Laplace's continued fraction.
// The second value is returned separately so that f − t carries no
// cancellation. The depth min(tailTerms, ⌈8 + 500/t²⌉) is where the
// fraction has converged to a quarter ulp or better (measured: 14 levels
// are needed at t = 8, 9 at t = 15, 6 at t = 50), so far-tail margins
// cost a third of the full depth.
func millsTail(t float64) (f, rem float64) {
	n := tailTerms
	if t > 0 {
		n = min(tailTerms, 9+int(500/(t*t)))
	}
	g := t
	for k := n; k >= 2; k-- {
		g = t + float64(k)/g
	}
	rem = 1 / g
	return t + rem, rem
}

// LogPhi returns log Φ(x), the log of the standard normal CDF, accurate in
// relative terms for all x (see the notes above).
func LogPhi(x float64) float64 {
	switch {
	case x > 0:
		switch {
		case x < rightPolyMax:
			return -polyRight(&negLogPoly, x)
		case x < -tailSwitch:
			return math.Log1p(-npdf(x) / polyLeft(&invMillsPoly, x))
		}
		// Q < 7e−16: log1p(−Q) = −Q = −φ(x)R(x); −0 once φ(x)
		// underflows (|x| > 38.6), without the continued fraction.
		phi := npdf(x)
		if phi == 0 {
			return math.Copysign(0, -1)
		}
		f, _ := millsTail(x)
		return -phi / f
	case x > tailSwitch:
		return -0.5*x*x - logSqrt2Pi + polyLeft(&logMillsPoly, -x)
	case math.IsNaN(x):
		return math.NaN()
	case math.IsInf(x, -1):
		return math.Inf(-1)
	}
	f, _ := millsTail(-x)
	return -0.5*x*x - logSqrt2Pi - math.Log(f)
}

// InvMills returns the inverse Mills ratio λ(x) = φ(x)/Φ(x), finite for all
// finite x: λ(x) → 0 as x → +∞ and λ(x) ≈ −x − 1/x as x → −∞.
func InvMills(x float64) float64 {
	switch {
	case x > 0:
		switch {
		case x < rightPolyMax:
			return polyRight(&lamPoly, x)
		case x < -tailSwitch:
			phi := npdf(x)
			return phi / (1 - phi/polyLeft(&invMillsPoly, x))
		}
		// Φ(x) = 1 to rounding; φ(x) underflows to 0 for x > 38.6, which
		// is the correct limit.
		return npdf(x)
	case x > tailSwitch:
		return polyLeft(&invMillsPoly, -x)
	case math.IsNaN(x):
		return math.NaN()
	case math.IsInf(x, -1):
		return math.Inf(1)
	}
	f, _ := millsTail(-x)
	return f
}

// invMillsCurv returns λ(x) = φ(x)/Φ(x) and w(x) = λ(x)(x + λ(x)) =
// −d²/dx² log Φ(x) ∈ (0, 1). In the left tail x + λ(x) is taken from the
// continued fraction directly, avoiding the cancellation −t + (t + 1/g).
func invMillsCurv(x float64) (lam, w float64) {
	if x > tailSwitch {
		lam = InvMills(x)
		return lam, lam * (x + lam)
	}
	lam, rem := millsTail(-x)
	return lam, lam * rem
}

// LogPhiMills returns log Φ(x) and λ(x) = φ(x)/Φ(x) together: the
// per-margin work of a fused log-density and gradient pass. It agrees with
// LogPhi and InvMills.
func LogPhiMills(x float64) (logPhi, lam float64) {
	switch {
	case x > 0:
		switch {
		case x < rightPolyMax:
			return -polyRight(&negLogPoly, x), polyRight(&lamPoly, x)
		case x < -tailSwitch:
			phi := npdf(x)
			q := phi / polyLeft(&invMillsPoly, x)
			return math.Log1p(-q), phi / (1 - q)
		}
		phi := npdf(x)
		if phi == 0 {
			return math.Copysign(0, -1), 0 // −φR and φ once φ underflows
		}
		f, _ := millsTail(x)
		return -phi / f, phi
	case x > tailSwitch:
		t := -x
		return -0.5*x*x - logSqrt2Pi + polyLeft(&logMillsPoly, t), polyLeft(&invMillsPoly, t)
	case math.IsNaN(x):
		return math.NaN(), math.NaN()
	case math.IsInf(x, -1):
		return math.Inf(-1), math.Inf(1)
	}
	f, _ := millsTail(-x)
	return -0.5*x*x - logSqrt2Pi - math.Log(f), f
}

// normCDF returns Φ(x), accurate in relative terms for all x: 1/P(x) for
// 0 < x < 8 (no exponential), φ(x)/M(−x) for −8 < x ≤ 0, and φ(x)R(|x|)
// by the continued fraction beyond.
func normCDF(x float64) float64 {
	switch {
	case x > 0:
		if x < -tailSwitch {
			return 1 / polyLeft(&invPhiPoly, x)
		}
		phi := npdf(x)
		if phi == 0 {
			return 1 // 1 − φR once φ underflows (x > 38.6)
		}
		f, _ := millsTail(x)
		return 1 - phi/f
	case x > tailSwitch:
		return npdf(x) / polyLeft(&invMillsPoly, -x)
	case math.IsNaN(x):
		return x
	}
	phi := npdf(x)
	if phi == 0 {
		return 0 // φR once φ underflows (x < −38.6)
	}
	f, _ := millsTail(-x)
	return phi / f
}
