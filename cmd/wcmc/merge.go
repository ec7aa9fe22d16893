package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/wcmc-project/wcmc/report"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/journal"
	"github.com/wcmc-project/wcmc/runner/results"
)

func newMergeCmd(specs []runner.Spec) *cobra.Command {
	var (
		out        string
		mopts      journal.MergeOptions
		flagLimits chainLimits
	)
	cmd := &cobra.Command{
		Use:   "merge DIR... --out DIR",
		Short: "Combine the shards of a sharded run into the run's CSV, JSON and figures",
		Long: `Combine the output directories of the shards of one run ('wcmc run ID
--shard i/n', or a Kubernetes Indexed Job or Slurm job array) into the files
of the single run: ID.csv and ID.summary.csv are byte for byte those of an
unsharded run with the same settings and seed, and ID.json and the figures
follow from them.

Each DIR holds one shard's ID.run.json and ID.journal.jsonl. Merge refuses,
naming the directories and tasks, shards that disagree on the experiment,
parameters, seed or trials, that overlap, or that leave tasks missing (an
absent shard, or one that did not finish: resume it with 'wcmc run ...
--resume', then merge again). It verifies the checksum of every journal
line, refusing a line edited or damaged since it was written (journals
written before lines had checksums are read without), and refuses shards
computed by another wcmc version than each other or this binary, whose
results may differ: --force merges them with a warning.`,
		Example: `  wcmc merge results/shard-0 results/shard-1 results/shard-2 --out results
  wcmc merge results/shard-* --out results --experiment gauss-snr`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			if out == "" {
				return fmt.Errorf("--out: name the directory for the merged files")
			}
			limits, err := flagLimits.check()
			if err != nil {
				return err
			}
			mopts.Warn = cmd.ErrOrStderr()
			res, err := journal.Merge(specs, dirs, mopts)
			if err != nil {
				return err
			}
			removed := func(path string) {
				fmt.Fprintf(cmd.ErrOrStderr(), "removed %s, left by an earlier process killed while writing it\n", path)
			}
			files, warns, err := results.WriteFilesWith(out, res, results.Options{Removed: removed})
			if err != nil {
				return err
			}
			for _, w := range warns {
				fmt.Fprintf(cmd.ErrOrStderr(), "figure: %s\n", w)
			}
			warnConvergence(cmd.ErrOrStderr(), res, filepath.Join(out, res.Spec.ID+".json"), limits)
			noteMixedArithmetic(cmd.ErrOrStderr(), res)
			stdout := cmd.OutOrStdout()
			fmt.Fprintf(stdout, "merged %d directories: %d tasks of %s, %s\nwrote:\n", len(dirs), len(res.Tasks), res.Spec.ID, report.WallTime(res))
			for _, f := range files {
				fmt.Fprintf(stdout, "  %s\n", f)
			}
			fmt.Fprintln(stdout)
			return printTable(stdout, res)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "directory for the merged files (required)")
	cmd.Flags().StringVar(&mopts.Experiment, "experiment", "", "the experiment to merge, when the directories hold several")
	cmd.Flags().BoolVar(&mopts.Force, "force", false, "merge shards computed by another wcmc version (with a warning)")
	flagLimits.register(cmd.Flags())
	return cmd
}
