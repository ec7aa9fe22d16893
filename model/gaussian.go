package model

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// Gaussian is the target N(μ, C): log p(θ) = −½ (θ−μ)ᵀ C^{-1} (θ−μ) + c and
// ∇ log p(θ) = −C^{-1}(θ−μ). In the paper's Gaussian experiments (Sec. VI-A)
// the global posterior is N(0, (Σ_k C_k^{-1})^{-1}) and WVCMC uses this
// gradient with full batches. A Gaussian is safe for concurrent use.
type Gaussian struct {
	mean []float64
	prec *mat.SymDense
	cov  *mat.SymDense
	chol mat.Cholesky // of C
}

// NewGaussian returns N(mean, cov); mean nil means zero. cov must be
// symmetric positive definite.
func NewGaussian(mean []float64, cov mat.Symmetric) (*Gaussian, error) {
	d := cov.SymmetricDim()
	if mean == nil {
		mean = make([]float64, d)
	}
	if len(mean) != d {
		return nil, fmt.Errorf("gaussian: mean has length %d, covariance is %d×%d", len(mean), d, d)
	}
	g := &Gaussian{mean: append([]float64(nil), mean...), cov: mat.NewSymDense(d, nil)}
	g.cov.CopySym(cov)
	if !g.chol.Factorize(g.cov) {
		return nil, fmt.Errorf("gaussian: covariance is not positive definite")
	}
	g.prec = mat.NewSymDense(d, nil)
	if err := g.chol.InverseTo(g.prec); err != nil {
		return nil, fmt.Errorf("gaussian: inverting covariance: %w", err)
	}
	return g, nil
}

// Dim is d.
func (g *Gaussian) Dim() int { return len(g.mean) }

// Mean returns μ (a copy).
func (g *Gaussian) Mean() []float64 { return append([]float64(nil), g.mean...) }

// Cov returns C (a copy).
func (g *Gaussian) Cov() *mat.SymDense {
	return mat.NewSymDense(g.Dim(), append([]float64(nil), g.cov.RawSymmetric().Data...))
}

// Cholesky returns the Cholesky factorisation of C.
func (g *Gaussian) Cholesky() *mat.Cholesky { return &g.chol }

// SecondMoment is E[θθᵀ] = C + μμᵀ.
func (g *Gaussian) SecondMoment() *mat.SymDense {
	m := g.Cov()
	m.SymRankOne(m, 1, mat.NewVecDense(g.Dim(), g.Mean()))
	return m
}

func (g *Gaussian) centred(theta *mat.Dense) *mat.Dense {
	s, d := theta.Dims()
	if d != g.Dim() {
		panic(fmt.Sprintf("gaussian: θ has %d columns, want %d", d, g.Dim()))
	}
	diff := mat.NewDense(s, d, nil)
	for i := range s {
		row, dst := theta.RawRowView(i), diff.RawRowView(i)
		for j, v := range row {
			dst[j] = v - g.mean[j]
		}
	}
	return diff
}

// LogJoint sets dst[s] = −½ (θ_s−μ)ᵀ C^{-1} (θ_s−μ).
func (g *Gaussian) LogJoint(dst []float64, theta *mat.Dense) {
	diff := g.centred(theta)
	var pd mat.Dense
	pd.Mul(diff, g.prec)
	for i := range dst {
		var q float64
		for j, v := range diff.RawRowView(i) {
			q += v * pd.At(i, j)
		}
		dst[i] = -0.5 * q
	}
}

// GradLogJoint sets row s of grad to −C^{-1}(θ_s−μ).
func (g *Gaussian) GradLogJoint(grad, theta *mat.Dense) {
	diff := g.centred(theta)
	grad.Mul(diff, g.prec)
	grad.Scale(-1, grad)
}

// NegHessians sets every row of dst (S × d(d+1)/2) to the packed upper
// triangle of C^{-1} = −∇² log p (Curved).
func (g *Gaussian) NegHessians(dst, theta *mat.Dense) {
	s, d := theta.Dims()
	if r, c := dst.Dims(); d != g.Dim() || r != s || c != d*(d+1)/2 {
		panic(mat.ErrShape)
	}
	for r := range s {
		row := dst.RawRowView(r)
		for i := range d {
			for j := i; j < d; j++ {
				row[PackedIndex(d, i, j)] = g.prec.At(i, j)
			}
		}
	}
}
