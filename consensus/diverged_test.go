package consensus

import (
	"errors"
	"math"
	"testing"
)

// TestFitDiverged: SGD with η = 1e10 ended at objective 1.48e18 from 184.9
// and was reported as success; a rise by orders of magnitude or a
// non-finite end is divergence, a decrease or a small rise is not.
func TestFitDiverged(t *testing.T) {
	for _, c := range []struct {
		obj      []float64
		grad     float64
		diverged bool
	}{
		{[]float64{184.9, 1.48e18}, 1, true},
		{[]float64{184.9, math.Inf(1)}, 1, true},
		{[]float64{184.9, 100}, math.NaN(), true},
		{[]float64{-3, 200}, 1, true},
		{[]float64{184.9, 100}, 1, false},
		{[]float64{184.9, 190}, 1, false},
		{[]float64{0.01, 5}, 1, false},
	} {
		f := &Fit{Method: SGD{Step: 1e10}, Objective: c.obj, GradNorm: c.grad}
		err := f.Diverged()
		if got := errors.Is(err, ErrDiverged); got != c.diverged {
			t.Errorf("objective %v, gradient norm %v: Diverged() = %v, want diverged %v", c.obj, c.grad, err, c.diverged)
		}
	}
}
