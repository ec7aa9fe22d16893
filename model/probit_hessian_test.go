package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
)

var (
	_ Curved = (*Probit)(nil)
	_ Curved = (*Gaussian)(nil)
)

func TestNegHessiansMatchNegHessianAndDifferences(t *testing.T) {
	// S = 3000 samples and N = 700 points: the data tiles are 349 rows
	// (max(256, 2^20/3000)), so the tiling is exercised, and the rows
	// spread the margins from the left tail to the right one; d = 3 takes
	// the row path (d ≤ rowsMaxDim), d = 7 the two products.
	for _, d := range []int{3, 7} {
		rng := rand.New(rand.NewPCG(5, uint64(d)))
		const n, s = 700, 3000
		ts := make([]float64, d)
		for j := range ts {
			ts[j] = rng.NormFloat64()
		}
		u, v := probitData(rng, n, ts)
		p, _ := NewProbit(u, v, 2)
		theta := mat.NewDense(s, d, nil)
		for i := range s {
			for j := range d {
				theta.Set(i, j, 3*rng.NormFloat64()/math.Sqrt(float64(d)))
			}
		}
		pk := d * (d + 1) / 2
		h := mat.NewDense(s, pk, nil)
		p.NegHessians(h, theta)
		q := p.Clone()
		for i := 0; i < s; i += 131 {
			th := theta.RawRowView(i)
			want := q.NegHessian(th)
			// Central differences of the gradient, step 1e-5: error
			// ≈ h²·|∇³| + ε|∇|/h ≲ 1e-6 relative on entries of order N/10.
			num := mat.NewDense(d, d, nil)
			fd.Jacobian(num, func(g, x []float64) {
				gr := mat.NewDense(1, d, nil)
				q.GradLogJoint(gr, mat.NewDense(1, d, x))
				copy(g, gr.RawRowView(0))
			}, th, &fd.JacobianSettings{Formula: fd.Central, Step: 1e-5})
			for a := range d {
				for b := a; b < d; b++ {
					got := h.At(i, PackedIndex(d, a, b))
					if !scalar.EqualWithinAbsOrRel(got, want.At(a, b), 1e-10, 1e-12) {
						t.Fatalf("d = %d, sample %d (%d,%d): packed %v, NegHessian %v", d, i, a, b, got, want.At(a, b))
					}
					if !scalar.EqualWithinAbsOrRel(got, -num.At(a, b), 1e-5, 1e-6) {
						t.Fatalf("d = %d, sample %d (%d,%d): packed %v, −finite differences %v", d, i, a, b, got, -num.At(a, b))
					}
				}
			}
		}
	}
}

func TestGaussianNegHessiansArePrecision(t *testing.T) {
	cov := mat.NewSymDense(2, []float64{2, 0.5, 0.5, 1})
	g, err := NewGaussian([]float64{1, -1}, cov)
	if err != nil {
		t.Fatal(err)
	}
	h := mat.NewDense(3, 3, nil)
	g.NegHessians(h, mat.NewDense(3, 2, []float64{0, 0, 1, 2, -3, 4}))
	// C^{-1} = [1 −0.5; −0.5 2]/1.75.
	want := []float64{1 / 1.75, -0.5 / 1.75, 2 / 1.75}
	for r := range 3 {
		for j, w := range want {
			if !scalar.EqualWithinRel(h.At(r, j), w, 1e-14) {
				t.Fatalf("row %d: %v, want %v", r, h.RawRowView(r), want)
			}
		}
	}
}
