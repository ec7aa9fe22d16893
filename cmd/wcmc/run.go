package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"wcmc/runner"
)

func newRunCmd(specs []runner.Spec) *cobra.Command {
	var (
		opts   runner.Options
		out    string
		trials int
	)
	cmd := &cobra.Command{
		Use:   "run ID",
		Short: "Run an experiment's sweep and write CSV, JSON and figures",
		Long: `Run an experiment: every (sweep point, trial) task in parallel, each with
its own random stream derived from --seed, so results do not depend on
--workers. Writes to --out:

  ID.csv            one row per trial, scheme and metric
  ID.summary.csv    mean and 5-95% quantiles per scheme, x and metric
  ID.json           the parameters, seed, version, notes and diagnostics
  ID.png, ID.svg    the main metric (ID.<metric>.png/.svg for the others)

Use 'wcmc show ID' to see an experiment's parameters, their defaults and
ranges, and which one is swept; change them with --set name=value (the
swept one takes a comma-separated list, e.g. --set snr=0,10,20).`,
		Example: `  wcmc run gauss-snr --quick
  wcmc run gauss-snr --trials 200 --set snr=-10,0,10,20 --out results/snr`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeIDs(specs),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := findSpec(specs, args[0])
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("trials") && trials < 1 {
				return fmt.Errorf("--trials must be ≥ 1, got %d", trials)
			}
			if opts.Workers < 0 {
				return fmt.Errorf("--workers must be ≥ 0 (0 = all cores), got %d", opts.Workers)
			}
			opts.Trials = trials
			opts.Progress = cmd.ErrOrStderr()
			res, err := runner.Run(cmd.Context(), spec, opts)
			if err != nil {
				return err
			}
			files, warns, err := runner.WriteFiles(out, res)
			if err != nil {
				return err
			}
			stdout := cmd.OutOrStdout()
			for _, w := range warns {
				fmt.Fprintf(cmd.ErrOrStderr(), "figure: %s\n", w)
			}
			fmt.Fprintln(stdout, "wrote:")
			for _, f := range files {
				fmt.Fprintf(stdout, "  %s\n", f)
			}
			fmt.Fprintln(stdout)
			return printTable(stdout, res)
		},
	}
	f := cmd.Flags()
	f.IntVar(&trials, "trials", 0, "number of trials per sweep point (default: the experiment's)")
	f.Uint64Var(&opts.Seed, "seed", 1, "run seed; every task's seed derives from it")
	f.StringVar(&out, "out", "results", "output directory")
	f.StringArrayVar(&opts.Sets, "set", nil, "set a parameter, name=value (repeatable; see 'wcmc show ID')")
	f.BoolVar(&opts.Quick, "quick", false, "smoke-sized run (the experiment's quick settings)")
	f.IntVar(&opts.Workers, "workers", 0, "parallel workers (0 = all cores)")
	return cmd
}

// printTable prints the mean of the main metric per scheme (rows) and
// sweep point (columns).
func printTable(w io.Writer, res *runner.Result) error {
	spec := res.Spec
	main := spec.Metrics[0]
	xs := res.Values.XList()
	mean := map[string]map[int]float64{}
	for _, r := range runner.Summarize(res) {
		if r.Metric != main {
			continue
		}
		if mean[r.Scheme] == nil {
			mean[r.Scheme] = map[int]float64{}
		}
		mean[r.Scheme][r.Point] = r.Mean
	}
	fmt.Fprintf(w, "mean %s over %d trials:\n", main, res.Trials)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s=\t", spec.X)
	for _, x := range xs {
		fmt.Fprintf(tw, "%s\t", runner.FormatX(x))
	}
	fmt.Fprintln(tw)
	for _, s := range spec.Schemes {
		fmt.Fprintf(tw, "%s\t", s)
		for i := range xs {
			if v, ok := mean[s][i]; ok {
				fmt.Fprintf(tw, "%s\t", strconv.FormatFloat(v, 'g', 3, 64))
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
