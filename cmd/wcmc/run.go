package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/wcmc-project/wcmc/internal/atomicfile"
	"github.com/wcmc-project/wcmc/internal/machine"
	"github.com/wcmc-project/wcmc/report"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/journal"
	"github.com/wcmc-project/wcmc/runner/results"
)

func newRunCmd(specs []runner.Spec) *cobra.Command {
	var (
		opts       journal.Options
		out        string
		trials     int
		shardFlag  string
		shardCount int
		bandName   string
		dryRun     bool
		profileDir string
		flagLimits chainLimits
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
  ID.png/.svg/.pdf  the figure of the main metric (ID.<metric>.* for the
                    others), in the paper's scheme names; with --set
                    protocols=paper,converged,default, WVCMC under the
                    default protocol, and ID[.<metric>].paper.* and
                    .converged.* under the others. Lines are means, bands
                    95% confidence intervals of the mean (--band spread:
                    the 5-95% range of the trials)

With --profile DIR, also DIR/ID.cpu.pprof and DIR/ID.allocs.pprof (for
go tool pprof), and the run's CPU time by stage (worker sampling, each
WVCMC optimiser, channel, KL, ...) on stderr.

Use 'wcmc show ID' to see an experiment's parameters, their defaults and
ranges, and which one is swept; change them with --set name=value (the
swept one takes a comma-separated list, e.g. --set snr_db=0,10,20).

Nothing finished is lost: each task is saved to ID.journal.jsonl (with the
run's settings in ID.run.json) as soon as it finishes. A run that is killed
or interrupted (Ctrl-C, SIGTERM) continues with the same command and
--resume, and ends with the same files as an uninterrupted run. The journal
is removed once the final files are written.

--shard i/n runs the i-th (0-based) of n slices of the tasks, for running one
sweep on n machines; it writes only its journal, and 'wcmc merge' combines
the n directories into the run's files. Without --shard, the slice is taken
from a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, with the count from
--shard-count or WCMC_SHARD_COUNT) or a Slurm job array
(SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT, SLURM_ARRAY_TASK_MIN);
--shard 0/1 runs the whole sweep even there. See deploy/.`,
		Example: `  wcmc run gauss-snr --quick
  wcmc run gauss-snr --trials 200 --set snr_db=-10,0,10,20 --out results/snr
  wcmc run gauss-snr --trials 200 --out results/snr --resume     # after a crash
  wcmc run gauss-snr --shard 1/4 --out results/shard-1           # then: wcmc merge`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeIDs(specs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errEmptyOut
			}
			spec, err := runner.Find(specs, args[0])
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("trials") && trials < 1 {
				return fmt.Errorf("--trials must be ≥ 1, got %d", trials)
			}
			if opts.Workers < 0 {
				return fmt.Errorf("--workers must be ≥ 0 (0 = all cores), got %d", opts.Workers)
			}
			limits, err := flagLimits.check()
			if err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			shard, source, err := resolveShard(shardFlag, shardCount, cmd.Flags().Changed("shard-count"), os.Getenv)
			if err != nil {
				return err
			}
			if source != "" {
				fmt.Fprintf(stderr, "wcmc: shard %s, %s\n", shard, source)
			}
			band, err := results.ParseBand(bandName)
			if err != nil {
				return fmt.Errorf("--band: %w", err)
			}
			opts.Trials = trials
			opts.Progress = progressOut(cmd)
			opts.Dir = out
			opts.Shard = shard
			opts.Machine = machine.Describe()
			if dryRun {
				// Plan only: every parameter and relation checked, nothing run
				// or written (the Slurm recipe validates its arguments so).
				plan, err := runner.NewPlan(spec, opts.Options)
				if err != nil {
					return err
				}
				keys, err := plan.ShardTasks(shard)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "parameters valid; shard %s of %s holds %d of %d tasks; nothing was run\n",
					shard, spec.ID, len(keys), len(plan.Tasks))
				return nil
			}
			if opts.Resume && shard.Whole() {
				if done := completeRun(spec, opts.Options, out); done != "" {
					fmt.Fprintln(stderr, done)
					return nil
				}
			}
			resume := resumeCommand(cmd, spec.ID, opts.Options, out, shardFlag, shardCount)
			finished := make(chan struct{})
			defer close(finished)
			var saved atomic.Value // the journal, "" once removed
			saved.Store(journal.Path(out, spec.ID))
			var writing atomic.Bool // every task done, the results being written
			watchSignals(finished, stderr, func() string { return saved.Load().(string) }, writing.Load, resume)

			var res *runner.Result
			compute := func() (err error) {
				res, err = journal.Run(cmd.Context(), spec, opts)
				return err
			}
			if profileDir == "" {
				err = compute()
			} else {
				err = profileRun(profileDir, spec.ID, opts.Resume, compute, stderr)
			}
			var stopped *journal.Interrupted
			var failed *journal.Failed
			switch {
			case errors.As(err, &stopped):
				return fmt.Errorf("%v\nresume with:\n  %s", stopped, resume)
			case errors.As(err, &failed) && failed.Done > 0:
				return fmt.Errorf("%v\nonce the cause is fixed, resume with:\n  %s", err, resume)
			case errors.Is(err, journal.ErrUnfinished):
				return fmt.Errorf("%v\nresume with:\n  %s", err, resume)
			case err != nil:
				return err
			}
			stdout := cmd.OutOrStdout()
			if !shard.Whole() {
				fmt.Fprintf(stdout, "shard %s of %s: %d tasks saved in %s", shard, spec.ID, len(res.Tasks), journal.Path(out, spec.ID))
				if res.Resumed > 0 {
					fmt.Fprintf(stdout, " (%d from before the resume)", res.Resumed)
				}
				fmt.Fprintf(stdout, "\nwhen all %d shards are done, combine their directories:\n  wcmc merge DIR... --out DIR\n", shard.Count)
				return nil
			}
			writing.Store(true)
			files, warns, err := results.WriteFilesWith(out, res, results.Options{Band: band})
			if err != nil {
				return fmt.Errorf("%w\nno result file was written or changed; the %d finished tasks are kept in %s\nonce the cause is fixed, write the results with:\n  %s",
					err, len(res.Tasks), journal.Path(out, spec.ID), resume)
			}
			if err := journal.Remove(out, spec.ID); err != nil {
				fmt.Fprintf(stderr, "wcmc: the results are written, but the journal could not be removed: %v\n", err)
			} else {
				saved.Store("")
			}
			for _, w := range warns {
				fmt.Fprintf(stderr, "figure: %s\n", w)
			}
			warnConvergence(stderr, res, filepath.Join(out, spec.ID+".json"), limits)
			noteMixedArithmetic(stderr, res)
			fmt.Fprintf(stdout, "%s: %s\nwrote:\n", spec.ID, report.WallTime(res))
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
	f.StringVar(&out, "out", "results", "output directory (also holds the journal of an unfinished run)")
	f.StringArrayVar(&opts.Sets, "set", nil, "set a parameter, name=value (repeatable; see 'wcmc show ID')")
	f.BoolVar(&opts.Quick, "quick", false, "smoke-sized run (the experiment's quick settings)")
	f.IntVar(&opts.Workers, "workers", 0, "parallel workers (0 = all cores)")
	flagLimits.register(f)
	f.BoolVar(&opts.Force, "force", false, "with --resume: resume a journal started by another wcmc version (with a warning)")
	f.BoolVar(&opts.Resume, "resume", false, "continue the interrupted run journaled in --out (same settings), skipping its finished tasks")
	f.StringVar(&shardFlag, "shard", "", "run slice i of n (0-based, e.g. 2/8) and write only its journal; combine with 'wcmc merge'")
	f.IntVar(&shardCount, "shard-count", 0, "number of shards when the index comes from JOB_COMPLETION_INDEX (default $WCMC_SHARD_COUNT)")
	f.BoolVar(&dryRun, "dry-run", false, "check the parameters and the shard, print how many tasks it holds, and run nothing")
	f.StringVar(&bandName, "band", results.BandCI.String(), "figure bands: ci (95% confidence interval of the mean) or spread (5-95% range of the trials)")
	f.StringVar(&profileDir, "profile", "", "write a CPU and an allocation profile of the run (ID.cpu.pprof, ID.allocs.pprof) into this directory and print its CPU time by stage")
	cmd.RegisterFlagCompletionFunc("set", completeSets(specs))
	cmd.RegisterFlagCompletionFunc("band", completeWords(results.Bands...))
	return cmd
}

