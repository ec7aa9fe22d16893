package experiment

import (
	"gonum.org/v1/gonum/mat"

	"wcmc/diagnostics"
)

// workerDiagnostics summarises the convergence of each worker's chain
// (diagnostics.SummarizeChains on its S draws, split in two halves): per
// worker the largest split-R̂ and the smallest bulk and tail ESS over the
// parameters, and which workers miss diagnostics.Recommended (R̂ > 1.01 or
// an ESS < 400). It goes into the task's results JSON under "workers".
func workerDiagnostics(samples []*mat.Dense) (map[string]any, error) {
	k := len(samples)
	maxRhat := make([]float64, k)
	minBulk := make([]float64, k)
	minTail := make([]float64, k)
	var flagged []any
	for w, s := range samples {
		sums, err := diagnostics.SummarizeChains([]*mat.Dense{s})
		if err != nil {
			return nil, err
		}
		below := false
		for j, su := range sums {
			if j == 0 || su.Rhat > maxRhat[w] {
				maxRhat[w] = su.Rhat
			}
			if j == 0 || su.ESSBulk < minBulk[w] {
				minBulk[w] = su.ESSBulk
			}
			if j == 0 || su.ESSTail < minTail[w] {
				minTail[w] = su.ESSTail
			}
			below = below || len(diagnostics.Recommended.Failures(su)) > 0
		}
		if below {
			flagged = append(flagged, w+1)
		}
	}
	return map[string]any{
		"max_rhat":          maxRhat,
		"min_ess_bulk":      minBulk,
		"min_ess_tail":      minTail,
		"below_recommended": flagged,
		"recommended":       map[string]any{"max_rhat": diagnostics.Recommended.MaxRhat, "min_ess": diagnostics.Recommended.MinESS},
	}, nil
}
