package sampler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/wcmc-project/wcmc/model"
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

// TestDrawLatent checks the batched latent draws of eq: sample latent
// variable on margins in every class of the rounds (a = −s·m ≤ −0.5, in
// (−0.5, 0], (0, 0.257), ≥ 0.257 and far tails), interleaved so that each
// chunk mixes classes: support, and mean m + s·λ(s·m) within 5 standard
// errors √(Var/n) (Var = 1 − λ(λ − a) for X | X > a). NaN margins give NaN.
func TestDrawLatent(t *testing.T) {
	const n = 20000
	type cls struct{ m, s float64 }
	var cs []cls
	for _, m := range []float64{-3, -0.4, -0.1, 0, 0.2, 1.5, 30} {
		cs = append(cs, cls{m, 1}, cls{m, -1})
	}
	kappa := make([]float64, n*len(cs))
	sign := make([]float64, len(kappa))
	for i := range kappa {
		c := cs[i%len(cs)]
		kappa[i], sign[i] = c.m, c.s
	}
	rng := rand.New(rand.NewPCG(13, 0))
	DrawLatent(rng, kappa, sign)
	for k, c := range cs {
		a := -c.s * c.m
		lam := model.InvMills(-a) // E[X | X > a]
		se := math.Sqrt((1 - lam*(lam-a)) / n)
		var mean float64
		for i := k; i < len(kappa); i += len(cs) {
			x := kappa[i]
			if (c.s > 0 && !(x > 0)) || (c.s < 0 && x > 0) {
				t.Fatalf("m=%v s=%v: draw %v on the wrong side", c.m, c.s, x)
			}
			mean += (x - c.m) * c.s
		}
		mean /= n
		if math.Abs(mean-lam) > 5*se {
			t.Errorf("m=%v s=%v: E[s(κ−m)] = %v, want %v (SE %.2g)", c.m, c.s, mean, lam, se)
		}
	}
	k := []float64{math.NaN(), 1}
	DrawLatent(rng, k, []float64{1, -1})
	if !math.IsNaN(k[0]) || !(k[1] <= 0) {
		t.Errorf("NaN margin: got %v", k)
	}
	if a := testing.AllocsPerRun(10, func() { DrawLatent(rng, kappa[:1000], sign) }); a != 0 {
		t.Errorf("%v allocations", a)
	}
}
