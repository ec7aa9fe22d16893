package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wcmc-project/wcmc/dataset"
	"github.com/wcmc-project/wcmc/reproduce"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/results"
)

func newReproduceCmd(specs []runner.Spec) *cobra.Command {
	var (
		cfg        reproduce.Config
		bandName   string
		flagLimits chainLimits
	)
	cmd := &cobra.Command{
		Use:   "reproduce",
		Short: "Run the paper's experiments and check its claims: REPORT.md and report.html",
		Long: `Run the paper's experiments (all, or those named by --only; not the
experiments beyond the paper, whose figure is "Beyond": wcmc run runs
them), check each of the paper's claims about their figures against the
results, and write
DIR/REPORT.md and a self-contained DIR/report.html: the claims with their
verdicts (holds / fails / inconclusive / not evaluated) and the numbers
compared, then per figure the plots, the summary table and its claims.
Each figure (PNG, SVG and PDF beside the report) draws the schemes that
learn no map with WVCMC under one protocol: ID.svg the default protocol,
ID.paper.svg and ID.converged.svg the others; its bands are 95%
confidence intervals of the mean (--band spread: the 5-95% range).
Beside them, DIR/claims.csv has one row per claim and protocol: the
verdict and the deciding estimate, its interval and the trials.

Results already in DIR computed with the same parameters, seed, trials,
--quick flag and wcmc version are reused, so an interrupted or repeated
reproduction only computes what is missing. --reuse-version V also reuses
results computed by wcmc V (when only the claims or the report changed
since); the report says which.

--profile DIR profiles each experiment computed (pprof CPU and allocation
profiles, ID.cpu.pprof and ID.allocs.pprof) and writes DIR/PROFILE.md:
its wall time and where its CPU time went, by stage (worker sampling,
reference posterior, each WVCMC optimiser, channel, predictive KL, ...).
The running experiment's profiles are rewritten every 5 minutes, so a
killed process keeps all but the last minutes of them; resumed, they are
merged with this session's.

Each claim is judged under the WVCMC optimisation protocols it is about
(in-sample claims under paper and converged, fresh-signal claims under
default and converged), so every experiment runs WVCMC under all three
protocols on the same samples and signals (--set protocols=… narrows it).

--set name=value applies to every selected experiment that has the
parameter. The MNIST experiments read the IDX files from --data-dir
(default ` + reproduce.DefaultMNISTDir + `); with all four files they run the
paper's split (N = 12665 training, N_t = 2115 test digits 0/1). Without
--data-dir, when the default folder lacks them, the files of the Go
module ` + dataset.GoMNISTModule + ` are used if they are in the module
cache; fetch them once (nothing is downloaded at run time) with
  ` + dataset.GoMNISTDownload + `
With only the two t10k files the reduced split=t10k runs; without data
the MNIST experiments are reported as not run.

Exit status 0 whatever the verdicts (a refuted claim is a finding);
non-zero only if an experiment could not run.`,
		Example: `  wcmc reproduce --quick
  wcmc reproduce --only gauss-snr,gauss-blocks --out results/paper
  wcmc reproduce --data-dir ~/mnist --trials 20`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			if f.Changed("trials") && cfg.Trials < 1 {
				return fmt.Errorf("--trials must be ≥ 1, got %d", cfg.Trials)
			}
			limits, err := flagLimits.check()
			if err != nil {
				return err
			}
			cfg.ChainLimits = limits
			if cfg.Workers < 0 {
				return fmt.Errorf("--workers must be ≥ 0 (0 = all cores), got %d", cfg.Workers)
			}
			if err := checkOut(cmd, cfg.Out, true); err != nil {
				return err
			}
			if !f.Changed("out") {
				cfg.Out = filepath.Join("results", "reproduce")
				if cfg.Quick {
					cfg.Out += "-quick"
				}
			}
			band, err := results.ParseBand(bandName)
			if err != nil {
				return fmt.Errorf("--band: %w", err)
			}
			cfg.Band, cfg.RedrawFigures = band, f.Changed("band")
			cfg.DataDirGiven = f.Changed("data-dir")
			resume := reproduceCommandLine(cmd, cfg, nil)
			cfg.Command = reproduceCommandLine(cmd, cfg, reproduce.Shown)
			finished := make(chan struct{})
			defer close(finished)
			watchSignals(finished, cmd.ErrOrStderr(), func() string { return "the journals in " + cfg.Out }, nil, resume)
			sum, err := reproduce.Run(cmd.Context(), specs, cfg, progressOut(cmd))
			if err != nil && cmd.Context().Err() != nil {
				return fmt.Errorf("stopped (%v); the finished tasks are saved in the journals in %s\nresume with:\n  %s", err, cfg.Out, resume)
			}
			if sum != nil {
				if perr := printSummary(cmd.OutOrStdout(), sum); perr != nil {
					return perr
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.BoolVar(&cfg.Quick, "quick", false, "smoke-sized runs (each experiment's quick settings; timings in docs/REPRODUCING.md)")
	f.StringSliceVar(&cfg.Only, "only", nil, "run only these experiments (comma-separated IDs)")
	f.StringVar(&cfg.Out, "out", "", "output directory (default results/reproduce, or results/reproduce-quick with --quick)")
	f.Uint64Var(&cfg.Seed, "seed", 1, "run seed; every task's seed derives from it")
	f.IntVar(&cfg.Trials, "trials", 0, "trials per sweep point for every experiment (default: each experiment's)")
	f.StringArrayVar(&cfg.Sets, "set", nil, "set a parameter of every experiment that has it, name=value (repeatable)")
	f.StringVar(&cfg.DataDir, "data-dir", reproduce.DefaultMNISTDir, "directory with the MNIST IDX files (default: also GoMNIST in the Go module cache)")
	f.IntVar(&cfg.Workers, "workers", 0, "parallel workers (0 = all cores)")
	flagLimits.register(f)
	f.StringArrayVar(&cfg.ReuseVersions, "reuse-version", nil, "reuse stored results computed by this wcmc version as if by this one (repeatable; when only the claims or the report changed since); the report names them")
	f.StringArrayVar(&cfg.UpdateDoc, "update-doc", nil, "also rewrite the verdict table between the markers\n"+reproduce.DocBegin+" and "+reproduce.DocEnd+" in this file (repeatable)")
	f.StringVar(&cfg.Profile, "profile", "", "write a CPU and an allocation profile of each experiment computed (ID.cpu.pprof, ID.allocs.pprof) and PROFILE.md, its CPU time by stage, into this directory")
	f.StringVar(&bandName, "band", results.BandCI.String(), "figure bands: ci (95% confidence interval of the mean) or spread (5-95% range of the trials); given, the figures of reused results are redrawn")
	cmd.RegisterFlagCompletionFunc("set", completeSets(specs))
	cmd.RegisterFlagCompletionFunc("band", completeWords(results.Bands...))
	cmd.RegisterFlagCompletionFunc("only", completeList(func() []cobra.Completion {
		var out []cobra.Completion
		for _, s := range reproduce.FigureOrder(specs) {
			if s.PaperFigure() {
				out = append(out, cobra.CompletionWithDesc(s.ID, s.Figure))
			}
		}
		return out
	}))
	return cmd
}

// reproduceCommandLine reconstructs the invocation from the flags set: with
// show nil, the paths as given, the command a stopped run prints to resume
// it; with show = reproduce.Shown, the report's command line, whose paths
// name no directory of this machine outside the checkout (a placeholder
// stands for those).
func reproduceCommandLine(cmd *cobra.Command, cfg reproduce.Config, show func(path, placeholder string) string) string {
	if show == nil {
		show = func(path, _ string) string { return path }
	}
	f := cmd.Flags()
	parts := []string{"wcmc reproduce"}
	if cfg.Quick {
		parts = append(parts, "--quick")
	}
	if len(cfg.Only) > 0 {
		parts = append(parts, "--only "+strings.Join(cfg.Only, ","))
	}
	parts = append(parts, "--out "+show(cfg.Out, reproduce.OutPlaceholder))
	if f.Changed("seed") {
		parts = append(parts, "--seed "+strconv.FormatUint(cfg.Seed, 10))
	}
	if f.Changed("trials") {
		parts = append(parts, "--trials "+strconv.Itoa(cfg.Trials))
	}
	for _, s := range cfg.Sets {
		if dir, ok := strings.CutPrefix(s, "data_dir="); ok {
			s = "data_dir=" + show(dir, reproduce.MNISTPlaceholder)
		}
		parts = append(parts, "--set "+s)
	}
	if f.Changed("data-dir") {
		parts = append(parts, "--data-dir "+show(cfg.DataDir, reproduce.MNISTPlaceholder))
	}
	if cfg.RedrawFigures {
		parts = append(parts, "--band "+cfg.Band.String())
	}
	for _, v := range cfg.ReuseVersions {
		parts = append(parts, "--reuse-version "+v)
	}
	if f.Changed("workers") {
		parts = append(parts, "--workers "+strconv.Itoa(cfg.Workers))
	}
	for _, name := range []string{"max-rhat", "min-ess"} {
		if f.Changed(name) {
			parts = append(parts, "--"+name+" "+f.Lookup(name).Value.String())
		}
	}
	for _, d := range cfg.UpdateDoc {
		parts = append(parts, "--update-doc "+show(d, reproduce.DocPlaceholder))
	}
	if cfg.Profile != "" {
		parts = append(parts, "--profile "+show(cfg.Profile, reproduce.ProfilePlaceholder))
	}
	return strings.Join(parts, " ")
}

// printSummary prints a reproduction's verdict table and the files it
// wrote.
func printSummary(w io.Writer, sum *reproduce.Summary) error {
	fmt.Fprintln(w)
	if err := sum.Report.WriteVerdictTable(w); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nwrote:")
	for _, f := range sum.Files {
		fmt.Fprintf(w, "  %s\n", f)
	}
	return nil
}
