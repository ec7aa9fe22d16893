package consensus

import (
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// relTol is the eigenvalue threshold, relative to the largest eigenvalue,
// below which a symmetric matrix is treated as singular in that direction
// (docs/MATH.md note 5: A^{-1/2} and inverses act on the non-zero eigenvalues).
const relTol = 1e-12

// spectral returns U diag(f(λ)) Uᵀ for the symmetric a = U diag(λ) Uᵀ.
// Eigenvalues at or below relTol·max|λ| are passed to f as exactly 0.
func spectral(a mat.Symmetric, f func(float64) float64) *mat.SymDense {
	var eig mat.EigenSym
	if !eig.Factorize(a, true) {
		panic("consensus: symmetric eigendecomposition failed")
	}
	vals := eig.Values(nil)
	var u mat.Dense
	eig.VectorsTo(&u)
	var top float64
	for _, v := range vals {
		top = math.Max(top, math.Abs(v))
	}
	n := len(vals)
	out := mat.NewSymDense(n, nil)
	for i, v := range vals {
		if v <= relTol*top {
			v = 0
		}
		fv := f(v)
		if fv == 0 {
			continue
		}
		col := mat.Col(nil, i, &u)
		out.SymRankOne(out, fv, mat.NewVecDense(n, col))
	}
	return out
}

// pinv is the Moore–Penrose inverse of a positive semidefinite matrix.
func pinv(a mat.Symmetric) *mat.SymDense {
	return spectral(a, func(v float64) float64 {
		if v <= 0 {
			return 0
		}
		return 1 / v
	})
}

// positivePart is [A]^+: negative eigenvalues clamped to zero.
func positivePart(a mat.Symmetric) *mat.SymDense {
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
