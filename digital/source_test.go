package digital

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"
)

// gaussian draws s rows of N(mean, cov).
func gaussian(rng *rand.Rand, s int, mean []float64, cov mat.Symmetric) *mat.Dense {
	n, ok := distmv.NewNormal(mean, cov, rng)
	if !ok {
		panic("covariance not positive definite")
	}
	x := mat.NewDense(s, len(mean), nil)
	for i := range s {
		n.Rand(x.RawRowView(i))
	}
	return x
}

// equicorrelated is (1 − ρ) I + ρ 11ᵀ.
func equicorrelated(d int, rho float64) *mat.SymDense {
	c := mat.NewSymDense(d, nil)
	for i := range d {
		c.SetSym(i, i, 1-rho)
	}
	ones := mat.NewVecDense(d, nil)
	for i := range d {
		ones.SetVec(i, 1)
	}
	c.SymRankOne(c, rho, ones)
	return c
}

func TestReverseWaterFillByHand(t *testing.T) {
	vars := []float64{4, 1, 0.25}
	for _, c := range []struct {
		rate, level, bound float64
		dist, bits         []float64
	}{
		// m = 2 active: log2 γ = (2 + 0 − 4)/2 = −1, and 0.25 ≤ γ < 1.
		{2, 0.5, 1.25, []float64{0.5, 0.5, 0.25}, []float64{1.5, 0.5, 0}},
		// m = 3: log2 γ = (2 + 0 − 2 − 12)/3 = −4.
		{6, 1.0 / 16, 3.0 / 16, []float64{1.0 / 16, 1.0 / 16, 1.0 / 16}, []float64{3, 2, 1}},
		// m = 1: γ = 4·2^{−1} = 2 ≥ λ_2 = 1.
		{0.5, 2, 3.25, []float64{2, 1, 0.25}, []float64{0.5, 0, 0}},
		// Rate 0: nothing coded, D = λ.
		{0, 4, 5.25, []float64{4, 1, 0.25}, []float64{0, 0, 0}},
	} {
		a := reverseWaterFill(vars, c.rate)
		if math.Abs(a.Level-c.level) > 1e-12 || math.Abs(a.Bound()-c.bound) > 1e-12 ||
			!floats.EqualApprox(a.Distortion, c.dist, 1e-12) || !floats.EqualApprox(a.Bits, c.bits, 1e-12) {
			t.Errorf("rate %v: γ = %v, D = %v, bits = %v, bound %v; want γ = %v, D = %v, bits = %v, bound %v",
				c.rate, a.Level, a.Distortion, a.Bits, a.Bound(), c.level, c.dist, c.bits, c.bound)
		}
	}
}

func TestReverseWaterFillSumsToRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 50 {
		d := 1 + trial%6
		vars := make([]float64, d)
		for i := range vars {
			vars[i] = math.Exp(4 * rng.NormFloat64())
		}
		sort.Sort(sort.Reverse(sort.Float64Slice(vars)))
		if trial%5 == 0 && d > 1 {
			vars[d-1] = 0 // a direction without variance takes no bits
		}
		for _, rate := range []float64{0.01, 0.7, 3, 40, 900} {
			a := reverseWaterFill(vars, rate)
			if got := floats.Sum(a.Bits); math.Abs(got-rate) > 1e-9*rate {
				t.Fatalf("λ = %v, rate %v: bits sum to %v", vars, rate, got)
			}
			for i, v := range vars {
				if a.Distortion[i] != math.Min(v, a.Level) || a.Bits[i] < 0 {
					t.Fatalf("λ = %v, rate %v: D_%d = %v, bits %v, γ = %v", vars, rate, i, a.Distortion[i], a.Bits[i], a.Level)
				}
			}
		}
	}
}

func TestForwardWaterFillByHand(t *testing.T) {
	c := []float64{4, 1, 2}
	for _, tc := range []struct{ e, bits float64 }{
		{1, 0.5},                        // ν = 2: only the best channel
		{5, 1.5},                        // ν = 4: two channels, ½log2 4 + ½log2 2
		{9, math.Log2(16*8*4/27.0) / 2}, // ν = 16/3: all three
	} {
		if got := forwardWaterFill(c, tc.e); math.Abs(got-tc.bits) > 1e-12 {
			t.Errorf("energy %v: %v bits, want %v", tc.e, got, tc.bits)
		}
	}
}

func TestSourceDecomposition(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	mean := []float64{1, -2, 0.5}
	x := gaussian(rng, 300, mean, equicorrelated(3, 0.6))
	src, err := NewSource(x)
	if err != nil {
		t.Fatal(err)
	}
	// U is orthonormal and U diag(λ) Uᵀ is the 1/S covariance.
	var utu mat.Dense
	utu.Mul(src.Basis.T(), src.Basis)
	if !mat.EqualApprox(&utu, eye(3), 1e-12) {
		t.Fatalf("UᵀU = %v", mat.Formatted(&utu))
	}
	var cov, rebuilt mat.Dense
	c := centred(x, src.Mean)
	cov.Mul(c.T(), c)
	cov.Scale(1.0/300, &cov)
	rebuilt.Mul(src.Basis, mat.NewDiagDense(3, src.Var))
	rebuilt.Mul(&rebuilt, src.Basis.T())
	if !mat.EqualApprox(&cov, &rebuilt, 1e-12) {
		t.Fatalf("U diag(λ) Uᵀ = %v, covariance %v", mat.Formatted(&rebuilt), mat.Formatted(&cov))
	}
	if !(src.Var[0] >= src.Var[1] && src.Var[1] >= src.Var[2]) {
		t.Fatalf("variances not decreasing: %v", src.Var)
	}
	if back := src.FromCoords(src.Coords()); !mat.EqualApprox(back, x, 1e-12) {
		t.Fatal("FromCoords(Coords()) does not return the samples")
	}
}

func eye(d int) *mat.Dense {
	m := mat.NewDense(d, d, nil)
	for i := range d {
		m.Set(i, i, 1)
	}
	return m
}
