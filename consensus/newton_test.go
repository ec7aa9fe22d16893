package consensus

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/model"
)

// newtonCases are probit problems small enough for finite differences:
// NOMA (r = m_r = 6), OMA whose signals span every receive dimension
// (r = 3·6 = 18 ≤ S = 40), and OMA with S = 10 < 18 (whitening keeps the
// unspanned part of the map at its start value, base ≠ 0).
var newtonCases = []probitCase{
	{channel.NOMA, 200, 3, 40, 3, 2},
	{channel.OMA, 200, 3, 40, 3, 2},
	{channel.OMA, 200, 3, 10, 3, 2},
}

func TestNewtonHessianMatchesFiniteDifferences(t *testing.T) {
	// The Hessian in whitened coordinates against central differences of
	// the whitened gradient (itself checked against differences of L̃ in
	// TestWhitenedGradientMatchesFiniteDifferences). With step h = 1e-7
	// the truncation error is ≈ h²|∇³L̃| (largest in the unspanned case,
	// where entries of 1e4 still move by 1e-1 from h = 1e-6 to 1e-7, so by
	// ≲ 1e-3 at 1e-7) and the rounding error ≈ ε|∇L̃|/h ≲ 1e-6: entries
	// agree to ≲ 1e-6 of the largest (≈ 6e6).
	for _, c := range newtonCases {
		t.Run(c.String(), func(t *testing.T) {
			rx, p, m := c.build(t)
			v, err := NewVariational(rx, p)
			if err != nil {
				t.Fatal(err)
			}
			w, err := newWhitened(rx, m)
			if err != nil {
				t.Fatal(err)
			}
			h := newHessian(v, w, p)
			n := w.d * w.r
			ana := mat.NewSymDense(n, nil)
			if err := h.eval(ana, m); err != nil {
				t.Fatal(err)
			}
			probe, g := m.Clone(), m.Clone()
			num := mat.NewDense(n, n, nil)
			fd.Jacobian(num, func(dst, x []float64) {
				w.toMap(probe, x)
				if err := v.Gradient(g, probe, nil); err != nil {
					t.Fatal(err)
				}
				copy(dst, w.pullback(nil, g))
			}, w.fromMap(m), &fd.JacobianSettings{Formula: fd.Central, Step: 1e-7})
			scale := mat.Norm(num, math.Inf(1))
			for i := range n {
				for j := range n {
					if d := math.Abs(ana.At(i, j) - num.At(i, j)); d > 1e-6*scale {
						t.Fatalf("entry (%d,%d): Hessian %g, finite differences %g (scale %g)", i, j, ana.At(i, j), num.At(i, j), scale)
					}
				}
			}
		})
	}
}

func TestNewtonReachesTheStationaryPointOfLBFGS(t *testing.T) {
	// Newton and the whitened L-BFGS it replaces in Converged, from the
	// same start with the same stopping rule, on signals that span every
	// receive dimension: both gradient norms (recomputed here from the
	// returned maps) are below the tolerance, Newton in fewer iterations,
	// and the objectives agree to 1e-9 relative. (The maps themselves can
	// differ by ≈ 1e-4 along the objective's nearly flat directions, where
	// a gradient of 1e-6 of its start value leaves them undetermined.)
	for _, c := range newtonCases[:2] {
		t.Run(c.String(), func(t *testing.T) {
			rx, p, _ := c.build(t)
			init, _, err := InitialMap(rx)
			if err != nil {
				t.Fatal(err)
			}
			// A tolerance tighter than the default, so that the two methods'
			// objectives must agree closely.
			const tol = 1e-6
			var fits [2]*Fit
			for i, s := range []Settings{Converged(0, tol), {Method: Newton{GradTol: tol}.FirstOrder(), Holdout: Off}} {
				if fits[i], err = WVCMC(context.Background(), rand.New(rand.NewPCG(1, 2)), rx, p, init, s); err != nil {
					t.Fatal(err)
				}
				f := fits[i]
				v, _ := NewVariational(rx, p)
				w, _ := newWhitened(rx, init)
				norm, err := v.gradNorm(f.Map, w)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: %v after %d iterations, %d evaluations, %d Hessians; ‖∇‖ %.3g → %.3g, L̃ %.12g",
					f.Method.Name(), f.Status, f.Iters, f.Evaluations, f.Hessians, f.StartGradNorm, norm, f.Objective[len(f.Objective)-1])
				if f.Status != GradientConverged || norm > tol*f.StartGradNorm {
					t.Fatalf("%s: status %v, relative gradient norm %g", f.Method.Name(), f.Status, norm/f.StartGradNorm)
				}
			}
			if fits[0].Method.Name() != NameNewton || fits[1].Method.Name() != NameLBFGS {
				t.Fatalf("methods %s, %s", fits[0].Method.Name(), fits[1].Method.Name())
			}
			if fits[0].Iters >= fits[1].Iters {
				t.Errorf("Newton took %d iterations, L-BFGS %d", fits[0].Iters, fits[1].Iters)
			}
			a, b := fits[0].Objective[len(fits[0].Objective)-1], fits[1].Objective[len(fits[1].Objective)-1]
			if math.Abs(a-b) > 1e-9*math.Abs(b) {
				t.Fatalf("objectives %.12g (Newton) and %.12g (L-BFGS)", a, b)
			}
		})
	}
}