// resolveShard returns the shard to run and, for a sharded run, a phrase
// saying where it came from: --shard i/n; else JOB_COMPLETION_INDEX (a
// Kubernetes Indexed Job) with the count from --shard-count or
// WCMC_SHARD_COUNT; else SLURM_ARRAY_TASK_ID (a Slurm job array) with the
// count from --shard-count or SLURM_ARRAY_TASK_COUNT, the index counted
// from SLURM_ARRAY_TASK_MIN in steps of SLURM_ARRAY_TASK_STEP; else the
// whole run.
func resolveShard(flag string, count int, countSet bool, getenv func(string) string) (runner.Shard, string, error) {
	envInt := func(name string) (int, bool, error) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, true, fmt.Errorf("%s=%q is not an integer", name, v)
		}
		return n, true, nil
	}
	if countSet && count < 1 {
		return runner.Shard{}, "", fmt.Errorf("--shard-count must be ≥ 1, got %d", count)
	}
	if flag != "" {
		if countSet {
			return runner.Shard{}, "", fmt.Errorf("--shard %s already gives the count; --shard-count is for JOB_COMPLETION_INDEX", flag)
		}
		s, err := runner.ParseShard(flag)
		if err == nil && s.Count < 1 {
			err = fmt.Errorf("shard %q: the count n must be ≥ 1", flag)
		}
		if err != nil {
			return runner.Shard{}, "", fmt.Errorf("--shard: %w", err)
		}
		if s.Whole() {
			return s, "", nil
		}
		return s, "from --shard", nil
	}
	if idx, ok, err := envInt("JOB_COMPLETION_INDEX"); ok || err != nil {
		if err != nil {
			return runner.Shard{}, "", err
		}
		from := "--shard-count"
		if !countSet {
			n, ok, err := envInt("WCMC_SHARD_COUNT")
			if err != nil {
				return runner.Shard{}, "", err
			}
			if !ok {
				return runner.Shard{}, "", fmt.Errorf("JOB_COMPLETION_INDEX=%d is set (a Kubernetes Indexed Job) but not the number of shards: pass --shard-count N or set WCMC_SHARD_COUNT=N, N being the Job's spec.completions (or run the whole sweep with --shard 0/1)", idx)
			}
			count, from = n, fmt.Sprintf("WCMC_SHARD_COUNT=%d", n)
		}
		if count < 1 {
			return runner.Shard{}, "", fmt.Errorf("JOB_COMPLETION_INDEX=%d with %s: the number of shards must be ≥ 1", idx, from)
		}
		s := runner.Shard{Index: idx, Count: count}
		if err := s.Check(); err != nil {
			return runner.Shard{}, "", fmt.Errorf("JOB_COMPLETION_INDEX=%d with %s: %w", idx, from, err)
		}
		return s, fmt.Sprintf("from JOB_COMPLETION_INDEX=%d and %s (Kubernetes Indexed Job)", idx, from), nil
	}
	if id, ok, err := envInt("SLURM_ARRAY_TASK_ID"); ok || err != nil {
		if err != nil {
			return runner.Shard{}, "", err
		}
		from := "--shard-count"
		if !countSet {
			n, ok, err := envInt("SLURM_ARRAY_TASK_COUNT")
			if err != nil {
				return runner.Shard{}, "", err
			}
			if !ok {
				return runner.Shard{}, "", fmt.Errorf("SLURM_ARRAY_TASK_ID=%d is set (a Slurm job array) but not SLURM_ARRAY_TASK_COUNT: pass --shard-count N (or run the whole sweep with --shard 0/1)", id)
			}
			count, from = n, fmt.Sprintf("SLURM_ARRAY_TASK_COUNT=%d", n)
		}
		if count < 1 {
			return runner.Shard{}, "", fmt.Errorf("SLURM_ARRAY_TASK_ID=%d with %s: the number of shards must be ≥ 1", id, from)
		}
		lo, _, err := envInt("SLURM_ARRAY_TASK_MIN")
		if err != nil {
			return runner.Shard{}, "", err
		}
		step, ok, err := envInt("SLURM_ARRAY_TASK_STEP")
		if err != nil {
			return runner.Shard{}, "", err
		}
		if !ok || step < 1 {
			step = 1
		}
		where := fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d (SLURM_ARRAY_TASK_MIN=%d, step %d) with %s", id, lo, step, from)
		if (id-lo)%step != 0 || id < lo {
			return runner.Shard{}, "", fmt.Errorf("%s: the array is not a range lo-hi[:step]; use --array=0-%d or --shard i/n", where, count-1)
		}
		s := runner.Shard{Index: (id - lo) / step, Count: count}
		if err := s.Check(); err != nil {
			return runner.Shard{}, "", fmt.Errorf("%s: %w (use --array=0-%d)", where, err, count-1)
		}
		return s, "from " + where + " (Slurm job array)", nil
	}
	if countSet {
		return runner.Shard{}, "", errors.New("--shard-count needs JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID in the environment; on the command line use --shard i/n")
	}
	return runner.Shard{}, "", nil
}

