package main

import (
	"fmt"
	"io"
	"math"

	"github.com/spf13/pflag"

	"github.com/wcmc-project/wcmc/diagnostics"
	"github.com/wcmc-project/wcmc/report"
	"github.com/wcmc-project/wcmc/runner"
)

// chainLimits are the --max-rhat and --min-ess flags: the thresholds
// beyond which a chain's diagnostics draw a warning.
type chainLimits diagnostics.Thresholds

// register adds the flags to f, defaulting to diagnostics.Recommended.
func (l *chainLimits) register(f *pflag.FlagSet) {
	f.Float64Var(&l.MaxRhat, "max-rhat", diagnostics.Recommended.MaxRhat, "warn for a chain whose split-R̂ exceeds this")
	f.Float64Var(&l.MinESS, "min-ess", diagnostics.Recommended.MinESS, "warn for a chain whose bulk or tail ESS is below this")
}

// check returns the thresholds, or an error naming the flag that is out
// of range.
func (l chainLimits) check() (diagnostics.Thresholds, error) {
	switch {
	case !(l.MaxRhat >= 1) || math.IsInf(l.MaxRhat, 1):
		return diagnostics.Thresholds{}, fmt.Errorf("--max-rhat must be a finite number ≥ 1, got %v", l.MaxRhat)
	case !(l.MinESS >= 0) || math.IsInf(l.MinESS, 1):
		return diagnostics.Thresholds{}, fmt.Errorf("--min-ess must be a finite number ≥ 0, got %v", l.MinESS)
	}
	return diagnostics.Thresholds(l), nil
}

// warnConvergence prints to w one line when a Markov chain of res (its
// reference chain or a worker's, as the probit and MNIST experiments
// record them in DIR/ID.json) misses the thresholds. The exit status is
// not affected.
func warnConvergence(w io.Writer, res *runner.Result, json string, limits diagnostics.Thresholds) {
	c, err := report.ConvergenceOf(res, limits)
	switch {
	case err != nil:
		fmt.Fprintf(w, "warning: %v\n", err)
	case c != nil && !c.OK():
		fmt.Fprintf(w, "warning: %s; per worker and trial in %s\n", c.Warning(), json)
	}
}
