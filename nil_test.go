package wcmc_test

import (
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc"
)

// TestEvaluateNil: Evaluate(x, nil, nil) was a nil-pointer panic.
func TestEvaluateNil(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 7})
	for _, c := range [][2]*mat.Dense{{x, nil}, {nil, x}, {nil, nil}} {
		if _, err := wcmc.Evaluate(c[0], c[1], nil); err == nil || !strings.Contains(err.Error(), "must not be nil") {
			t.Errorf("Evaluate(%v, %v, nil): %v, want a nil error", c[0] != nil, c[1] != nil, err)
		}
	}
}
