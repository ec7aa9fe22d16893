package metric

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// The uncertainty metrics score the spread of samples, which eq: err2
// cannot see for a posterior far from the origin: there E[θθᵀ] = C + μμᵀ
// is dominated by μμᵀ, and a point mass at μ scores nearly as well as exact
// samples. Against a reference posterior of mean μ and covariance C (σ_i² =
// C_ii), samples of mean μ̂ and covariance Ĉ score
//
//	mean_err   = √((1/d) Σ_i ((μ̂_i − μ_i)/σ_i)²)
//	cov_err    = ‖Ĉ − C‖_F / ‖C‖_F
//	coverage90 = (1/d) Σ_i P_ref(q̂_i(0.05) ≤ θ_i ≤ q̂_i(0.95))
//	w2         = W₂(N(μ̂, Ĉ), N(μ, C)) / √tr C,
//	W₂²        = ‖μ̂ − μ‖² + tr(Ĉ + C − 2(C^½ Ĉ C^½)^½),
//
// where μ̂ is the sample mean, Ĉ the sample covariance with divisor S − 1
// (stat.CovarianceMatrix) and q̂_i(p) the sample quantile of coordinate i by
// stat.Quantile with stat.Empirical: the ⌈pS⌉-th smallest of the S values
// (the first for p S ≤ 1). coverage90 is 0.90 for an exact posterior in the
// limit of many samples (exact samples give (⌈0.95S⌉ − ⌈0.05S⌉)/(S + 1) on
// average), lower for overconfident samples and higher for too wide ones; w2
// is divided by √tr C, the W₂ distance of a point mass at μ from N(μ, C),
// so that it is scale-free and a point mass at the exact mean scores 1.
//
// Beside them, err2_scaled is eq: err2 with each entry's error measured in
// the scale of its two coordinates instead of the entry itself:
//
//	err2_scaled = (1/d²) Σ_{i,j} |M̂_ij − R_ij| / √(R_ii R_jj),
//
// with M̂ and R the second moments of the samples and of the reference (as
// in Err2). Since |R_ij| ≤ √(R_ii R_jj), each term is at most err2's; the
// denominators are bounded away from zero, so an entry R_ij near zero (a
// pair of nearly orthogonal coordinates), which can make err2 arbitrarily
// large and, when R is estimated from draws, a heavy-tailed function of the
// reference's Monte Carlo error, weighs no more than any other.

// Reference is the global posterior the uncertainty metrics compare with:
// its mean μ, covariance C and the law of each coordinate that Coverage90
// integrates, N(μ_i, σ_i²) for a Gaussian reference and the empirical
// distribution of the draws for a sample reference.
type Reference struct {
	mean  []float64
	cov   *mat.SymDense
	sd    []float64     // σ_i = √C_ii
	root  *mat.SymDense // C^½ (SymDense.PowPSD)
	normC float64       // ‖C‖_F
	trC   float64
	m     *mat.SymDense // R = E[θθᵀ]: C + μμᵀ, or (1/S) Σ θθᵀ of the draws
	draws [][]float64   // per coordinate the sorted reference draws; nil for a Gaussian reference
}

// NewGaussianReference returns the reference N(mean, cov); coverage90 then
// uses the exact normal CDF of each coordinate.
func NewGaussianReference(mean []float64, cov mat.Symmetric) (*Reference, error) {
	d := cov.SymmetricDim()
	if len(mean) != d {
		return nil, fmt.Errorf("reference: mean has d = %d, covariance %d", len(mean), d)
	}
	c := mat.NewSymDense(d, nil)
	c.CopySym(cov)
	r, err := newReference(slices.Clone(mean), c)
	if err != nil {
		return nil, err
	}
	r.m = momentOf(r.mean, r.cov)
	return r, nil
}

// momentOf returns cov + mean meanᵀ.
func momentOf(mean []float64, cov mat.Symmetric) *mat.SymDense {
	m := mat.NewSymDense(len(mean), nil)
	m.CopySym(cov)
	m.SymRankOne(m, 1, mat.NewVecDense(len(mean), slices.Clone(mean)))
	return m
}

// NewSampleReference returns the reference of the draws (rows, at least
// two): their sample mean and covariance, and for coverage90 the empirical
// distribution of each coordinate's draws.
// Its covariance must be positive definite: more draws than parameters,
// none of them constant, none a linear combination of the others.
func NewSampleReference(draws *mat.Dense) (*Reference, error) {
	s, d := draws.Dims()
	if s >= 2 && s <= d {
		return nil, fmt.Errorf("reference: %d draws of d = %d parameters: their covariance is singular", s, d)
	}
	mean, cov, err := Moments(draws)
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	for i := range d {
		if cov.At(i, i) == 0 {
			return nil, fmt.Errorf("reference: parameter %d is constant in all %d draws (variance 0), so the metrics, in units of its spread, are undefined", i+1, s)
		}
	}
	r, err := newReference(mean, cov)
	if err != nil {
		return nil, fmt.Errorf("%w (in the reference's %d draws some parameters are linear combinations of the others)", err, s)
	}
	r.m = SecondMoment(draws)
	r.draws = make([][]float64, d)
	for i := range d {
		col := mat.Col(make([]float64, s), i, draws)
		sort.Float64s(col)
		r.draws[i] = col
	}
	return r, nil
}

