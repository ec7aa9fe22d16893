// Command wcmc runs the experiments of Liu & Simeone, "Channel-Driven Monte
// Carlo Sampling for Bayesian Distributed Learning in Wireless Data
// Centers": see `wcmc list`, `wcmc show ID` and `wcmc run ID`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/wcmc-project/wcmc/experiment"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, experiment.All(), os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
