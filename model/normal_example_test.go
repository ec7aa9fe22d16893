package model_test

import (
	"fmt"

	"github.com/wcmc-project/wcmc/model"
)

// The probit terms stay finite far in the tails, where Φ(x) underflows.
func ExampleLogPhi() {
	for _, x := range []float64{-40, 0, 40} {
		fmt.Printf("log Φ(%v) = %.6f, φ/Φ = %.6f\n", x, model.LogPhi(x), model.InvMills(x))
	}
	// Output:
	// log Φ(-40) = -804.608442, φ/Φ = 40.024969
	// log Φ(0) = -0.693147, φ/Φ = 0.797885
	// log Φ(40) = -0.000000, φ/Φ = 0.000000
}
