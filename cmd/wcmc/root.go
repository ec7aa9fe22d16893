package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"wcmc/runner"
)

// newRootCmd returns the wcmc command over the given experiments, with
// every subcommand listed here.
func newRootCmd(specs []runner.Spec, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "wcmc",
		Short: "Channel-driven Monte Carlo sampling over wireless channels: the paper's experiments",
		Long: `wcmc reproduces the experiments of Liu & Simeone, "Channel-Driven Monte Carlo
Sampling for Bayesian Distributed Learning in Wireless Data Centers".

  wcmc list            the experiments
  wcmc show ID         an experiment's parameters, schemes and metrics
  wcmc run ID          run a sweep, writing CSV, JSON and figures
                       (--resume after an interruption; --shard i/n, then wcmc merge)
  wcmc reproduce       every experiment and the paper's claims in one report

The protocol on your own data, one step per command (files in between):
  wcmc partition → sample (per worker) → transmit → aggregate; posterior, evaluate`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(
		// the paper's experiments
		newListCmd(specs),
		newShowCmd(specs),
		newRunCmd(specs),
		newMergeCmd(specs),
		newReproduceCmd(specs),
		// the protocol on your own data, one step per command
		newPartitionCmd(),
		newSampleCmd(),
		newTransmitCmd(),
		newAggregateCmd(),
		newPosteriorCmd(),
		newEvaluateCmd(),
		// the tool itself
		newBenchCmd(),
		newVersionCmd(),
	)
	return root
}

// execute runs the wcmc command with args and returns the exit status,
// printing any error to stderr.
func execute(ctx context.Context, specs []runner.Spec, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(specs, stdout, stderr)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, "wcmc:", err)
		return 1
	}
	return 0
}

// completeIDs offers experiment IDs for shell completion.
func completeIDs(specs []runner.Spec) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		out := make([]cobra.Completion, len(specs))
		for i, s := range specs {
			out[i] = cobra.CompletionWithDesc(s.ID, s.Description)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
