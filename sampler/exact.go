package sampler

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// ExactGaussian fills the S rows of dst (S×d) with independent draws from
// N(μ, C), where chol is the Cholesky factorization C = RᵀR (R upper
// triangular, as gonum stores it): θ_s = μ + Rᵀz_s, z_s ~ N(0, I), computed
// for all rows at once as dst = Z R + 1μᵀ (one in-place triangular product).
// The standard normals are drawn row by row from rng. It panics if
// len(mu) != d or dst does not have d columns.
func ExactGaussian(rng *rand.Rand, dst *mat.Dense, mu []float64, chol *mat.Cholesky) {
	d := chol.SymmetricDim()
	s, c := dst.Dims()
	if c != d || len(mu) != d {
		panic(mat.ErrShape)
	}
	raw := dst.RawMatrix()
	for i := 0; i < s; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+d]
		for j := range row {
			row[j] = rng.NormFloat64()
		}
	}
	var r mat.TriDense
	chol.UTo(&r)
	blas64.Trmm(blas.Right, blas.NoTrans, 1, r.RawTriangular(), raw)
	for i := 0; i < s; i++ {
		floats.Add(raw.Data[i*raw.Stride:i*raw.Stride+d], mu)
	}
}
