// Package metric measures how well samples approximate a global posterior:
// the second-order test error of eq: err2, the predictive KL divergence of
// eq: KL divergence, and the uncertainty metrics err2 cannot see (the mean's
// error in posterior standard deviations, the relative covariance error,
// the reference mass in the samples' 90% intervals and the relative W₂
// distance of Gaussian fits; docs/MATH.md note 18).
package metric

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// SecondMoment returns (1/S) Σ_s θ_s θ_sᵀ for the rows θ_s of theta: the
// sample averages of the test functions f_ij(θ) = θ[i]θ[j].
func SecondMoment(theta *mat.Dense) *mat.SymDense {
	s, d := theta.Dims()
	m := mat.NewSymDense(d, nil)
	m.SymOuterK(1/float64(s), theta.T())
	return m
}

// Err2 is the second-order test error of eq: err2,
//
//	err = (1/d²) Σ_{i,j} |M̂_ij − R_ij| / |R_ij|,
//
// with M̂ the second moment of the samples theta and R the reference second
// moment (exact E[θθᵀ] of the global posterior, or the average over S_g
// reference samples). Entries with R_ij = 0, where the relative error is
// undefined, are left out of the average; if all are zero it is an error.
func Err2(theta *mat.Dense, ref mat.Symmetric) (float64, error) {
	return Err2Moment(SecondMoment(theta), ref)
}

// Err2Moment is Err2 with the samples' second moment M̂ given directly (an
// exact moment, e.g. of a learned map on fresh Gaussian signals).
func Err2Moment(m, ref mat.Symmetric) (float64, error) {
	d := m.SymmetricDim()
	if ref.SymmetricDim() != d {
		return 0, fmt.Errorf("err2: samples have d = %d, reference has %d", d, ref.SymmetricDim())
	}
	var sum float64
	var n int
	for i := range d {
		for j := range d {
			r := ref.At(i, j)
			if r == 0 {
				continue
			}
			sum += math.Abs(m.At(i, j)-r) / math.Abs(r)
			n++
		}
	}
	if n == 0 {
		return 0, errors.New("err2: reference second moment is identically zero")
	}
	e := sum / float64(n)
	if math.IsNaN(e) || math.IsInf(e, 0) {
		return 0, fmt.Errorf("err2 is %v (samples not finite?)", e)
	}
	return e, nil
}

// BernoulliKL is KL(Bern(p) ‖ Bern(q)) = p log(p/q) + (1−p) log((1−p)/(1−q)),
// with 0·log 0 = 0. It is +Inf when q puts zero mass where p does not.
func BernoulliKL(p, q float64) float64 {
	return xlogxy(p, q) + xlogxy(1-p, 1-q)
}

// probResolution is 2⁻⁵³, the gap between 1 and the float64 just below it.
const probResolution = 0x1p-53

func clampProb(x float64) float64 {
	return min(max(x, probResolution), 1-probResolution)
}

func xlogxy(x, y float64) float64 {
	if x == 0 {
		return 0
	}
	return x * math.Log(x/y)
}

// PredictiveKL is eq: KL divergence: the mean over test points of
// KL(p̂_i ‖ p̂_g,i), where p[i] and ref[i] are the ensemble predictive
// probabilities p(v=1|u_i) (eq: pred dist1) of the samples under test and
// of the reference samples.
//
// An ensemble mean of Φ rounds to exactly 1 once every margin exceeds about
// 8.3, although the true probability is below 1; an unguarded KL would then be
// +Inf for a difference float64 cannot resolve. Both probabilities are
// therefore clamped to [ε, 1−ε] with ε = 2⁻⁵³, the spacing of float64 just
// below 1, which bounds each term by about (1−p)·37 nats.
func PredictiveKL(p, ref []float64) (float64, error) {
	if len(p) != len(ref) || len(p) == 0 {
		return 0, fmt.Errorf("predictive KL: %d and %d test points", len(p), len(ref))
	}
	var sum float64
	for i := range p {
		sum += BernoulliKL(clampProb(p[i]), clampProb(ref[i]))
	}
	kl := sum / float64(len(p))
	if math.IsNaN(kl) {
		return 0, errors.New("predictive KL is NaN (probabilities outside [0,1]?)")
	}
	return kl, nil
}
