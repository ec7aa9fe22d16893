package sampler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"wcmc/model"
)

// moments returns the sample mean, variance and fourth central moment.
func moments(x []float64) (mean, vr, m4 float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		d := (v - mean) * (v - mean)
		vr += d
		m4 += d * d
	}
	return mean, vr / float64(len(x)-1), m4 / float64(len(x))
}

// TestStdNormalAboveMoments compares the sample mean and variance of
// X ~ N(0,1) | X > a with the closed forms
//
//	E[X] = μ_a = φ(a)/(1−Φ(a)) = λ(−a),  Var[X] = 1 + aμ_a − μ_a² = 1 − μ_a(μ_a − a),
//
// for a in each branch of the sampler and in the far tail. Tolerance: 5
// Monte Carlo standard errors, √(Var/n) for the mean and √((m₄ − Var²)/n)
// for the variance (m₄ estimated from the sample).
func TestStdNormalAboveMoments(t *testing.T) {
	const n = 200000
	x := make([]float64, n)
	for i, a := range []float64{-2, -0.3, 0, 0.1, halfNormalMax, 0.5, 2, 8, 40} {
		rng := rand.New(rand.NewPCG(11, uint64(i)))
		for j := range x {
			x[j] = StdNormalAbove(rng, a)
			if !(x[j] > a) || math.IsInf(x[j], 0) {
				t.Fatalf("a=%v: draw %v not in (a, ∞)", a, x[j])
			}
		}
		mu := model.InvMills(-a)
		wantVar := 1 - mu*(mu-a)
		mean, vr, m4 := moments(x)
		seMean := math.Sqrt(wantVar / n)
		seVar := math.Sqrt((m4 - vr*vr) / n)
		if math.Abs(mean-mu) > 5*seMean {
			t.Errorf("a=%v: mean %.10g, want %.10g (SE %.2g)", a, mean, mu, seMean)
		}
		if math.Abs(vr-wantVar) > 5*seVar {
			t.Errorf("a=%v: variance %.10g, want %.10g (SE %.2g)", a, vr, wantVar, seVar)
		}
	}
}

// TestTruncNormal checks the latent draw of eq: sample latent variable:
// support and mean μ + λ(μ) (positive side) or μ − λ(−μ) (negative side),
// within 5 standard errors.
func TestTruncNormal(t *testing.T) {
	const n = 100000
	rng := rand.New(rand.NewPCG(12, 0))
	x := make([]float64, n)
	for _, mu := range []float64{-3, 0.4, 25} {
		for _, pos := range []bool{true, false} {
			for j := range x {
				x[j] = TruncNormal(rng, mu, pos)
				if (pos && !(x[j] > 0)) || (!pos && x[j] > 0) {
					t.Fatalf("μ=%v positive=%v: draw %v on the wrong side", mu, pos, x[j])
				}
			}
			a, want := -mu, mu+model.InvMills(mu)
			if !pos {
				a, want = mu, mu-model.InvMills(-mu)
			}
			lam := model.InvMills(-a)
			se := math.Sqrt((1 - lam*(lam-a)) / n)
			if mean, _, _ := moments(x); math.Abs(mean-want) > 5*se {
				t.Errorf("μ=%v positive=%v: mean %v, want %v (SE %.2g)", mu, pos, mean, want, se)
			}
		}
	}
}

func TestStdNormalAboveNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	if a := testing.AllocsPerRun(100, func() {
		for _, a := range []float64{-1, 0.1, 3, 40} {
			StdNormalAbove(rng, a)
		}
	}); a != 0 {
		t.Errorf("%v allocations", a)
	}
}

func BenchmarkTruncNormal(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	b.Run("NormFloat64", func(b *testing.B) {
		b.ReportAllocs()
		var s float64
		for i := 0; i < b.N; i++ {
			s += rng.NormFloat64()
		}
		_ = s
	})
	for _, a := range []float64{-1, 0, 0.1, 1, 40} {
		b.Run(fmt.Sprintf("a=%v", a), func(b *testing.B) {
			b.ReportAllocs()
			var s float64
			for i := 0; i < b.N; i++ {
				s += StdNormalAbove(rng, a)
			}
			_ = s
		})
	}
}
