package experiment

import (
	"math"
	"sort"

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

// err2Conditioning reports how far the reference second moment R, the
// denominator of eq: err2's terms |M̂_ij − R_ij|/|R_ij|, is from zero
// against its own Monte Carlo error. Entries are visited from the
// smallest r_ij = |R_ij|/√(R_ii R_jj) up, with the Monte Carlo standard
// error of the mean of θ_iθ_j over the chains (diagnostics.MCSEMean, in the
// same units), until r_ij exceeds 4 times the largest standard error seen
// (or maxConditioningEntries were visited). Entries with |R_ij| below 2
// standard errors are "unresolved": the reference cannot tell them from
// zero, and err2 of any samples that miss them is then set by the
// reference's noise (1/|R_ij| has no finite mean over reference draws when
// R_ij's law has a density at zero). err2_scaled does not divide by R_ij.
func err2Conditioning(moment mat.Symmetric, chains []*mat.Dense) map[string]any {
	d := moment.SymmetricDim()
	type entry struct {
		i, j int
		r    float64
	}
	var entries []entry
	for i := range d {
		for j := i + 1; j < d; j++ {
			entries = append(entries, entry{i, j, math.Abs(moment.At(i, j)) / math.Sqrt(moment.At(i, i)*moment.At(j, j))})
		}
	}
	info := map[string]any{"pairs": len(entries)}
	if len(entries) == 0 {
		return info
	}
	sort.Slice(entries, func(a, b int) bool { return entries[a].r < entries[b].r })
	series := make([][]float64, len(chains))
	var maxSE float64
	unresolved, visited := 0, 0
	smallestSE := math.NaN()
	for _, e := range entries {
		if visited == maxConditioningEntries || (visited > 0 && e.r > 4*maxSE) {
			break
		}
		for c, ch := range chains {
			n, _ := ch.Dims()
			series[c] = series[c][:0]
			for t := range n {
				series[c] = append(series[c], ch.At(t, e.i)*ch.At(t, e.j))
			}
		}
		se := diagnostics.MCSEMean(series) / math.Sqrt(moment.At(e.i, e.i)*moment.At(e.j, e.j))
		if visited == 0 {
			smallestSE = se
		}
		visited++
		maxSE = math.Max(maxSE, se)
		if e.r < 2*se {
			unresolved++
		}
	}
	info["smallest"] = entries[0].r
	info["smallest_mcse"] = smallestSE
	info["smallest_pair"] = []int{entries[0].i + 1, entries[0].j + 1}
	info["visited"] = visited
	info["unresolved"] = unresolved
	return info
}

// maxConditioningEntries bounds the entries err2Conditioning visits.
const maxConditioningEntries = 2000
