package dataset

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/stat/distuv"
)

// probPositiveOne returns P(v = 1, θᵀu > 0) = E[Φ(m) 1{m > 0}] for
// m ~ N(0, σ²), by Gauss–Legendre quadrature on [0, 12σ].
func probPositiveOne(sigma float64) float64 {
	f := func(m float64) float64 {
		return distuv.UnitNormal.CDF(m) * distuv.UnitNormal.Prob(m/sigma) / sigma
	}
	return quad.Fixed(f, 0, 12*sigma, 200, quad.Legendre{}, 0)
}

func TestThetaStar(t *testing.T) {
	want5 := 2.0862 // √(Σ θ*_j²) of the paper's θ*
	if n := floats.Norm(ThetaStar5[:], 2); math.Abs(n-want5) > 1e-4 {
		t.Fatalf("‖ThetaStar5‖ = %v, want %v", n, want5)
	}
	if got := ThetaStar(5); !floats.Equal(got, ThetaStar5[:]) {
		t.Fatalf("ThetaStar(5) = %v, want the paper's %v", got, ThetaStar5)
	}
	for _, d := range []int{1, 3, 300} {
		th := ThetaStar(d)
		if len(th) != d || math.Abs(floats.Norm(th, 2)-floats.Norm(ThetaStar5[:], 2)) > 1e-12 {
			t.Errorf("ThetaStar(%d): length %d, norm %v, want the norm of ThetaStar5", d, len(th), floats.Norm(th, 2))
		}
		for j := 1; j < d; j++ {
			if th[j]*th[j-1] >= 0 || math.Abs(th[j]) >= math.Abs(th[j-1]) {
				t.Fatalf("ThetaStar(%d) not alternating and decaying at %d: %v, %v", d, j, th[j-1], th[j])
			}
		}
	}
	a, b := ThetaStar(300), ThetaStar(300)
	a[0] = 99
	if b[0] == 99 || ThetaStar(5)[0] != ThetaStar5[0] {
		t.Fatal("ThetaStar returns shared memory")
	}
}

// TestSyntheticLabels checks, for the paper's θ* (d = 5) and ThetaStar(300),
// three label statistics against their exact values under eq: probit model
// with u ~ N(0, I) and margin m = θᵀu ~ N(0, ‖θ‖²):
//
//	P(v = 1) = E[Φ(m)] = 1/2,
//	P(v = 1 | m > 0) = 2·E[Φ(m)1{m>0}] (quadrature) = 1 − arccos(ρ)/π, ρ = ‖θ‖/√(1+‖θ‖²),
//	E[v u] = E[Φ(θᵀu) u] = θ/√(2π(1+‖θ‖²))   (Stein's lemma).
//
// Tolerances are 4.5 Monte Carlo standard errors of each estimate (the
// binomial SE √(p(1−p)/n), or the sample SD of v·u_j over √n), which keeps
// the family of up to 302 checks at a small false-alarm rate.
func TestSyntheticLabels(t *testing.T) {
	for _, tc := range []struct {
		theta []float64
		n     int
	}{
		{ThetaStar5[:], 200000},
		{ThetaStar(300), 20000},
	} {
		d := len(tc.theta)
		rng := rand.New(rand.NewPCG(1, uint64(d)))
		s := Synthetic(rng, tc.theta, tc.n)
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		if s.Len() != tc.n || s.Dim() != d {
			t.Fatalf("d=%d: size %d×%d", d, s.Len(), s.Dim())
		}
		norm := floats.Norm(tc.theta, 2)

		// P(v = 1).
		p1 := floats.Sum(s.V) / float64(tc.n)
		if se := math.Sqrt(0.25 / float64(tc.n)); math.Abs(p1-0.5) > 4.5*se {
			t.Errorf("d=%d: P(v=1) = %v, want 0.5 ± %v", d, p1, 4.5*se)
		}

		// P(v = 1 | m > 0): quadrature against the closed form, then MC.
		want := 2 * probPositiveOne(norm)
		closed := 1 - math.Acos(norm/math.Sqrt(1+norm*norm))/math.Pi
		if math.Abs(want-closed) > 1e-10 {
			t.Fatalf("d=%d: quadrature %v vs closed form %v", d, want, closed)
		}
		var pos, posOne float64
		for i := range tc.n {
			if floats.Dot(tc.theta, s.U.RawRowView(i)) > 0 {
				pos++
				posOne += s.V[i]
			}
		}
		got := posOne / pos
		if se := math.Sqrt(want * (1 - want) / pos); math.Abs(got-want) > 4.5*se {
			t.Errorf("d=%d: P(v=1 | θᵀu>0) = %v, want %v ± %v", d, got, want, 4.5*se)
		}

		// E[v u] per coordinate.
		c := 1 / math.Sqrt(2*math.Pi*(1+norm*norm))
		vu := make([]float64, tc.n)
		for j := range d {
			for i := range tc.n {
				vu[i] = s.V[i] * s.U.At(i, j)
			}
			mean := floats.Sum(vu) / float64(tc.n)
			var ss float64
			for _, x := range vu {
				ss += (x - mean) * (x - mean)
			}
			se := math.Sqrt(ss / float64(tc.n-1) / float64(tc.n))
			if math.Abs(mean-c*tc.theta[j]) > 4.5*se {
				t.Errorf("d=%d: E[v u_%d] = %v, want %v ± %v", d, j, mean, c*tc.theta[j], 4.5*se)
			}
		}
	}
}

func TestSyntheticDeterministic(t *testing.T) {
	a := Synthetic(rand.New(rand.NewPCG(7, 7)), ThetaStar5[:], 50)
	b := Synthetic(rand.New(rand.NewPCG(7, 7)), ThetaStar5[:], 50)
	if !floats.Equal(a.U.RawMatrix().Data, b.U.RawMatrix().Data) || !floats.Equal(a.V, b.V) {
		t.Fatal("same seed, different data")
	}
}

func BenchmarkSynthetic(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	theta := ThetaStar(300)
	b.ReportAllocs()
	for b.Loop() {
		Synthetic(rng, theta, 1000)
	}
}
