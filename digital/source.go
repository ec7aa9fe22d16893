package digital

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// Source is one worker's block of S samples as its quantiser sees it: the
// empirical mean μ and the eigendecomposition of the empirical covariance
//
//	Σ̂ = (1/S) Σ_s (x_s − μ)(x_s − μ)ᵀ = U diag(λ) Uᵀ,  λ_1 ≥ … ≥ λ_d ≥ 0.
//
// The 1/S normalisation is the second moment of the block being coded, so
// that a quantiser designed on λ meets its distortion on these samples.
// Eigenvalues below relTol·λ_1 (rounding) are set to zero.
type Source struct {
	X     *mat.Dense // the samples, S×d (not copied)
	Mean  []float64  // μ
	Basis *mat.Dense // U (d×d): column i is the i-th principal direction
	Var   []float64  // λ_i, decreasing
}

// relTol is the eigenvalue threshold, relative to the largest, below which
// a principal variance is rounding and counts as zero.
const relTol = 1e-12

// NewSource computes μ, U and λ for the samples x (rows). It needs S ≥ 2
// finite samples.
func NewSource(x *mat.Dense) (*Source, error) {
	s, d := x.Dims()
	if s < 2 {
		return nil, fmt.Errorf("%d samples: the covariance needs at least 2", s)
	}
	if !allFinite(x) {
		return nil, fmt.Errorf("samples contain NaN or Inf")
	}
	src := &Source{X: x, Mean: make([]float64, d)}
	for j := range d {
		src.Mean[j] = mat.Sum(x.ColView(j)) / float64(s)
	}
	cov := mat.NewSymDense(d, nil)
	cov.SymOuterK(1/float64(s), centred(x, src.Mean).T())
	var eig mat.EigenSym
	if !eig.Factorize(cov, true) {
		return nil, fmt.Errorf("eigendecomposition of the %d×%d sample covariance failed", d, d)
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	// EigenSym returns ascending eigenvalues: reverse to decreasing.
	order := make([]int, d)
	for i := range order {
		order[i] = d - 1 - i
	}
	src.Var = make([]float64, d)
	src.Basis = mat.NewDense(d, d, nil)
	for i, o := range order {
		src.Var[i] = vals[o]
		src.Basis.SetCol(i, mat.Col(nil, o, &vecs))
	}
	for i := range src.Var {
		if src.Var[i] <= relTol*src.Var[0] {
			src.Var[i] = 0
		}
	}
	return src, nil
}

// Dim is d.
func (src *Source) Dim() int { return len(src.Mean) }

// Coords returns the principal coordinates u_s = Uᵀ(x_s − μ) as rows (S×d).
func (src *Source) Coords() *mat.Dense {
	var u mat.Dense
	u.Mul(centred(src.X, src.Mean), src.Basis)
	return &u
}

// FromCoords returns x_s = μ + U u_s for the rows u_s of u (S×d).
func (src *Source) FromCoords(u *mat.Dense) *mat.Dense {
	var x mat.Dense
	x.Mul(u, src.Basis.T())
	s, _ := x.Dims()
	for i := range s {
		row := x.RawRowView(i)
		for j, m := range src.Mean {
			row[j] += m
		}
	}
	return &x
}

// WaterFill is the reverse water-filling allocation of rate bits per
// sample over the principal directions (Cover & Thomas, Thm 10.3.3): the
// rate–distortion function of N(μ, Σ̂),
//
//	D_i = min(λ_i, γ),  b_i = ½ log2(λ_i / D_i),  Σ_i b_i = rate,
//
// with D(rate) = Σ_i D_i the least mean squared error any code of that rate
// achieves on a Gaussian source with these variances.
func (src *Source) WaterFill(rate float64) Allocation {
	return reverseWaterFill(src.Var, rate)
}

// Allocation is a split of the bits per sample over the principal
// directions (in the order of Source.Var).
type Allocation struct {
	// Level is the water level γ (0 when every variance is zero).
	Level float64
	// Distortion holds D_i = min(λ_i, γ).
	Distortion []float64
	// Bits holds b_i = ½ log2(λ_i/D_i) ≥ 0.
	Bits []float64
}

// Bound is D = Σ_i D_i, the rate–distortion bound at the allocated rate.
func (a Allocation) Bound() float64 {
	var d float64
	for _, v := range a.Distortion {
		d += v
	}
	return d
}

// reverseWaterFill solves Σ_{λ_i > γ} ½ log2(λ_i/γ) = rate for decreasing
// variances: with the m largest active, log2 γ = (Σ_{i≤m} log2 λ_i − 2·rate)/m,
// and m is the first count for which λ_{m+1} ≤ γ < λ_m. The bits are
// computed from logarithms, so that they stay finite when γ underflows.
// With rate ≤ 0 nothing is active; with every λ_i = 0 nothing needs coding
// and the bits sum to 0, not to rate.
func reverseWaterFill(vars []float64, rate float64) Allocation {
	d := len(vars)
	a := Allocation{Distortion: make([]float64, d), Bits: make([]float64, d)}
	copy(a.Distortion, vars)
	positive := 0
	for _, v := range vars {
		if v > 0 {
			positive++
		}
	}
	if positive == 0 {
		return a
	}
	if !(rate > 0) {
		a.Level = vars[0]
		return a
	}
	var sumLog, logLevel float64
	m := 0
	for m < positive {
		sumLog += math.Log2(vars[m])
		m++
		logLevel = (sumLog - 2*rate) / float64(m)
		if m == positive || logLevel >= math.Log2(vars[m]) {
			break
		}
	}
	a.Level = math.Exp2(logLevel)
	for i := range m {
		a.Distortion[i] = a.Level
		a.Bits[i] = (math.Log2(vars[i]) - logLevel) / 2
	}
	return a
}

// forwardWaterFill splits the energy e over parallel Gaussian channels of
// noise-to-gain ratios c_j (the capacity-achieving allocation, Cover &
// Thomas Sec. 9.4): p_j = max(0, ν − c_j) with Σ_j p_j = e, and returns
// Σ_j ½ log2(1 + p_j/c_j), the bits the channels carry.
func forwardWaterFill(c []float64, e float64) float64 {
	sorted := append([]float64(nil), c...)
	sort.Float64s(sorted)
	var sum, level float64
	m := 0
	for m < len(sorted) {
		sum += sorted[m]
		m++
		level = (e + sum) / float64(m)
		if m == len(sorted) || level <= sorted[m] {
			break
		}
	}
	var bits float64
	for _, cj := range sorted[:m] {
		bits += math.Log2(level/cj) / 2
	}
	return bits
}

// centred returns x with mean subtracted from every row.
func centred(x *mat.Dense, mean []float64) *mat.Dense {
	c := mat.DenseCopyOf(x)
	s, _ := c.Dims()
	for i := range s {
		row := c.RawRowView(i)
		for j, m := range mean {
			row[j] -= m
		}
	}
	return c
}

func allFinite(m *mat.Dense) bool {
	r, _ := m.Dims()
	for i := range r {
		for _, v := range m.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
	}
	return true
}
