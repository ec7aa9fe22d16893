// Package reproduce runs the paper's reproduction: it selects and orders
// the experiments, plans every one before running any (so that a bad
// setting stops it at once), runs each under every optimisation protocol,
// reuses the stored results in the output directory that match the plan
// (and resumes an interrupted run from its journal), finds the MNIST data,
// judges the paper's claims and writes the report (package report), and
// optionally rewrites the verdict table in documents (UpdateDoc).
package reproduce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wcmc-project/wcmc/claims"
	"github.com/wcmc-project/wcmc/diagnostics"
	"github.com/wcmc-project/wcmc/internal/machine"
	"github.com/wcmc-project/wcmc/internal/stageprof"
	"github.com/wcmc-project/wcmc/report"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/results"
	"github.com/wcmc-project/wcmc/scheme"
)

// Config is what a reproduction runs and where it writes.
type Config struct {
	Quick bool // smoke-sized runs (each experiment's quick settings)
	// ReuseVersions are wcmc versions whose stored results are reused as
	// if this version had computed them (the caller knows the computation
	// did not change between them); the report names them.
	ReuseVersions []string
	// ChainLimits are the thresholds of the report's chain-diagnostics
	// warnings (zero: diagnostics.Recommended).
	ChainLimits diagnostics.Thresholds
	Only        []string // run only these experiment IDs (all when empty)
	Out         string   // output directory: results, journals and the report
	Seed        uint64   // run seed
	Trials      int      // trials per sweep point (0: each experiment's default)
	Sets        []string // "name=value", for every selected experiment that has the parameter
	Workers     int      // parallel workers (0: all cores)
	// DataDir holds the MNIST IDX files. Unless DataDirGiven, it is only the
	// first place looked in: without all four files there, GoMNIST in the
	// Go module cache is used if present (see mnistSets).
	DataDir      string
	DataDirGiven bool
	// UpdateDoc lists documents whose verdict table, between DocBegin and
	// DocEnd, is rewritten (see CheckDoc).
	UpdateDoc []string
	// Command is the command line stated in the report, with its paths as
	// Shown shows them (no path of this machine outside the checkout).
	Command string
	// Band is what the figures' bands show (results.BandCI when zero).
	Band results.Band
	// RedrawFigures redraws the figures of reused results too (e.g. with
	// another Band); otherwise only missing ones are drawn.
	RedrawFigures bool
	// Profile, if not empty, is a directory for a CPU and an allocation
	// profile of each experiment computed (not reused) and PROFILE.md,
	// their CPU time by stage (internal/stageprof).
	Profile string
}

// Summary is what a reproduction produced: its report, the files written
// (the report's and the updated documents) and the experiments that could
// not run.
type Summary struct {
	Report *report.Report
	Files  []string
	Failed []string
}