// completeRun is the message of a --resume on a run that is complete: dir
// holds no journal of spec but its results, computed with opts (same
// parameters, seed, trials, version, files as written). It is empty when
// there is a journal to resume, or no such results (the run then starts
// afresh).
func completeRun(spec runner.Spec, opts runner.Options, dir string) string {
	if _, err := os.Lstat(journal.Path(dir, spec.ID)); !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	plan, err := runner.NewPlan(spec, opts)
	if err != nil {
		return ""
	}
	if _, err := results.LoadMatching(dir, plan); err != nil {
		return ""
	}
	return fmt.Sprintf("wcmc: this run is complete (its results are in %s): nothing to resume", filepath.Join(dir, spec.ID+".json"))
}

// resumeCommand is the command that continues this run: the same
// experiment and flags, with --resume.
func resumeCommand(cmd *cobra.Command, id string, opts runner.Options, out, shard string, shardCount int) string {
	words := []string{"wcmc", "run", id}
	changed := cmd.Flags().Changed
	if opts.Quick {
		words = append(words, "--quick")
	}
	if changed("trials") {
		words = append(words, "--trials", strconv.Itoa(opts.Trials))
	}
	for _, s := range opts.Sets {
		words = append(words, "--set", s)
	}
	if changed("seed") {
		words = append(words, "--seed", strconv.FormatUint(opts.Seed, 10))
	}
	if changed("out") {
		words = append(words, "--out", out)
	}
	if changed("workers") {
		words = append(words, "--workers", strconv.Itoa(opts.Workers))
	}
	if shard != "" {
		words = append(words, "--shard", shard)
	}
	if changed("shard-count") {
		words = append(words, "--shard-count", strconv.Itoa(shardCount))
	}
	words = append(words, "--resume")
	for i, w := range words {
		words[i] = shellQuote(w)
	}
	return strings.Join(words, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=,:+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// stopGrace is how long a stopped run waits for its running tasks to
// finish (and be saved) before it exits; less than Kubernetes' default
// termination grace period of 30 s.
const stopGrace = 10 * time.Second

// watchSignals follows SIGINT and SIGTERM during a run. The first one also
// cancels the run's context (main's signal.NotifyContext): no task starts,
// running tasks abandon their work at their next check of the context (each
// WVCMC iteration, each stage of a trial) and will run again on resume, and
// a task that does not check it gets stopGrace to finish and be saved;
// after that, or at a second signal, the process exits at once with status
// 128 + the first signal — every finished task is already in the journal (saved names where,
// or returns "" once the results are written and the journal removed).
// A signal that arrives once every task is done, while the results are
// written (writing, nil for never), lets that writing finish within the
// same stopGrace: it is all or nothing and takes seconds, and the command
// then succeeds with the results complete rather than leave a resume that
// would only write the same files. It returns when finished is closed.
func watchSignals(finished <-chan struct{}, stderr io.Writer, saved func() string, writing func() bool, resume string) {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		defer signal.Stop(sig)
		var first os.Signal
		select {
		case <-finished:
			return
		case first = <-sig:
		}
		late := writing != nil && writing()
		if late {
			fmt.Fprintf(stderr, "wcmc: every task is done and saved; the results being written are finished first (within %s; interrupt again to stop now)\n", stopGrace)
		} else {
			fmt.Fprintf(stderr, "wcmc: stopping: no new task starts; running tasks stop at their next check or have %s to finish and be saved (interrupt again to stop now)\n", stopGrace)
		}
		timer := time.NewTimer(stopGrace)
		defer timer.Stop()
		select {
		case <-finished:
			return
		case <-sig:
		case <-timer.C:
			if late {
				fmt.Fprintf(stderr, "wcmc: the results were not written within %s\n", stopGrace)
			} else {
				fmt.Fprintf(stderr, "wcmc: the running tasks did not finish within %s; they will run again on resume\n", stopGrace)
			}
		}
		fmt.Fprint(stderr, stoppedMessage(saved(), resume))
		if s, ok := stderr.(*statusWriter); ok {
			s.Status("") // leave no progress line under the shell's prompt
		}
		atomicfile.RemovePending() // no half-written file survives the stop
		code := 1
		if n, ok := first.(syscall.Signal); ok {
			code = 128 + int(n) // the conventional status of a stop by signal
		}
		os.Exit(code)
	}()
}

// stoppedMessage is the note of a stopped run: where its finished tasks
// are saved and how to resume, or, saved empty, that nothing is left to
// resume.
func stoppedMessage(saved, resume string) string {
	if saved == "" {
		return "wcmc: stopped after the results were written; there is nothing to resume\n"
	}
	return fmt.Sprintf("wcmc: stopped; the finished tasks are saved in %s\nresume with:\n  %s\n", saved, resume)
}

// printTable prints the mean of the main metric per scheme that ran
// (rows, in the paper's names) and sweep point (columns).
func printTable(w io.Writer, res *runner.Result) error {
	spec := res.Spec
	main := spec.Metrics[0]
	xs := res.Values.XList()
	mean := map[string]map[int]float64{}
	for _, r := range results.Summarize(res) {
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
		if len(mean[s]) == 0 {
			continue // not run (e.g. a protocol not asked for)
		}
		fmt.Fprintf(tw, "%s\t", results.SchemeLabel(s))
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

// noteMixedArithmetic prints to w one line when res's sessions ran on
// machines of different arithmetic (report.MixedArithmetic), as a resume
// on another machine or shards merged from several can.
func noteMixedArithmetic(w io.Writer, res *runner.Result) {
	if m := report.MixedArithmetic(res); m != "" {
		fmt.Fprintf(w, "note: %s: %s\n", res.Spec.ID, m)
	}
}
