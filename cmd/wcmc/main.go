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
	"github.com/wcmc-project/wcmc/internal/memlimit"
	"github.com/wcmc-project/wcmc/model"
)

func main() {
	model.UseFastBLAS()
	memlimit.SetGCLimit()
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() { cancel(stoppedBy{<-sigs}) }()
	code := execute(ctx, experiment.All(), os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	os.Exit(exitStatus(ctx, code))
}

// stoppedBy is the cause of a run cancelled by a signal; it counts as
// context.Canceled.
type stoppedBy struct{ sig os.Signal }

func (s stoppedBy) Error() string      { return s.sig.String() + " signal received" }
func (stoppedBy) Is(target error) bool { return target == context.Canceled }

// exitStatus is the conventional 128+N for a command that failed after
// signal N (130 for SIGINT, 143 for SIGTERM), so that a scheduler tells a
// stop from an error; otherwise code.
func exitStatus(ctx context.Context, code int) int {
	if s, ok := context.Cause(ctx).(stoppedBy); ok && code != 0 {
		if n, ok := s.sig.(syscall.Signal); ok {
			return 128 + int(n)
		}
	}
	return code
}
