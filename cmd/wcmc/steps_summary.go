package main

// The summary and convergence diagnostics written beside every sample file
// (wcmc sample, wcmc posterior) and printed.

import (
	"fmt"
	"io"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/diagnostics"
)

// sampleSummary is the diagnostics table of one sample file.
type sampleSummary struct {
	path   string // the .summary.csv file
	names  []string
	rows   []diagnostics.Summary
	limits diagnostics.Thresholds // what a warning is raised for
}

// summaryPath returns the summary file beside the sample file out:
// samples-3.npy → samples-3.summary.csv.
func summaryPath(out string) string {
	return strings.TrimSuffix(out, ".npy") + ".summary.csv"
}

// summarize computes the diagnostics of the samples written to out, one
// matrix (draws × d) per chain; print warns beyond limits.
func summarize(out string, limits diagnostics.Thresholds, chains ...*mat.Dense) (sampleSummary, error) {
	rows, err := diagnostics.SummarizeChains(chains)
	if err != nil {
		return sampleSummary{}, err
	}
	return sampleSummary{path: summaryPath(out), names: diagnostics.Names("theta", len(rows)), rows: rows, limits: limits}, nil
}

// file is the summary's output file, to write with the samples.
func (s sampleSummary) file() outFile {
	return outFile{s.path, func(w io.Writer) error { return diagnostics.WriteCSV(w, s.names, s.rows) }}
}

// print writes the table to stdout and, when a parameter fails the
// thresholds of Vehtari et al. (2021), a warning naming it to stderr, with
// the remedies for the sampler method used. The exit status is not
// affected.
func (s sampleSummary) print(stdout, stderr io.Writer, samples string, chains int, method string) {
	what := "split-R̂ over the two halves of the one chain"
	if chains > 1 {
		what = fmt.Sprintf("rank-normalised split-R̂ over %d chains", chains)
	}
	fmt.Fprintf(stdout, "summary (%s; also in %s):\n", what, s.path)
	diagnostics.WriteTable(stdout, s.names, s.rows)
	var bad []string
	t := s.limits
	for j, r := range s.rows {
		if f := t.Failures(r); f != nil {
			bad = append(bad, fmt.Sprintf("%s (%s)", s.names[j], strings.Join(f, ", ")))
		}
	}
	if bad != nil {
		remedy := "draw more samples (--samples) or burn in longer (--burnin)"
		if method == wcmc.Gibbs {
			remedy += "; if R̂ stays high, Gibbs mixes too slowly here: use --sampler hmc"
		}
		fmt.Fprintf(stderr, "warning: %s: %d of %d parameters fail R̂ ≤ %g and bulk and tail ESS ≥ %g "+
			"(Vehtari et al. 2021 recommend 1.01 and 400; --max-rhat, --min-ess): %s. Their means and quantiles are not yet reliable; %s.\n",
			samples, len(bad), len(s.rows), t.MaxRhat, t.MinESS, strings.Join(bad, "; "), remedy)
	}
}
