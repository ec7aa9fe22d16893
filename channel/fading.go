package channel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// LargeScale gives each worker its own large-scale power gain β_k, so that
// its received SNR is β_k times the reference SNR P/(m_r N0)
// (docs/BEYOND.md note 13). The zero value gives every worker β_k = 1.
// Set either OffsetDB or the path-loss model (DMin, DMax, Exponent).
type LargeScale struct {
	// OffsetDB lists, per worker, its SNR relative to Config.SNRdB in dB:
	// β_k = 10^{OffsetDB[k]/10}. It needs one entry per worker, each within
	// ±MaxOffsetDB.
	OffsetDB []float64
	// DMin and DMax bound the worker distances, drawn once per link
	// (Transmit call) uniformly in [DMin, DMax] from its generator; Exponent
	// is the path-loss exponent α. β_k = (d_k/d_ref)^{−α} with
	// ln d_ref = E[ln d], so that the per-worker SNR in dB has mean
	// Config.SNRdB over the distance law. Use Realize to share one draw
	// between several links (OMA and NOMA of one trial).
	DMin, DMax, Exponent float64
}

// pathLoss reports whether the path-loss model is set.
func (l LargeScale) pathLoss() bool { return l.DMin != 0 || l.DMax != 0 || l.Exponent != 0 }

func (l LargeScale) validate() error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if l.OffsetDB != nil {
		if len(l.OffsetDB) == 0 {
			return fmt.Errorf("per-worker SNR offsets: empty list (leave it unset for equal SNR)")
		}
		if l.pathLoss() {
			return fmt.Errorf("per-worker SNR offsets and a path-loss model both given: choose one")
		}
		for k, o := range l.OffsetDB {
			if !(math.Abs(o) <= MaxOffsetDB) {
				return fmt.Errorf("SNR offset of worker %d = %v dB: must be in [%g, %g] dB (far outside it the worker's power scale P_k overflows)", k+1, o, -MaxOffsetDB, MaxOffsetDB)
			}
		}
		return nil
	}
	if !l.pathLoss() {
		return nil
	}
	switch {
	case !finite(l.DMin) || !finite(l.DMax) || !(l.DMin > 0):
		return fmt.Errorf("path loss: distances [d_min, d_max] = [%v, %v]: need 0 < d_min ≤ d_max, finite", l.DMin, l.DMax)
	case l.DMax < l.DMin:
		return fmt.Errorf("path loss: d_max = %v < d_min = %v", l.DMax, l.DMin)
	case !finite(l.Exponent) || l.Exponent < 0:
		return fmt.Errorf("path loss: exponent α = %v: must be ≥ 0 and finite", l.Exponent)
	}
	return nil
}

// RefDistance returns d_ref = exp E[ln d] for d uniform in [DMin, DMax]:
// ln d_ref = (b ln b − a ln a)/(b − a) − 1, and a when a = b.
func (l LargeScale) RefDistance() float64 {
	a, b := l.DMin, l.DMax
	if a == b {
		return a
	}
	return math.Exp((b*math.Log(b)-a*math.Log(a))/(b-a) - 1)
}

// gains returns β_k for k workers (nil when every β_k = 1), drawing the
// distances from rng under the path-loss model.
func (l LargeScale) gains(rng *rand.Rand, k int) ([]float64, error) {
	switch {
	case l.OffsetDB != nil:
		if len(l.OffsetDB) != k {
			return nil, fmt.Errorf("per-worker SNR offsets: %d entries for K = %d workers", len(l.OffsetDB), k)
		}
		g := make([]float64, k)
		for i, o := range l.OffsetDB {
			g[i] = math.Pow(10, o/10)
		}
		return g, nil
	case l.pathLoss():
		g := make([]float64, k)
		ref := l.RefDistance()
		for i := range g {
			d := l.DMin + (l.DMax-l.DMin)*rng.Float64()
			g[i] = math.Pow(d/ref, -l.Exponent)
		}
		return g, nil
	}
	return nil, nil
}

// Realize draws the large-scale gains of k workers once (the distances,
// from rng, under the path-loss model) and returns them as the equivalent
// explicit list, OffsetDB = 10 log10 β_k, so that the links of one trial can
// share one geometry. The zero value is returned unchanged.
func (l LargeScale) Realize(rng *rand.Rand, k int) (LargeScale, error) {
	if err := l.validate(); err != nil {
		return LargeScale{}, err
	}
	g, err := l.gains(rng, k)
	if err != nil || g == nil {
		return l, err
	}
	out := LargeScale{OffsetDB: make([]float64, k)}
	for i, b := range g {
		out.OffsetDB[i] = 10 * math.Log10(b)
	}
	return out, nil
}

// ricianDraws is the number of channel draws of the Monte Carlo estimate of
// E[(HHᴴ)^{-1}] under Rician fading, for m_r complex uses: 2^16/m_r, at
// least 256.
func ricianDraws(m int) int { return max(256, (1<<16)/m) }

type ricianKey struct {
	m, mt  int
	lambda float64
}

var ricianCache sync.Map // ricianKey → [4]float64

