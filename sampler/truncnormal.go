package sampler

import (
	"math"
	"math/rand/v2"
)

// halfNormalMax is the lower bound up to which StdNormalAbove uses
// half-normal rejection; above it Robert's exponential proposal accepts
// more often. It solves 2Q(a) = Q(a) α√(2π) exp(αa − α²/2) with
// α = (a + √(a²+4))/2, i.e. equal acceptance rates (≈ 0.797).
const halfNormalMax = 0.256991963019268

// mixtureMin is the lower bound from which StdNormalAbove uses the
// uniform/half-normal mixture for a ≤ 0 (below it plain rejection, whose
// acceptance 1 − Φ(a) is then ≥ 0.69, is as cheap).
const mixtureMin = -0.5

const (
	sqrt2Pi    = 2.5066282746310005024157652848110 // √(2π)
	invSqrt2Pi = 0.3989422804014326779399460599344 // 1/√(2π)
)

// StdNormalAbove returns X ~ N(0, 1) conditioned on X > a, exactly, for any
// finite a. Four rejection samplers, each exact, are used by range of a:
//
//   - a ≤ −0.5: draw Z ~ N(0, 1) until Z > a; acceptance 1 − Φ(a) ≥ 0.69.
//   - −0.5 < a ≤ 0: the envelope φ(0) on (a, 0] plus φ on (0, ∞), of mass
//     A = |a|φ(0) + ½: with probability ½/A return |Z| (always accepted);
//     otherwise propose x uniform on (a, 0] and accept with probability
//     φ(x)/φ(0) = exp(−x²/2). Acceptance (1 − Φ(a))/A ≥ 0.98, and at a = 0
//     it is |Z|, where plain rejection would need two proposals.
//   - 0 < a < 0.257: draw |Z| until |Z| > a; acceptance 2(1 − Φ(a)) > 0.797.
//   - a ≥ 0.257: Robert (1995): propose Z = a + E/α, E ~ Exp(1), with the
//     optimal rate α = (a + √(a²+4))/2, accept with probability
//     exp(−(Z − α)²/2) (tested as E' ≥ (Z − α)²/2, E' ~ Exp(1)). Acceptance
//     (1 − Φ(a)) α√(2π) exp(αa − α²/2) rises from 0.797 to 1 as a → ∞
//     (0.876 at a = 1, 0.983 at a = 5), so far tails such as a = 40 cost
//     about one proposal and involve no Φ evaluations.
//
// Normal and exponential variates come from this package's ziggurat
// (zigNorm, zigExp), not rng.NormFloat64 and rng.ExpFloat64. A NaN a
// gives NaN. It does not allocate.
func StdNormalAbove(rng *rand.Rand, a float64) float64 {
	// The ziggurat fast paths (as in stdNormal) are written out in the
	// loops (the calls are not inlined and would double the cost).
	nt, et := &zigNorm, &zigExp
	switch {
	case a <= mixtureMin:
		for {
			u := rng.Uint64()
			j, i := int32(u), u>>32&(zigLayers-1)
			z := float64(j) * nt.w[i]
			if absInt32(j) >= nt.k[i] {
				z = normalSlow(rng, j, i)
			}
			if z > a {
				return z
			}
		}
	case a <= 0:
		w := -a * invSqrt2Pi // mass of the uniform part
		for {
			u := rng.Float64() * (0.5 + w)
			if u >= w {
				return math.Abs(stdNormal(rng))
			}
			x := -u * sqrt2Pi // uniform on (a, 0]
			if !(x > a) {
				continue // u·√(2π) rounded up to |a|
			}
			t := 0.5 * x * x
			// Squeeze: exp(−t) ≥ 1 − t.
			if v := rng.Float64(); v < 1-t || v < math.Exp(-t) {
				return x
			}
		}
	case a < halfNormalMax:
		for {
			u := rng.Uint64()
			j, i := int32(u), u>>32&(zigLayers-1)
			z := float64(absInt32(j)) * nt.w[i]
			if absInt32(j) >= nt.k[i] {
				z = math.Abs(normalSlow(rng, j, i))
			}
			if z > a {
				return z
			}
		}
	case math.IsNaN(a):
		return a
	}
	alpha := 0.5 * (a + math.Sqrt(a*a+4))
	for {
		u := rng.Uint64()
		j, i := uint32(u), u>>32&(zigLayers-1)
		e := float64(j) * et.w[i]
		if j >= et.k[i] {
			e = expSlow(rng, j, i)
		}
		z := a + e/alpha
		r := z - alpha
		u = rng.Uint64()
		j, i = uint32(u), u>>32&(zigLayers-1)
		e = float64(j) * et.w[i]
		if j >= et.k[i] {
			e = expSlow(rng, j, i)
		}
		if e >= 0.5*r*r {
			return z
		}
	}
}

// TruncNormal returns κ ~ N(μ, 1) truncated to (0, ∞) if positive, else to
// (−∞, 0] — the latent-variable draw of eq: sample latent variable with
// μ = θᵀu_n and positive = (v_n = 1). With s = ±1 it is κ = μ + sX,
// X ~ N(0, 1) conditioned on X > −sμ (see StdNormalAbove); the boundary
// point has probability zero. It does not allocate.
func TruncNormal(rng *rand.Rand, mu float64, positive bool) float64 {
	if positive {
		return mu + StdNormalAbove(rng, -mu)
	}
	return mu - StdNormalAbove(rng, mu)
}
