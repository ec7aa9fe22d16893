package diagnostics_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/wcmc-project/wcmc/diagnostics"
)

// Four chains of a sampler that has not mixed: the fourth is stuck one
// standard deviation away from the others.
func ExampleSummarize() {
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([][]float64, 4)
	for c := range x {
		x[c] = make([]float64, 1000)
		for i := range x[c] {
			x[c][i] = rng.NormFloat64()
			if c == 3 {
				x[c][i]++
			}
		}
	}
	s := diagnostics.Summarize(x)
	fmt.Printf("R̂ = %.3f, bulk ESS = %.0f\n", s.Rhat, s.ESSBulk)
	for _, f := range diagnostics.Recommended.Failures(s) {
		fmt.Println(f)
	}
	// Output:
	// R̂ = 1.096, bulk ESS = 27
	// R̂ 1.096 > 1.01
	// bulk ESS 27 < 400
	// tail ESS 286 < 400
}
