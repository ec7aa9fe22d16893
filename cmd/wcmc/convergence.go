package main

import (
	"fmt"
	"io"

	"wcmc/diagnostics"
	"wcmc/report"
	"wcmc/runner"
)

// warnConvergence prints to w one line when a Markov chain of res (its
// reference chain or a worker's, as the probit and MNIST experiments
// record them in DIR/ID.json) misses diagnostics.Recommended. The exit
// status is not affected.
func warnConvergence(w io.Writer, res *runner.Result, json string) {
	c, err := report.ConvergenceOf(res, diagnostics.Recommended)
	switch {
	case err != nil:
		fmt.Fprintf(w, "warning: %v\n", err)
	case c != nil && !c.OK():
		fmt.Fprintf(w, "warning: %s; per worker and trial in %s\n", c.Warning(), json)
	}
}
