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
	l.registerAs(f, "warn for a chain whose split-R̂ exceeds this", "warn for a chain whose bulk or tail ESS is below this")
}

// registerAs is register with the flags' usage texts.
func (l *chainLimits) registerAs(f *pflag.FlagSet, rhatUsage, essUsage string) {
	f.Float64Var(&l.MaxRhat, "max-rhat", diagnostics.Recommended.MaxRhat, rhatUsage)
	f.Float64Var(&l.MinESS, "min-ess", diagnostics.Recommended.MinESS, essUsage)
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

// warnConvergence prints to w what res records about its Markov chains
// (its reference chain and its workers', as the probit and MNIST
// experiments record them in DIR/ID.json, json): a warning line when a
// chain misses the thresholds and a setting of the run can help, and a
// note on worker chains too short for the ESS threshold, judged against
// their length instead, and a note when err2 divides by entries of the
// reference that its Monte Carlo error cannot tell from zero
// (report.Convergence). The exit status is not affected.
func warnConvergence(w io.Writer, res *runner.Result, json string, limits diagnostics.Thresholds) {
	c, err := report.ConvergenceOf(res, limits)
	if err != nil {
		fmt.Fprintf(w, "warning: %v\n", err)
		return
	}
	if c == nil {
		return
	}
	if m := c.Warning(); m != "" {
		fmt.Fprintf(w, "warning: %s; recorded in %s\n", m, json)
	}
	if m := c.Note(); m != "" {
		fmt.Fprintf(w, "note: %s; per worker and trial in %s\n", m, json)
	}
	if m := c.Err2Note(); m != "" {
		fmt.Fprintf(w, "note: %s\n", m)
	}
}