// ricianInvGram returns g1, g2 with E[(H Hᴴ)^{-1}] = g2 I + (g1 − g2) u uᴴ,
// u = 1/√m, for H = λ 1 1ᵀ + W, m×mt, W i.i.d. CN(0,1) (docs/BEYOND.md
// eq. (14.6)). Rotating 1 to √m e1 and 1 to √mt e1 leaves W's law
// unchanged, so g1 = E[(H'H'ᴴ)^{-1}]_{11} and g2 = (E tr(H'H'ᴴ)^{-1} − g1)/(m − 1) for
// H' = λ√(m mt) e1 e1ᵀ + W (g2 as the mean of the other m − 1 diagonal
// entries), estimated from ricianDraws(m) draws of a generator seeded by
// (m, mt, λ): a deterministic function of its arguments, computed once per
// process.
func ricianInvGram(m, mt int, lambda float64) (g1, g2 float64) {
	g := ricianTable(m, mt, lambda)
	return g[0], g[1]
}

// ricianTable returns g1, g2 of ricianInvGram and their standard errors.
func ricianTable(m, mt int, lambda float64) [4]float64 {
	key := ricianKey{m, mt, lambda}
	if v, ok := ricianCache.Load(key); ok {
		return v.([4]float64)
	}
	rng := rand.New(rand.NewPCG(uint64(m)<<32|uint64(mt), math.Float64bits(lambda)))
	n := ricianDraws(m)
	re := make([]float64, m*mt)
	im := make([]float64, m*mt)
	h := mat.NewDense(2*m, 2*mt, nil)
	var gram, inv mat.SymDense
	var chol mat.Cholesky
	los := lambda * math.Sqrt(float64(m*mt))
	v1 := make([]float64, 0, n)
	v2 := make([]float64, 0, n)
	for len(v1) < n {
		for j := range re {
			re[j] = math.Sqrt(0.5) * rng.NormFloat64()
			im[j] = math.Sqrt(0.5) * rng.NormFloat64()
		}
		re[0] += los
		complexRep(h, re, im, m, mt)
		gram.SymOuterK(1, h)
		if !chol.Factorize(&gram) {
			continue
		}
		if err := chol.InverseTo(&inv); err != nil {
			if _, ok := err.(mat.Condition); !ok {
				continue
			}
		}
		v1 = append(v1, inv.At(0, 0))
		var rest float64
		for j := 1; j < m; j++ {
			rest += inv.At(j, j)
		}
		if m > 1 {
			v2 = append(v2, rest/float64(m-1))
		}
	}
	var g [4]float64
	g[0], g[2] = stat.MeanStdDev(v1, nil)
	g[2] /= math.Sqrt(float64(n))
	g[1], g[3] = g[0], g[2]
	if m > 1 {
		g[1], g[3] = stat.MeanStdDev(v2, nil)
		g[3] /= math.Sqrt(float64(n))
	}
	ricianCache.Store(key, g)
	return g
}

// ricianEnergy is Σ_s tr(E[(ĤĤᴴ)^{-1}] t_s t_sᴴ) for t_s = B θ_s packed on
// I and Q (docs/BEYOND.md eq. (14.6)): with Ĥ = μ 1 1ᵀ + √v̂ W,
// E[(ĤĤᴴ)^{-1}] = (g2 I + (g1 − g2) u uᴴ)/v̂ at λ = μ/√v̂.
func (c Config) ricianEnergy(theta *mat.Dense, w workerLink) float64 {
	s, d := theta.Dims()
	mr := c.Repetition * d
	mc, mtc := c.complexDims(mr)
	g1, g2 := ricianInvGram(mc, mtc, w.mean/math.Sqrt(w.vHat))
	t := make([]float64, 2*mc)
	var sum float64
	for i := range s {
		fillBasis(t, theta.RawRowView(i), c.Repetition)
		var n2, sI, sQ float64
		for j, v := range t {
			n2 += v * v
			if j < mc {
				sI += v
			} else {
				sQ += v
			}
		}
		sum += g2*n2 + (g1-g2)*(sI*sI+sQ*sQ)/float64(mc)
	}
	return sum / w.vHat
}

// fillBasis writes B θ = (θ, …, θ) (l copies) into the first l·d entries of
// t and zeros the rest (the I/Q pad).
func fillBasis(t, theta []float64, l int) {
	d := len(theta)
	for j := range l {
		copy(t[j*d:(j+1)*d], theta)
	}
	for j := l * d; j < len(t); j++ {
		t[j] = 0
	}
}

// complexRep writes the real representation [[A, −B], [B, A]] of the m×mt
// complex matrix A + iB (row-major re and im) into h (2m×2mt). It maps
// products, adjoints and inverses of complex matrices to those of their
// representations, so zero-forcing on it is zero-forcing on A + iB.
func complexRep(h *mat.Dense, re, im []float64, m, mt int) {
	for i := range m {
		top := h.RawRowView(i)
		bot := h.RawRowView(m + i)
		for j := range mt {
			a, b := re[i*mt+j], im[i*mt+j]
			top[j], top[mt+j] = a, -b
			bot[j], bot[mt+j] = b, a
		}
	}
}