func TestNewtonFallsBackToLBFGS(t *testing.T) {
	// Beyond MaxDim, on a target without Hessians, or on signals that do not
	// span every receive dimension, Newton runs its first-order form: the
	// very same run as Newton.FirstOrder.
	rx, p, _ := newtonCases[0].build(t)
	init, _, _ := InitialMap(rx)
	first, err := WVCMC(context.Background(), rand.New(rand.NewPCG(1, 2)), rx, p, init, Settings{Method: Newton{}.FirstOrder(), Holdout: Off})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		target model.Target
		method Newton
	}{
		{"MaxDim", p, Newton{MaxDim: 3*6 - 1}},
		{"not Curved", unfused{p}, Newton{}},
	} {
		fit, err := WVCMC(context.Background(), rand.New(rand.NewPCG(1, 2)), rx, c.target, init, Settings{Method: c.method, Holdout: Off})
		if err != nil {
			t.Fatal(err)
		}
		if fit.Method != first.Method || mapHash(fit.Map) != mapHash(first.Map) || fit.Hessians != 0 {
			t.Errorf("%s: ran %+v (%d Hessians), want %+v", c.name, fit.Method, fit.Hessians, first.Method)
		}
	}
	// OMA with S = 10 < K·m_r = 18: the signals do not span every receive
	// dimension.
	rx, p, _ = newtonCases[2].build(t)
	init, _, _ = InitialMap(rx)
	var fits [2]*Fit
	for i, m := range []Method{Newton{}, Newton{}.FirstOrder()} {
		if fits[i], err = WVCMC(context.Background(), rand.New(rand.NewPCG(1, 2)), rx, p, init, Settings{Method: m, Holdout: Off}); err != nil {
			t.Fatal(err)
		}
	}
	if fits[0].Unspanned == 0 || fits[0].Method != fits[1].Method || mapHash(fits[0].Map) != mapHash(fits[1].Map) {
		t.Errorf("unspanned signals: ran %+v (%d unspanned), want %+v", fits[0].Method, fits[0].Unspanned, fits[1].Method)
	}
}

func BenchmarkNewtonHessian(b *testing.B) {
	// One Hessian evaluation at the sizes of probit-snr (N = 8500, d = 5,
	// K = 20, T = 1000: NOMA S = 1000, r = 10; OMA S = 50, r = 50) next
	// to one value-and-gradient evaluation.
	for _, c := range []probitCase{
		{channel.NOMA, 8500, 5, 1000, 20, 2},
		{channel.OMA, 8500, 5, 50, 20, 2},
	} {
		rx, p, m := c.build(b)
		v, _ := NewVariational(rx, p)
		w, _ := newWhitened(rx, m)
		h := newHessian(v, w, p)
		dst := mat.NewSymDense(w.d*w.r, nil)
		g := m.Clone()
		b.Run(fmt.Sprintf("%v/Hessian", c), func(b *testing.B) {
			for range b.N {
				if err := h.eval(dst, m); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%v/ValueGrad", c), func(b *testing.B) {
			for range b.N {
				if _, err := v.ValueGrad(g, m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
