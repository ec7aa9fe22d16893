package digital

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Quantizer compresses one worker's block of samples to rate bits per
// sample and returns what the server decodes. The randomness it draws from
// rng (test-channel noise, dither) is common to worker and server.
type Quantizer interface {
	Quantize(rng *rand.Rand, src *Source, rate float64) (Quantized, error)
}

// Quantized is a decoded block.
type Quantized struct {
	// X holds the decoded samples x̂_s (S×d).
	X *mat.Dense
	// Bits holds the bits per sample spent on each principal direction.
	Bits []float64
	// White is N > 0 when x̂ = x + n with n ~ N(0, N·I_d) independent of x
	// (AdditiveNoise): the decoded stream is then an analog channel output
	// and the wireless combiners apply to it. 0 otherwise.
	White float64
}

// TestChannel is the ideal quantiser: the backward Gaussian test channel
// that achieves the rate–distortion function. With the reverse
// water-filling allocation D_i, b_i on the principal coordinates u = Uᵀ(x−μ),
//
//	û_i = a_i u_i + √(a_i D_i) w_i,  a_i = 1 − D_i/λ_i = 1 − 2^{−2b_i},  w_i ~ N(0, 1),
//
// so that u_i = û_i + e_i with e_i ~ N(0, D_i) independent of û_i (the
// backward channel), E(u_i − û_i)² = D_i exactly and Var û_i = λ_i − D_i.
// x̂ = μ + U û is the minimum-mean-squared-error reconstruction: shrunk
// towards μ, under-dispersed by D_i along each direction. A long random
// code realises this joint law at rate Σ_i b_i given common randomness
// (channel synthesis); for Gaussian sources no code does better in mean
// squared error.
//
// With PosteriorDraw the decoder returns a draw x̃ = x̂ + U ẽ, ẽ_i ~ N(0, D_i)
// fresh, from p(x | x̂) of the backward channel instead of its mean: mean
// squared error 2·D(R), but x̃ has the law of x for a Gaussian source at any
// rate (at rate 0 it is a draw from N(μ, Σ̂), the side information alone).
type TestChannel struct {
	PosteriorDraw bool
}

// Quantize implements Quantizer.
func (q TestChannel) Quantize(rng *rand.Rand, src *Source, rate float64) (Quantized, error) {
	alloc := src.WaterFill(rate)
	u := src.Coords()
	s, d := u.Dims()
	gain := make([]float64, d)
	sd := make([]float64, d)
	redraw := make([]float64, d)
	for i, b := range alloc.Bits {
		gain[i] = -math.Expm1(-2 * math.Ln2 * b) // 1 − 2^{−2b}
		sd[i] = math.Sqrt(gain[i] * alloc.Distortion[i])
		if q.PosteriorDraw {
			redraw[i] = math.Sqrt(alloc.Distortion[i])
		}
	}
	for r := range s {
		row := u.RawRowView(r)
		for i := range row {
			row[i] = gain[i]*row[i] + sd[i]*rng.NormFloat64()
			if q.PosteriorDraw {
				row[i] += redraw[i] * rng.NormFloat64()
			}
		}
	}
	return Quantized{X: src.FromCoords(u), Bits: alloc.Bits}, nil
}

// AdditiveNoise is the ideal quantiser whose decoded samples are the
// source plus white Gaussian noise, the forward test channel
//
//	x̂ = x + n,  n ~ N(0, N·I_d),  with N solving Σ_i ½ log2(1 + λ_i/N) = rate,
//
// the mutual information I(x; x̂) of a Gaussian source. Its mean squared
// error d·N exceeds the bound Σ_i D_i of TestChannel, but the decoded
// stream is unbiased and has the law of an analog channel output at noise
// N, so that WGCMC and WVCMC apply to it unchanged (Budget.Received).
type AdditiveNoise struct{}

// Quantize implements Quantizer.
func (AdditiveNoise) Quantize(rng *rand.Rand, src *Source, rate float64) (Quantized, error) {
	if !(rate > 0) {
		return Quantized{}, fmt.Errorf("rate %v bits per sample: the additive-noise reconstruction needs a positive rate", rate)
	}
	if src.Var[0] == 0 {
		return Quantized{}, fmt.Errorf("the samples are all equal: no noise level N gives rate %v", rate)
	}
	n := additiveNoiseLevel(src.Var, rate)
	x := mat.DenseCopyOf(src.X)
	s, _ := x.Dims()
	sd := math.Sqrt(n)
	for r := range s {
		row := x.RawRowView(r)
		for j := range row {
			row[j] += sd * rng.NormFloat64()
		}
	}
	bits := make([]float64, len(src.Var))
	for i, v := range src.Var {
		bits[i] = math.Log2(1+v/n) / 2
	}
	return Quantized{X: x, Bits: bits, White: n}, nil
}