func newReference(mean []float64, cov *mat.SymDense) (*Reference, error) {
	d := len(mean)
	if d == 0 {
		return nil, errors.New("reference: d = 0")
	}
	r := &Reference{mean: mean, cov: cov, sd: make([]float64, d), normC: mat.Norm(cov, 2), trC: mat.Trace(cov)}
	for i := range d {
		v := cov.At(i, i)
		if !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("reference: variance of coordinate %d is %v, not positive and finite", i, v)
		}
		r.sd[i] = math.Sqrt(v)
	}
	r.root = mat.NewSymDense(d, nil)
	if err := r.root.PowPSD(cov, 0.5); err != nil {
		return nil, fmt.Errorf("reference: C^½: %w", err)
	}
	return r, nil
}

// Dim returns the reference's dimension d.
func (r *Reference) Dim() int { return len(r.mean) }

// traceSqrt returns tr(a^½) = Σ √λ_i of the positive semidefinite a. An
// entry that is not finite is an error (gonum's eigensolver panics on one).
func traceSqrt(a mat.Symmetric) (float64, error) {
	n := a.SymmetricDim()
	for i := range n {
		for j := i; j < n; j++ {
			if v := a.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("entry (%d, %d) of the covariance product is %v: the samples' covariance overflows floating point", i, j, v)
			}
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(a, false) {
		return 0, errors.New("eigendecomposition failed")
	}
	var t float64
	for _, v := range eig.Values(nil) {
		t += math.Sqrt(max(v, 0))
	}
	return t, nil
}

// symPart returns (a + aᵀ)/2.
func symPart(a mat.Matrix) *mat.SymDense {
	n, _ := a.Dims()
	s := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			s.SetSym(i, j, (a.At(i, j)+a.At(j, i))/2)
		}
	}
	return s
}

// Moments returns the sample mean and the sample covariance (divisor
// S − 1, stat.CovarianceMatrix) of the rows of theta (at least two).
func Moments(theta *mat.Dense) ([]float64, *mat.SymDense, error) {
	s, d := theta.Dims()
	if s < 2 {
		return nil, nil, fmt.Errorf("%d samples: a covariance needs at least 2", s)
	}
	mean := make([]float64, d)
	col := make([]float64, s)
	for i := range d {
		mean[i] = stat.Mean(mat.Col(col, i, theta), nil)
	}
	var cov mat.SymDense
	stat.CovarianceMatrix(&cov, theta, nil)
	return mean, &cov, nil
}

// MeanErr returns √((1/d) Σ_i ((mean_i − μ_i)/σ_i)²), the RMS error of
// mean in units of the reference's standard deviations.
func (r *Reference) MeanErr(mean []float64) float64 {
	var sum float64
	for i, m := range mean {
		z := (m - r.mean[i]) / r.sd[i]
		sum += z * z
	}
	return math.Sqrt(sum / float64(len(mean)))
}

// CovErr returns ‖cov − C‖_F / ‖C‖_F.
func (r *Reference) CovErr(cov mat.Symmetric) float64 {
	var diff mat.Dense
	diff.Sub(cov, r.cov)
	return mat.Norm(&diff, 2) / r.normC
}

// W2 returns the 2-Wasserstein distance between N(mean, cov) and
// N(μ, C), W₂² = ‖mean − μ‖² + tr(cov + C − 2(C^½ cov C^½)^½), divided by
// √tr C.
func (r *Reference) W2(mean []float64, cov mat.Symmetric) (float64, error) {
	var m mat.Dense
	m.Product(r.root, cov, r.root)
	cross, err := traceSqrt(symPart(&m))
	if err != nil {
		return 0, fmt.Errorf("w2: %w", err)
	}
	var dm float64
	for i, v := range mean {
		dm += (v - r.mean[i]) * (v - r.mean[i])
	}
	w2 := dm + mat.Trace(cov) + r.trC - 2*cross
	return math.Sqrt(max(w2, 0) / r.trC), nil
}