// AllProtocols is the "protocols" value that runs every protocol.
func AllProtocols() string {
	return scheme.Join(scheme.Protocols, ",")
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

// FigureOrder returns specs in the paper's figure order (those without a
// figure last, each group in its given order).
func FigureOrder(specs []runner.Spec) []runner.Spec {
	out := slices.Clone(specs)
	slices.SortStableFunc(out, func(a, b runner.Spec) int { return figureNumber(a) - figureNumber(b) })
	return out
}

// hasParam reports whether spec declares parameter name.
func hasParam(spec runner.Spec, name string) bool {
	return slices.ContainsFunc(spec.Params, func(p runner.Param) bool { return p.Name == name })
}

// job is one selected experiment: its plan and options, or why it does
// not run.
type job struct {
	spec   runner.Spec
	plan   *runner.Plan
	opts   runner.Options
	notRun string
	fatal  bool
}

// Run runs the selected experiments of specs, reusing the stored results
// in cfg.Out that match their plans, and writes the report there. Progress
// goes to log. It refuses a document of cfg.UpdateDoc without markers
// before running anything. When some experiments could not run, the
// report is still written: the summary says which, and the error too.
func Run(ctx context.Context, specs []runner.Spec, cfg Config, log io.Writer) (*Summary, error) {
	start := time.Now()
	for _, doc := range cfg.UpdateDoc {
		// Checked before hours of running, not after.
		if err := CheckDoc(doc); err != nil {
			return nil, err
		}
	}
	jobs, settings, err := plan(specs, cfg, log)
	if err != nil {
		return nil, err
	}

	var prof *stageprof.Recorder
	if cfg.Profile != "" {
		if prof, err = stageprof.NewRecorder(cfg.Profile); err != nil {
			return nil, err
		}
	}
	var (
		runs          []report.Run
		failed        []string
		warnedVersion bool
		byID          = map[string]*runner.Result{}
	)
	for i, j := range jobs {
		tag := fmt.Sprintf("[%d/%d] %s", i+1, len(jobs), j.spec.ID)
		if j.plan == nil {
			fmt.Fprintf(log, "%s: not run: %s\n", tag, j.notRun)
			runs = append(runs, report.Run{Spec: j.spec, NotRun: j.notRun, Failed: j.fatal})
			if j.fatal {
				failed = append(failed, j.spec.ID)
			}
			continue
		}
		fig := figureOptions{results.Options{Band: cfg.Band}, cfg.RedrawFigures}
		var (
			res    *runner.Result
			reused bool
		)
		if shared := sameRun(byID[j.spec.StreamID()], j.plan); shared != nil {
			fmt.Fprintf(log, "%s: the results of %s (the same streams, parameters, seed and trials)\n", tag, j.spec.StreamID())
			res, reused, err = shared, true, writeResult(cfg.Out, shared, fig.Options, log)
		} else {
			res, reused, err = runOne(ctx, j.plan, j.opts, fig, cfg.Out, tag, cfg.ReuseVersions, prof, log)
			if err == nil && reused && prof != nil {
				// The profile of the computation reused, if it was
				// profiled into the same directory.
				if _, err = prof.Load(j.spec.ID, res.Version); err != nil {
					return nil, err
				}
			}
		}
		if reused && !warnedVersion && !runner.VersionTracksCode() {
			warnedVersion = true
			fmt.Fprintf(log, "note: stored results are matched on the wcmc version %q, which does not change with the code (a build without its git commit: go run, -buildvcs=false, or a modified tree): after changing the code, reproduce into a new --out\n", runner.Version)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			fmt.Fprintf(log, "%s: could not run: %v\n", tag, err)
			runs = append(runs, report.Run{Spec: j.spec, NotRun: err.Error(), Failed: true})
			failed = append(failed, j.spec.ID)
			continue
		}
		// The report names the version that computed each result
		// (report.Report's settings line).
		runs = append(runs, report.Run{Spec: j.spec, Result: res})
		byID[j.spec.ID] = res
	}

	if prof != nil {
		path, err := writeProfile(cfg, prof)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "profiles: %s\n", path)
	}

	meta := report.Meta{Command: cfg.Command, Version: runner.Version, Seed: cfg.Seed, Quick: cfg.Quick, ChainLimits: cfg.ChainLimits,
		Trials: cfg.Trials, Sets: cfg.Sets, Settings: settings, Generated: time.Now()}
	rep := report.New(cfg.Out, meta, runs)
	// The invocation's time includes judging the claims (report.New),
	// which is most of it when every result is reused.
	rep.Meta.Wall = time.Since(start)
	files, err := report.Write(cfg.Out, rep)
	if err != nil {
		return nil, err
	}
	for _, doc := range cfg.UpdateDoc {
		if err := UpdateDoc(doc, rep); err != nil {
			return nil, err
		}
		files = append(files, doc)
	}
	sum := &Summary{Report: rep, Files: files, Failed: failed}
	if len(failed) > 0 {
		return sum, fmt.Errorf("%d experiment(s) could not run: %s (see the report)", len(failed), strings.Join(failed, ", "))
	}
	return sum, nil
}

