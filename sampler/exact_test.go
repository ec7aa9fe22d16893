package sampler

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestExactGaussian(t *testing.T) {
	c := mat.NewSymDense(3, []float64{
		2, 0.6, -0.3,
		0.6, 1, 0.2,
		-0.3, 0.2, 0.5,
	})
	var chol mat.Cholesky
	if !chol.Factorize(c) {
		t.Fatal("not positive definite")
	}
	mu := []float64{1, -2, 0.5}
	const n = 50000
	dst := mat.NewDense(n, 3, nil)
	ExactGaussian(rand.New(rand.NewPCG(31, 0)), dst, mu, &chol)
	checkGaussianMoments(t, dst, mu, c, n)
}
