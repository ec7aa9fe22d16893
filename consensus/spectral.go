package consensus

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// relTol is the eigenvalue threshold, relative to the largest eigenvalue,
// below which a symmetric matrix is treated as singular in that direction
// (docs/MATH.md note 5: A^{-1/2} and inverses act on the non-zero eigenvalues).
const relTol = 1e-12

// ErrNotFinite is wrapped by the error of a scheme whose covariance
// estimates, or their inverses, leave floating point: signals (or samples)
// too large, or power scales P_k too small, for float64 arithmetic.
var ErrNotFinite = errors.New("covariance estimate not finite in float64: rescale the samples (standardise the covariates, say) or check the link's P_k and N0")

// spectral returns U diag(f(λ)) Uᵀ for the symmetric a = U diag(λ) Uᵀ.
// Eigenvalues at or below relTol·max|λ| are passed to f as exactly 0. It
// fails with ErrNotFinite when a or some f(λ) is not finite.
func spectral(a mat.Symmetric, f func(float64) float64) (*mat.SymDense, error) {
	n := a.SymmetricDim()
	for i := range n {
		for j := i; j < n; j++ {
			if v := a.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, ErrNotFinite
			}
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(a, true) {
		return nil, ErrNotFinite
	}
	vals := eig.Values(nil)
	var u mat.Dense
	eig.VectorsTo(&u)
	var top float64
	for _, v := range vals {
		top = math.Max(top, math.Abs(v))
	}
	out := mat.NewSymDense(n, nil)
	for i, v := range vals {
		if v <= relTol*top {
			v = 0
		}
		fv := f(v)
		if fv == 0 {
			continue
		}
		if math.IsNaN(fv) || math.IsInf(fv, 0) {
			return nil, ErrNotFinite
		}
		col := mat.Col(nil, i, &u)
		out.SymRankOne(out, fv, mat.NewVecDense(n, col))
	}
	return out, nil
}

// pinv is the Moore–Penrose inverse of a positive semidefinite matrix.
func pinv(a mat.Symmetric) (*mat.SymDense, error) {
	return spectral(a, func(v float64) float64 {
		if v <= 0 {
			return 0
		}
		return 1 / v
	})
}

// positivePart is [A]^+: negative eigenvalues clamped to zero.
func positivePart(a mat.Symmetric) (*mat.SymDense, error) {
	return spectral(a, func(v float64) float64 { return math.Max(v, 0) })
}

// sampleCov is the unbiased sample covariance of the rows of x
// (eq: GCMC, eq: est: ck before the noise correction).
func sampleCov(x *mat.Dense) (*mat.SymDense, error) {
	s, d := x.Dims()
	if s < 2 {
		return nil, ErrTooFewSamples
	}
	c := mat.NewSymDense(d, nil)
	stat.CovarianceMatrix(c, x, nil)
	return c, nil
}

// shiftDiag returns a + c·I.
func shiftDiag(a mat.Symmetric, c float64) *mat.SymDense {
	out := mat.NewSymDense(a.SymmetricDim(), nil)
	out.CopySym(a)
	for i := 0; i < out.SymmetricDim(); i++ {
		out.SetSym(i, i, out.At(i, i)+c)
	}
	return out
}