// plan selects the experiments (the paper's figures, runner.Spec.PaperFigure,
// or those of cfg.Only, in the paper's figure order; an experiment beyond
// the paper can be named when the project states claims about it,
// claims.For),
// checks that every --set names a parameter of one of them, and plans each
// with its settings: the sets it has, every protocol it can afford unless
// --set protocols is given (protocolsFor), and the MNIST data (see
// mnistSets). It returns the
// jobs and the report's settings lines.
func plan(specs []runner.Spec, cfg Config, log io.Writer) ([]job, []string, error) {
	selected := slices.DeleteFunc(slices.Clone(specs), func(s runner.Spec) bool { return !s.PaperFigure() })
	if len(cfg.Only) > 0 {
		selected = nil
		for _, id := range cfg.Only {
			id = strings.TrimSpace(id)
			if id == "" {
				continue
			}
			s, err := runner.Find(specs, id)
			if err != nil {
				return nil, nil, err
			}
			if !s.PaperFigure() && len(claims.For(s.ID)) == 0 {
				return nil, nil, fmt.Errorf("--only %s: not one of the paper's figures (figure %q), and the project states no claims about it: run it with `wcmc run %s`", s.ID, s.Figure, s.ID)
			}
			if !slices.ContainsFunc(selected, func(x runner.Spec) bool { return x.ID == s.ID }) {
				selected = append(selected, s)
			}
		}
		if len(selected) == 0 {
			return nil, nil, errors.New("--only names no experiment")
		}
	}

	selected = FigureOrder(selected)
	here := machine.Describe()

	// Every --set must name a parameter of some selected experiment.
	userSets := map[string]bool{}
	setName := make([]string, len(cfg.Sets))
	for i, s := range cfg.Sets {
		name, _, err := runner.ParseSet(s)
		if err != nil {
			return nil, nil, err
		}
		setName[i] = name
		userSets[name] = true
		if name == "trials" {
			continue
		}
		if !slices.ContainsFunc(selected, func(sp runner.Spec) bool { return hasParam(sp, name) }) {
			return nil, nil, fmt.Errorf("--set %s: no selected experiment has a parameter %q (see `wcmc show ID`)", s, name)
		}
	}

	// Plan every experiment before running any, so that a bad setting
	// stops the command at once.
	var (
		jobs     []job
		settings []string
	)
	for _, spec := range selected {
		var sets []string
		for j, s := range cfg.Sets {
			if setName[j] == "trials" || hasParam(spec, setName[j]) {
				sets = append(sets, s)
			}
		}
		if hasParam(spec, "protocols") && !userSets["protocols"] {
			value, setting := protocolsFor(spec.ID, cfg.Quick)
			sets = append(sets, "protocols="+value)
			if setting != "" {
				settings = append(settings, setting)
			}
		}
		if hasParam(spec, "data_dir") {
			extra, setting, notRun, fatal := mnistSets(cfg, userSets)
			if notRun != "" {
				// Asked for by name, it is an experiment that could not run.
				jobs = append(jobs, job{spec: spec, notRun: notRun, fatal: fatal || len(cfg.Only) > 0})
				continue
			}
			if setting != "" && !slices.Contains(settings, setting) {
				settings = append(settings, setting)
			}
			sets = append(sets, extra...)
		}
		opts := runner.Options{Seed: cfg.Seed, Trials: cfg.Trials, Sets: sets, Quick: cfg.Quick,
			Workers: cfg.Workers, Progress: log, Machine: here}
		plan, err := runner.NewPlan(spec, opts)
		if err != nil {
			return nil, nil, err
		}
		jobs = append(jobs, job{spec: spec, plan: plan, opts: opts})
	}
	return jobs, settings, nil
}

// sameRun returns res as the result of plan when plan's spec draws res's
// streams (runner.Spec.Streams) with the same parameters, seed, trials and
// quick flag — the same computation — and nil otherwise.
func sameRun(res *runner.Result, plan *runner.Plan) *runner.Result {
	if res == nil || plan.Spec.StreamID() != res.Spec.ID || res.Seed != plan.Seed || res.Trials != plan.Trials || res.Quick != plan.Quick ||
		len(res.Spec.Params) != len(plan.Spec.Params) {
		return nil
	}
	for _, p := range plan.Spec.Params {
		if !slices.ContainsFunc(res.Spec.Params, func(q runner.Param) bool { return q.Name == p.Name && q.Kind == p.Kind }) ||
			!plan.SameSetting(p, res.Values.Raw(p.Name), res.InputDigests) {
			return nil
		}
	}
	out := *res
	out.Spec = plan.Spec
	return &out
}
