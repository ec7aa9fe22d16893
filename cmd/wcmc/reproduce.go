package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"wcmc/dataset"
	"wcmc/internal/atomicfile"
	"wcmc/report"
	"wcmc/runner"
	"wcmc/scheme"
)

// defaultMNISTDir is where the MNIST files are looked for when --data-dir
// is not given (the shared data folder next to a checkout).
const defaultMNISTDir = "../shared/data/mnist"

// Markers around the verdict table that --update-doc rewrites.
const (
	docBegin = "<!-- BEGIN wcmc reproduce verdicts -->"
	docEnd   = "<!-- END wcmc reproduce verdicts -->"
)

// reproduceConfig holds the flags of `wcmc reproduce`.
type reproduceConfig struct {
	quick     bool
	only      []string
	out       string
	seed      uint64
	trials    int
	sets      []string
	dataDir   string
	dataSet   bool // --data-dir given explicitly
	workers   int
	updateDoc []string
	command   string
}

func newReproduceCmd(specs []runner.Spec) *cobra.Command {
	var cfg reproduceConfig
	cmd := &cobra.Command{
		Use:   "reproduce",
		Short: "Run every experiment and check the paper's claims: REPORT.md and report.html",
		Long: `Run the paper's experiments (all, or those named by --only), check each of
the paper's claims about their figures against the results, and write
DIR/REPORT.md and a self-contained DIR/report.html: the claims with their
verdicts (holds / fails / inconclusive / not evaluated) and the numbers
compared, then per figure the plots, the summary table and its claims.

Results already in DIR computed with the same parameters, seed, trials,
--quick flag and wcmc version are reused, so an interrupted or repeated
reproduction only computes what is missing.

Each claim is judged under the WVCMC optimisation protocols it is about
(in-sample claims under paper and converged, fresh-signal claims under
default and converged), so every experiment runs WVCMC under all three
protocols on the same samples and signals (--set protocols=… narrows it).

--set name=value applies to every selected experiment that has the
parameter. The MNIST experiments read the IDX files from --data-dir
(default ` + defaultMNISTDir + `); with all four files they run the
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
			if f.Changed("trials") && cfg.trials < 1 {
				return fmt.Errorf("--trials must be ≥ 1, got %d", cfg.trials)
			}
			if cfg.workers < 0 {
				return fmt.Errorf("--workers must be ≥ 0 (0 = all cores), got %d", cfg.workers)
			}
			if !f.Changed("out") {
				cfg.out = filepath.Join("results", "reproduce")
				if cfg.quick {
					cfg.out += "-quick"
				}
			}
			for _, doc := range cfg.updateDoc {
				// Checked before hours of running, not after.
				if _, _, _, err := readDocMarkers(doc); err != nil {
					return err
				}
			}
			cfg.dataSet = f.Changed("data-dir")
			cfg.command = reproduceCommandLine(cmd, cfg)
			finished := make(chan struct{})
			defer close(finished)
			watchSignals(finished, cmd.ErrOrStderr(), "the journals in "+cfg.out, cfg.command)
			err := reproduce(cmd.Context(), specs, cfg, cmd.OutOrStdout(), cmd.ErrOrStderr())
			if err != nil && cmd.Context().Err() != nil {
				return fmt.Errorf("stopped (%v); the finished tasks are saved in the journals in %s\nresume with:\n  %s", err, cfg.out, cfg.command)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.BoolVar(&cfg.quick, "quick", false, "smoke-sized runs (each experiment's quick settings; about a minute in all)")
	f.StringSliceVar(&cfg.only, "only", nil, "run only these experiments (comma-separated IDs)")
	f.StringVar(&cfg.out, "out", "", "output directory (default results/reproduce, or results/reproduce-quick with --quick)")
	f.Uint64Var(&cfg.seed, "seed", 1, "run seed; every task's seed derives from it")
	f.IntVar(&cfg.trials, "trials", 0, "trials per sweep point for every experiment (default: each experiment's)")
	f.StringArrayVar(&cfg.sets, "set", nil, "set a parameter of every experiment that has it, name=value (repeatable)")
	f.StringVar(&cfg.dataDir, "data-dir", defaultMNISTDir, "directory with the MNIST IDX files (default: also GoMNIST in the Go module cache)")
	f.IntVar(&cfg.workers, "workers", 0, "parallel workers (0 = all cores)")
	f.StringArrayVar(&cfg.updateDoc, "update-doc", nil, "also rewrite the verdict table between the markers\n"+docBegin+" and "+docEnd+" in this file (repeatable)")
	return cmd
}

// allProtocols is the "protocols" value that runs every protocol.
func allProtocols() string {
	names := make([]string, len(scheme.Protocols))
	for i, p := range scheme.Protocols {
		names[i] = string(p)
	}
	return strings.Join(names, ",")
}

// reproduceCommandLine reconstructs the invocation from the flags set.
func reproduceCommandLine(cmd *cobra.Command, cfg reproduceConfig) string {
	f := cmd.Flags()
	parts := []string{"wcmc reproduce"}
	if cfg.quick {
		parts = append(parts, "--quick")
	}
	if len(cfg.only) > 0 {
		parts = append(parts, "--only "+strings.Join(cfg.only, ","))
	}
	parts = append(parts, "--out "+cfg.out)
	if f.Changed("seed") {
		parts = append(parts, "--seed "+strconv.FormatUint(cfg.seed, 10))
	}
	if f.Changed("trials") {
		parts = append(parts, "--trials "+strconv.Itoa(cfg.trials))
	}
	for _, s := range cfg.sets {
		parts = append(parts, "--set "+s)
	}
	if f.Changed("data-dir") {
		parts = append(parts, "--data-dir "+cfg.dataDir)
	}
	return strings.Join(parts, " ")
}

// figureNumber returns N of a spec's "Fig. N", or a large number when it
// has none, to order a report as the paper does.
func figureNumber(s runner.Spec) int {
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(s.Figure, "Fig.")))
	if err != nil {
		return 1 << 30
	}
	return n
}

// hasParam reports whether spec declares parameter name.
func hasParam(spec runner.Spec, name string) bool {
	return slices.ContainsFunc(spec.Params, func(p runner.Param) bool { return p.Name == name })
}

// fileExists reports whether path exists (as any kind of file).
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// mnistSets returns the data_dir and split settings of an MNIST
// experiment and the report's settings line (the folder, the split and its
// sizes N and N_t), or why it cannot run; fatal marks a reason that is an
// error (data the user pointed at is missing). Without --data-dir it uses
// the default folder if it holds all four files, else GoMNIST in the Go
// module cache if it is there (never downloaded), else the default
// folder's two t10k files (the reduced split=t10k).
func mnistSets(cfg reproduceConfig, userSets map[string]bool) (sets []string, setting, notRun string, fatal bool) {
	if userSets["data_dir"] {
		dir, _ := lastSet(cfg.sets, "data_dir")
		return nil, fmt.Sprintf("MNIST data: %s (as given by --set data_dir), %s", dir, mnistSplitText(cfg.sets, dir, dataset.SplitFull)), "", false
	}
	dir, source := cfg.dataDir, ""
	found := dataset.MNISTSplitIn(dir)
	if !cfg.dataSet && found != dataset.SplitFull {
		if gm, ok := dataset.FindGoMNIST(); ok {
			dir, found = gm, dataset.SplitFull
			source = fmt.Sprintf(" (the Go module %s@%s in the module cache)", dataset.GoMNISTModule, dataset.GoMNISTVersion)
		}
	}
	if found == "" {
		files := fmt.Sprintf("%s, %s, %s and %s, plain or .gz; the two t10k files alone run the reduced split=t10k",
			dataset.MNISTTrainImages, dataset.MNISTTrainLabels, dataset.MNISTTestImages, dataset.MNISTTestLabels)
		if cfg.dataSet {
			return nil, "", fmt.Sprintf("no MNIST data: --data-dir %s does not hold the MNIST IDX files (%s); "+
				"`%s` fetches all four into the Go module cache: pass the data/ folder of the \"Dir\" it prints, or omit --data-dir",
				dir, files, dataset.GoMNISTDownload), true
		}
		return nil, "", fmt.Sprintf("no MNIST data in %s nor in the Go module cache (%s): run `%s` once "+
			"(wcmc reproduce then finds the files in the module cache), or pass --data-dir DIR holding the MNIST IDX files (%s)",
			dir, dataset.GoMNISTDir(dataset.GoModCache()), dataset.GoMNISTDownload, files), false
	}
	sets = []string{"data_dir=" + dir}
	if !userSets["split"] {
		sets = append(sets, "split="+found)
	}
	setting = fmt.Sprintf("MNIST data: %s%s, %s", dir, source, mnistSplitText(append(slices.Clone(cfg.sets), sets...), dir, found))
	if found == dataset.SplitT10k && !userSets["split"] {
		setting += "; the training files are absent, so the MNIST experiments run the reduced version on the t10k digits, split into training and held-out parts"
	}
	return sets, setting, "", false
}

// mnistSplitText names the split that sets select (defaultSplit if none)
// and its sizes N and N_t read from the label files in dir.
func mnistSplitText(sets []string, dir, defaultSplit string) string {
	split, ok := lastSet(sets, "split")
	if !ok {
		split = defaultSplit
	}
	class := func(name string, def int) int {
		if v, ok := lastSet(sets, name); ok {
			if n, err := strconv.Atoi(v); err == nil {
				return n
			}
		}
		return def
	}
	a, b := class("class_a", 0), class("class_b", 1)
	n, nt, err := dataset.MNISTSizes(dir, a, b, split)
	if err != nil {
		return fmt.Sprintf("split %s (sizes unknown: %v)", split, err)
	}
	what := "training and N_t = %d test digits"
	if split == dataset.SplitT10k {
		what = "training and N_t = %d held-out t10k digits"
	}
	return fmt.Sprintf("split %s: N = %d "+what+" (%d vs %d)", split, n, nt, a, b)
}

// lastSet returns the value of the last --set name=value in sets.
func lastSet(sets []string, name string) (string, bool) {
	for i := len(sets) - 1; i >= 0; i-- {
		if n, v, err := runner.ParseSet(sets[i]); err == nil && n == name {
			return v, true
		}
	}
	return "", false
}

// reproduce runs the selected experiments, reusing stored results, and
// writes the report.
func reproduce(ctx context.Context, specs []runner.Spec, cfg reproduceConfig, stdout, stderr io.Writer) error {
	start := time.Now()
	selected := specs
	if len(cfg.only) > 0 {
		selected = nil
		for _, id := range cfg.only {
			id = strings.TrimSpace(id)
			if id == "" {
				continue
			}
			s, err := findSpec(specs, id)
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(selected, func(x runner.Spec) bool { return x.ID == s.ID }) {
				selected = append(selected, s)
			}
		}
		if len(selected) == 0 {
			return errors.New("--only names no experiment")
		}
	}

	selected = slices.Clone(selected)
	slices.SortStableFunc(selected, func(a, b runner.Spec) int { return figureNumber(a) - figureNumber(b) })

	// Every --set must name a parameter of some selected experiment.
	userSets := map[string]bool{}
	setName := make([]string, len(cfg.sets))
	for i, s := range cfg.sets {
		name, _, err := runner.ParseSet(s)
		if err != nil {
			return err
		}
		setName[i] = name
		userSets[name] = true
		if name == "trials" {
			continue
		}
		if !slices.ContainsFunc(selected, func(sp runner.Spec) bool { return hasParam(sp, name) }) {
			return fmt.Errorf("--set %s: no selected experiment has a parameter %q (see `wcmc show ID`)", s, name)
		}
	}

	// Plan every experiment before running any, so that a bad setting
	// stops the command at once.
	type job struct {
		spec   runner.Spec
		plan   *runner.Plan
		opts   runner.Options
		notRun string
		fatal  bool
	}
	var (
		jobs     []job
		settings []string
	)
	for _, spec := range selected {
		var sets []string
		for j, s := range cfg.sets {
			if setName[j] == "trials" || hasParam(spec, setName[j]) {
				sets = append(sets, s)
			}
		}
		if hasParam(spec, "protocols") && !userSets["protocols"] {
			sets = append(sets, "protocols="+allProtocols())
		}
		if hasParam(spec, "data_dir") {
			extra, setting, notRun, fatal := mnistSets(cfg, userSets)
			if notRun != "" {
				// Asked for by name, it is an experiment that could not run.
				jobs = append(jobs, job{spec: spec, notRun: notRun, fatal: fatal || len(cfg.only) > 0})
				continue
			}
			if setting != "" && !slices.Contains(settings, setting) {
				settings = append(settings, setting)
			}
			sets = append(sets, extra...)
		}
		opts := runner.Options{Seed: cfg.seed, Trials: cfg.trials, Sets: sets, Quick: cfg.quick,
			Workers: cfg.workers, Progress: stderr}
		plan, err := runner.NewPlan(spec, opts)
		if err != nil {
			return err
		}
		jobs = append(jobs, job{spec: spec, plan: plan, opts: opts})
	}

	var (
		runs          []report.Run
		failed        []string
		warnedVersion bool
	)
	for i, j := range jobs {
		tag := fmt.Sprintf("[%d/%d] %s", i+1, len(jobs), j.spec.ID)
		if j.plan == nil {
			fmt.Fprintf(stderr, "%s: not run: %s\n", tag, j.notRun)
			runs = append(runs, report.Run{Spec: j.spec, NotRun: j.notRun, Failed: j.fatal})
			if j.fatal {
				failed = append(failed, j.spec.ID)
			}
			continue
		}
		res, reused, err := reproduceOne(ctx, j.plan, j.opts, cfg.out, tag, stderr)
		if reused && !warnedVersion && !runner.VersionTracksCode() {
			warnedVersion = true
			fmt.Fprintf(stderr, "note: stored results are matched on the wcmc version %q, which does not change with the code (a build without its git commit: go run, -buildvcs=false, or a modified tree): after changing the code, reproduce into a new --out\n", runner.Version)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fmt.Fprintf(stderr, "%s: could not run: %v\n", tag, err)
			runs = append(runs, report.Run{Spec: j.spec, NotRun: err.Error(), Failed: true})
			failed = append(failed, j.spec.ID)
			continue
		}
		runs = append(runs, report.Run{Spec: j.spec, Result: res})
	}

	meta := report.Meta{Command: cfg.command, Version: runner.Version, Seed: cfg.seed, Quick: cfg.quick,
		Trials: cfg.trials, Sets: cfg.sets, Settings: settings, Generated: time.Now(), Wall: time.Since(start)}
	rep := report.New(cfg.out, meta, runs)
	files, err := report.Write(cfg.out, rep)
	if err != nil {
		return err
	}
	for _, doc := range cfg.updateDoc {
		if err := updateDoc(doc, rep); err != nil {
			return err
		}
		files = append(files, doc)
	}
	fmt.Fprintln(stdout)
	if err := rep.WriteVerdictTable(stdout); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\nwrote:")
	for _, f := range files {
		fmt.Fprintf(stdout, "  %s\n", f)
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d experiment(s) could not run: %s (see the report)", len(failed), strings.Join(failed, ", "))
	}
	return nil
}

// reproduceOne returns the result of a planned experiment: the stored one
// in out if it matches the plan (reused), otherwise a fresh run (with opts,
// from which the plan was made) written to out.
func reproduceOne(ctx context.Context, plan *runner.Plan, opts runner.Options, out, tag string, stderr io.Writer) (res *runner.Result, reused bool, err error) {
	spec := plan.Spec
	res, err = runner.LoadMatching(out, plan)
	switch {
	case err == nil:
		if figuresPresent(out, spec) {
			fmt.Fprintf(stderr, "%s: reusing the results in %s (same parameters, seed, trials and version)\n", tag, out)
			return res, true, nil
		}
		fmt.Fprintf(stderr, "%s: reusing the results in %s; redrawing the missing figures\n", tag, out)
		if err := writeResult(out, res, stderr); err != nil {
			return nil, false, err
		}
		return res, true, nil
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(stderr, "%s: running (%d tasks)\n", tag, len(plan.Tasks))
	case errors.Is(err, runner.ErrMismatch):
		fmt.Fprintf(stderr, "%s: stored results differ (%v); running again\n", tag, err)
	default:
		fmt.Fprintf(stderr, "%s: cannot reuse the stored results (%v); running again\n", tag, err)
	}
	if err := discardOtherJournal(plan, out, tag, stderr); err != nil {
		return nil, false, err
	}
	// Journal the run in out, and continue one that was interrupted: an
	// interrupted reproduce picks up where it stopped.
	opts.Dir, opts.Resume = out, true
	res, err = runner.Run(ctx, spec, opts)
	if err != nil {
		return nil, false, err
	}
	if err := writeResult(out, res, stderr); err != nil {
		return nil, false, err
	}
	fmt.Fprintf(stderr, "%s: done in %s\n", tag, res.Wall.Round(100*time.Millisecond))
	return res, false, nil
}

// discardOtherJournal removes the journal in out of a run with other settings
// than plan (an interrupted --quick run before a full one, say), which a
// resume would refuse; reproduce reruns such results anyway.
func discardOtherJournal(plan *runner.Plan, out, tag string, stderr io.Writer) error {
	ipath := runner.IdentityPath(out, plan.Spec.ID)
	id, err := runner.ReadIdentity(ipath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil && len(plan.Mismatch(id)) == 0 {
		return nil
	}
	jpath := runner.JournalPath(out, plan.Spec.ID)
	fmt.Fprintf(stderr, "%s: discarding %s, the journal of a run with other settings\n", tag, jpath)
	for _, f := range []string{jpath, ipath} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// writeResult writes a result's files, printing figure warnings.
func writeResult(out string, res *runner.Result, stderr io.Writer) error {
	_, warns, err := runner.WriteFiles(out, res)
	for _, w := range warns {
		fmt.Fprintf(stderr, "%s: figure: %s\n", res.Spec.ID, w)
	}
	return err
}

// figuresPresent reports whether every SVG figure of spec is in dir.
func figuresPresent(dir string, spec runner.Spec) bool {
	for i, m := range spec.Metrics {
		name := spec.ID + ".svg"
		if i > 0 {
			name = spec.ID + "." + m + ".svg"
		}
		if !fileExists(filepath.Join(dir, name)) {
			return false
		}
	}
	return true
}

// readDocMarkers reads path and finds the verdict-table markers in it: the
// offsets of docBegin and docEnd.
func readDocMarkers(path string) (b []byte, begin, end int, err error) {
	b, err = os.ReadFile(path)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("--update-doc: %w", err)
	}
	begin = bytes.Index(b, []byte(docBegin))
	end = bytes.Index(b, []byte(docEnd))
	if begin < 0 || end < begin {
		return nil, 0, 0, fmt.Errorf("--update-doc %s: the file has no %q … %q markers", path, docBegin, docEnd)
	}
	return b, begin, end, nil
}

// updateDoc replaces the text between docBegin and docEnd in path with the
// report's verdict table.
func updateDoc(path string, rep *report.Report) error {
	b, i, j, err := readDocMarkers(path)
	if err != nil {
		return err
	}
	var table bytes.Buffer
	if err := rep.WriteVerdictTable(&table); err != nil {
		return err
	}
	var out bytes.Buffer
	out.Write(b[:i+len(docBegin)])
	out.WriteString("\n")
	out.Write(table.Bytes())
	out.Write(b[j:])
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(out.Bytes())
		return err
	})
}
