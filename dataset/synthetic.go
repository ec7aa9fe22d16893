package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// ThetaStar5 is the paper's ground-truth parameter θ* of the d = 5 synthetic
// probit data set (Sec. VI-B). Its norm is ‖θ*‖ ≈ 2.0862.
var ThetaStar5 = [5]float64{0.1103, -0.5832, 0.6417, 1.8279, 0.4968}

// ThetaStar returns a ground-truth parameter θ* ∈ ℝ^d for synthetic probit
// data. For d = 5 it is the paper's ThetaStar5. The paper gives no θ* for its
// d = 300 data set, so for d ≠ 5 ThetaStar uses the fixed formula
//
//	θ*_j = c·(−1)^{j+1}/√j,  j = 1, …, d,
//
// with c chosen so that ‖θ*‖ = ‖ThetaStar5‖. Every coordinate is informative
// (alternating signs, slow decay, none zero), and because u ~ N(0, I_d) the
// margin θ*ᵀu ~ N(0, ‖θ*‖²) has the same law as for d = 5: labels are
// balanced (P(v = 1) = 1/2 exactly), and the Bayes error of the sign rule,
// arccos(‖θ*‖/√(1+‖θ*‖²))/π ≈ 0.142, is that of the d = 5 data, so the classes
// overlap (not separable) yet the labels carry the same signal. It panics if
// d < 1.
func ThetaStar(d int) []float64 {
	if d < 1 {
		panic(fmt.Sprintf("dataset: ThetaStar dimension %d < 1", d))
	}
	if d == len(ThetaStar5) {
		return append([]float64(nil), ThetaStar5[:]...)
	}
	theta := make([]float64, d)
	for j := range theta {
		theta[j] = 1 / math.Sqrt(float64(j+1))
		if j%2 == 1 {
			theta[j] = -theta[j]
		}
	}
	floats.Scale(floats.Norm(ThetaStar5[:], 2)/floats.Norm(theta, 2), theta)
	return theta
}

// Synthetic draws n data points of the probit model (eq: probit model):
// u_n ~ N(0, I_d) and v_n ~ Bernoulli(Φ(θᵀu_n)), with d = len(theta). Each
// point uses d normal draws for u_n then one uniform draw for v_n from rng.
// It panics if n < 1 or theta is empty.
func Synthetic(rng *rand.Rand, theta []float64, n int) Set {
	d := len(theta)
	if n < 1 || d < 1 {
		panic(fmt.Sprintf("dataset: Synthetic with n = %d, d = %d (need both ≥ 1)", n, d))
	}
	s := Set{U: mat.NewDense(n, d, nil), V: make([]float64, n)}
	for i := range n {
		u := s.U.RawRowView(i)
		for j := range u {
			u[j] = rng.NormFloat64()
		}
		if rng.Float64() < distuv.UnitNormal.CDF(floats.Dot(theta, u)) {
			s.V[i] = 1
		}
	}
	return s
}