// additiveNoiseLevel solves f(N) = Σ_i ½ log2(1 + λ_i/N) = rate (f
// decreasing) by bisection on log N inside the bracket
// λ_1/(2^{2R} − 1) ≤ N ≤ λ_1/(2^{2R/p} − 1), p the number of positive λ_i
// (f is at least the first term and at most p times it). gonum has no
// scalar root finder.
func additiveNoiseLevel(vars []float64, rate float64) float64 {
	p := 0
	for _, v := range vars {
		if v > 0 {
			p++
		}
	}
	// log(2^{2r} − 1) without overflow.
	logPow := func(r float64) float64 { return 2*r*math.Ln2 + math.Log(-math.Expm1(-2*r*math.Ln2)) }
	top := math.Log(vars[0])
	lo, hi := top-logPow(rate), top-logPow(rate/float64(p))
	f := func(logN float64) float64 {
		var bits float64
		for _, v := range vars[:p] {
			bits += math.Log1p(v*math.Exp(-logN)) / (2 * math.Ln2)
		}
		return bits
	}
	for range 200 {
		mid := (lo + hi) / 2
		if mid <= lo || mid >= hi {
			break
		}
		if f(mid) > rate {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Exp((lo + hi) / 2)
}

// Uniform is a practical fixed-rate quantiser: each principal coordinate
// u_i is scaled to unit variance and quantised by a midrise uniform
// quantiser with 2^{b_i} levels, levels (j − 2^{b_i}/2 + ½)Δ_{b_i}√λ_i, the
// step Δ_b minimising the mean squared error on a unit Gaussian (Max 1960);
// b_i = 0 sends nothing and decodes μ along that direction.
//
// The integer budgets: sample s gets n_s = ⌊(s+1)R⌋ − ⌊sR⌋ bits (time
// sharing, so that the S samples spend ⌊S·R⌋ bits in all), split by
// rounding the reverse water-filling allocation at rate n_s by largest
// remainder (ties to the larger variance). At most MaxBits bits go to one
// entry; anything above is not spent.
//
// With Dither, a subtractive dither v ~ U(−Δ/2, Δ/2) known to the server
// is added before quantising and removed after: the error is then uniform
// and independent of the sample while the input stays within the range.
type Uniform struct {
	Dither bool
}

// MaxBits caps the bits of one entry of the uniform quantiser: 2^32 levels
// already leave an error some 10^{-19} of the variance.
const MaxBits = 32

// Quantize implements Quantizer.
func (q Uniform) Quantize(rng *rand.Rand, src *Source, rate float64) (Quantized, error) {
	if rate < 0 || math.IsNaN(rate) || math.IsInf(rate, 0) {
		return Quantized{}, fmt.Errorf("rate %v bits per sample: must be finite and ≥ 0", rate)
	}
	u := src.Coords()
	s, d := u.Dims()
	alloc := map[int][]int{}
	steps := map[int]float64{}
	spent := make([]float64, d)
	sd := make([]float64, d)
	for i, v := range src.Var {
		sd[i] = math.Sqrt(v)
	}
	for r := range s {
		n := budgetFloor(float64(r+1)*rate) - budgetFloor(float64(r)*rate)
		bits, ok := alloc[n]
		if !ok {
			bits = roundBits(src.WaterFill(float64(n)).Bits, n)
			alloc[n] = bits
		}
		row := u.RawRowView(r)
		for i, b := range bits {
			spent[i] += float64(b)
			if b == 0 {
				row[i] = 0
				continue
			}
			step, ok := steps[b]
			if !ok {
				step, _ = gaussianUniform(b)
				steps[b] = step
			}
			var dither float64
			if q.Dither {
				dither = step * (rng.Float64() - 0.5)
			}
			row[i] = sd[i] * (midrise(row[i]/sd[i]+dither, step, b) - dither)
		}
	}
	for i := range spent {
		spent[i] /= float64(s)
	}
	return Quantized{X: src.FromCoords(u), Bits: spent}, nil
}

// budgetFloor is ⌊x⌋ with a margin for the rounding of (s+1)·R, so that
// R = 3 gives exactly 3 bits to every sample.
func budgetFloor(x float64) int {
	return int(math.Floor(x + 1e-9*math.Max(1, x)))
}

// roundBits rounds the allocation bits (summing to n, or less when
// variances are zero) to integers by largest remainder, each at most
// MaxBits.
func roundBits(bits []float64, n int) []int {
	out := make([]int, len(bits))
	left := n
	for i, b := range bits {
		out[i] = int(math.Floor(b + 1e-9))
		left -= out[i]
	}
	for left > 0 {
		best, frac := -1, 0.0
		for i, b := range bits {
			if f := b - float64(out[i]); f > frac+1e-12 {
				best, frac = i, f
			}
		}
		if best < 0 {
			break
		}
		out[best]++
		left--
	}
	for i := range out {
		out[i] = min(out[i], MaxBits)
	}
	return out
}

// midrise quantises z with 2^b levels (j − 2^b/2 + ½)·step, j = 0…2^b−1,
// to the nearest level (the outermost levels take everything beyond).
func midrise(z, step float64, b int) float64 {
	levels := math.Exp2(float64(b))
	j := math.Floor(z/step + levels/2)
	j = math.Max(0, math.Min(levels-1, j))
	return (j - levels/2 + 0.5) * step
}

// gaussianUniform returns the step Δ minimising the mean squared error of
// the 2^b-level midrise uniform quantiser of a unit Gaussian, and that
// error, by golden-section search over the loading L = 2^b·Δ/2 ∈ [0.5, 12]
// (gonum has no scalar minimiser). Max (1960): Δ = 1.596, 0.9957, 0.5860,
// 0.3352 for b = 1…4.
func gaussianUniform(b int) (step, mse float64) {
	levels := math.Exp2(float64(b))
	f := func(load float64) float64 { return uniformMSE(b, 2*load/levels) }
	lo, hi := 0.5, 12.0
	g := (math.Sqrt(5) - 1) / 2
	x1, x2 := hi-g*(hi-lo), lo+g*(hi-lo)
	f1, f2 := f(x1), f(x2)
	for range 80 {
		if f1 <= f2 {
			hi, x2, f2 = x2, x1, f1
			x1 = hi - g*(hi-lo)
			f1 = f(x1)
		} else {
			lo, x1, f1 = x1, x2, f2
			x2 = lo + g*(hi-lo)
			f2 = f(x2)
		}
	}
	load := (lo + hi) / 2
	step = 2 * load / levels
	return step, uniformMSE(b, step)
}

// exactCells is the largest number of levels for which uniformMSE sums
// every cell; beyond it the inner cells are within O(Δ⁴) of Δ²/12 times
// their probability.
const exactCells = 1 << 10

// uniformMSE is E(z − Q(z))² for z ~ N(0, 1) and the 2^b-level midrise
// quantiser of step Δ: by symmetry twice the sum over the upper cells
// [t_j, t_{j+1}) with level c_j of
//
//	∫ (z − c)² φ(z) dz = (1 + c²)(Φ(t₂) − Φ(t₁)) − (t₂φ(t₂) − t₁φ(t₁)) + 2c(φ(t₂) − φ(t₁)),
//
// the top cell reaching to +∞.
func uniformMSE(b int, step float64) float64 {
	levels := math.Exp2(float64(b))
	half := levels / 2
	edge := (half - 1) * step // lower threshold of the top cell
	top := cellMSE(edge, math.Inf(1), edge+step/2)
	if levels > exactCells {
		inner := 2*distuv.UnitNormal.CDF(edge) - 1
		return step*step/12*inner + 2*top
	}
	sum := top
	for j := 0.0; j < half-1; j++ {
		sum += cellMSE(j*step, (j+1)*step, (j+0.5)*step)
	}
	return 2 * sum
}

// cellMSE is ∫_a^b (z − c)² φ(z) dz for the unit Gaussian density φ.
func cellMSE(a, b, c float64) float64 {
	n := distuv.UnitNormal
	pa, pb := n.Prob(a), n.Prob(b)
	mass := n.Survival(a) - n.Survival(b)
	tb := 0.0
	if !math.IsInf(b, 1) {
		tb = b * pb
	}
	return (1+c*c)*mass - (tb - a*pa) + 2*c*(pb-pa)
}