// Mass returns the reference's probability of lo ≤ θ_i ≤ hi: Φ((hi −
// μ_i)/σ_i) − Φ((lo − μ_i)/σ_i) for a Gaussian reference, the fraction of
// the draws in [lo, hi] for a sample reference.
func (r *Reference) Mass(i int, lo, hi float64) float64 {
	if hi < lo {
		return 0
	}
	if x := r.draws; x != nil {
		n := len(x[i])
		above := sort.Search(n, func(k int) bool { return x[i][k] > hi })
		below := sort.SearchFloat64s(x[i], lo) // draws < lo
		return float64(above-below) / float64(n)
	}
	n := distuv.Normal{Mu: r.mean[i], Sigma: r.sd[i]}
	return n.CDF(hi) - n.CDF(lo)
}

// Interval90 returns the samples' central 90% interval of each coordinate:
// its 5% and 95% sample quantiles, stat.Quantile with stat.Empirical (the
// ⌈0.05S⌉-th and ⌈0.95S⌉-th smallest of the S values).
func Interval90(theta *mat.Dense) (lo, hi []float64) {
	s, d := theta.Dims()
	lo, hi = make([]float64, d), make([]float64, d)
	col := make([]float64, s)
	for i := range d {
		mat.Col(col, i, theta)
		sort.Float64s(col)
		lo[i] = stat.Quantile(0.05, stat.Empirical, col, nil)
		hi[i] = stat.Quantile(0.95, stat.Empirical, col, nil)
	}
	return lo, hi
}

// Coverage returns (1/d) Σ_i Mass(i, lo_i, hi_i), the reference's mass in
// the intervals averaged over the coordinates.
func (r *Reference) Coverage(lo, hi []float64) float64 {
	var sum float64
	for i := range lo {
		sum += r.Mass(i, lo[i], hi[i])
	}
	return sum / float64(len(lo))
}

// Err2Scaled returns (1/d²) Σ_{i,j} |m_ij − R_ij| / √(R_ii R_jj) for the
// second moment m.
func (r *Reference) Err2Scaled(m mat.Symmetric) float64 {
	d := r.Dim()
	var sum float64
	for i := range d {
		for j := range d {
			sum += math.Abs(m.At(i, j)-r.m.At(i, j)) / math.Sqrt(r.m.At(i, i)*r.m.At(j, j))
		}
	}
	return sum / float64(d*d)
}

// Uncertainty holds the four uncertainty metrics of samples against a
// Reference and err2_scaled (see the formulas above).
type Uncertainty struct {
	MeanErr, CovErr, Coverage90, W2, Err2Scaled float64
}

// Score returns the uncertainty metrics of the samples theta (rows, at
// least two).
func (r *Reference) Score(theta *mat.Dense) (Uncertainty, error) {
	if _, d := theta.Dims(); d != r.Dim() {
		return Uncertainty{}, fmt.Errorf("uncertainty metrics: samples have d = %d, reference has %d", d, r.Dim())
	}
	mean, cov, err := Moments(theta)
	if err != nil {
		return Uncertainty{}, fmt.Errorf("uncertainty metrics: %w", err)
	}
	lo, hi := Interval90(theta)
	return r.score(mean, cov, SecondMoment(theta), lo, hi)
}

// z95 is Φ⁻¹(0.95): N(m, s²) has its central 90% in m ± z95·s.
var z95 = distuv.UnitNormal.Quantile(0.95)

// ScoreGaussian returns the uncertainty metrics of the exact law
// N(mean, cov) (e.g. a linear map's output on fresh Gaussian signals):
// its central 90% interval of coordinate i is mean_i ± Φ⁻¹(0.95)·√cov_ii.
func (r *Reference) ScoreGaussian(mean []float64, cov mat.Symmetric) (Uncertainty, error) {
	d := r.Dim()
	if len(mean) != d || cov.SymmetricDim() != d {
		return Uncertainty{}, fmt.Errorf("uncertainty metrics: law has d = %d and %d, reference %d", len(mean), cov.SymmetricDim(), d)
	}
	lo, hi := make([]float64, d), make([]float64, d)
	for i := range d {
		h := z95 * math.Sqrt(max(cov.At(i, i), 0))
		lo[i], hi[i] = mean[i]-h, mean[i]+h
	}
	return r.score(mean, cov, momentOf(mean, cov), lo, hi)
}

// score returns the metrics of a law with mean, covariance cov, second
// moment m and central 90% intervals [lo, hi].
func (r *Reference) score(mean []float64, cov, m mat.Symmetric, lo, hi []float64) (Uncertainty, error) {
	u := Uncertainty{MeanErr: r.MeanErr(mean), CovErr: r.CovErr(cov), Coverage90: r.Coverage(lo, hi), Err2Scaled: r.Err2Scaled(m)}
	var err error
	if u.W2, err = r.W2(mean, cov); err != nil {
		return Uncertainty{}, err
	}
	for _, v := range []float64{u.MeanErr, u.CovErr, u.Coverage90, u.W2, u.Err2Scaled} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Uncertainty{}, fmt.Errorf("uncertainty metrics: %+v (samples not finite?)", u)
		}
	}
	return u, nil
}
