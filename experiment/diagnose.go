package experiment

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/diagnostics"
)

// The convergence diagnostics recorded with a run
// (diagnostics.SummarizeChains on a posterior's chains, each split in two
// halves, so that with one chain R̂ compares its halves and with several
// it compares the chains too): per task under the info key "workers"
// (workerDiagnostics), once per run under the run info key "reference"
// (referenceDiagnostics). Package report reads both back
// (report.ConvergenceOf), by the keys below.

// workerDiagnostics summarises the convergence of each worker's chains
// (chains[w], the views of its S draws): per worker the largest split-R̂
// and the smallest bulk and tail ESS over the parameters, and which
// workers miss diagnostics.Recommended (R̂ > 1.01 or an ESS < 400). It
// goes into the task's results JSON under "workers", with "chains", the
// chains per worker, when there are several.
func workerDiagnostics(chains [][]*mat.Dense) (map[string]any, error) {
	k := len(chains)
	maxRhat := make([]float64, k)
	minBulk := make([]float64, k)
	minTail := make([]float64, k)
	var flagged []any
	for w, c := range chains {
		sums, err := diagnostics.SummarizeChains(c)
		if err != nil {
			return nil, err
		}
		var below []string
		maxRhat[w], minBulk[w], minTail[w], below = worst(sums)
		if len(below) > 0 {
			flagged = append(flagged, w+1)
		}
	}
	info := map[string]any{
		"max_rhat":          maxRhat,
		"min_ess_bulk":      minBulk,
		"min_ess_tail":      minTail,
		"below_recommended": flagged,
		"recommended":       recommended(),
	}
	if k > 0 && len(chains[0]) > 1 {
		info["chains"] = len(chains[0])
	}
	return info, nil
}

// referenceDiagnostics summarises the convergence of the reference chains
// (their draws, one per row, drawn by method): the largest split-R̂ and
// the smallest bulk and tail ESS over the parameters, and the parameters
// (theta[j], 1-based) that miss diagnostics.Recommended, with the number
// of chains and of draws per chain. The run's results JSON holds it under
// run_info.reference.
func referenceDiagnostics(chains []*mat.Dense, method string) (map[string]any, error) {
	sums, err := diagnostics.SummarizeChains(chains)
	if err != nil {
		return nil, err
	}
	draws, d := chains[0].Dims()
	maxRhat, minBulk, minTail, below := worst(sums)
	return map[string]any{
		"sampler":           method,
		"chains":            len(chains),
		"draws":             draws,
		"params":            d,
		"max_rhat":          maxRhat,
		"min_ess_bulk":      minBulk,
		"min_ess_tail":      minTail,
		"below_recommended": below,
		"recommended":       recommended(),
	}, nil
}

// RunInfo reports the reference chain's diagnostics once per run
// (runner.RunInfoer).
func (p *probitProblem) RunInfo() map[string]map[string]any {
	return map[string]map[string]any{"reference": p.refDiag}
}

// worst returns the largest R̂ and the smallest bulk and tail ESS over the
// parameters' summaries (NaN if any is NaN), and the names theta[j] of
// the parameters that miss diagnostics.Recommended.
func worst(sums []diagnostics.Summary) (maxRhat, minBulk, minTail float64, below []string) {
	maxRhat, minBulk, minTail = math.Inf(-1), math.Inf(1), math.Inf(1)
	names := diagnostics.Names("theta", len(sums))
	below = []string{}
	for j, s := range sums {
		maxRhat = math.Max(maxRhat, s.Rhat)
		minBulk = math.Min(minBulk, s.ESSBulk)
		minTail = math.Min(minTail, s.ESSTail)
		if len(diagnostics.Recommended.Failures(s)) > 0 {
			below = append(below, names[j])
		}
	}
	return maxRhat, minBulk, minTail, below
}

// recommended is the thresholds the flags were set against.
func recommended() map[string]any {
	return map[string]any{"max_rhat": diagnostics.Recommended.MaxRhat, "min_ess": diagnostics.Recommended.MinESS}
}
