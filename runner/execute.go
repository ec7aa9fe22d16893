package runner

import (
	"context"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/wcmc-project/wcmc/internal/progress"
)

// RunTask runs one task with its derived rng and checks that the rows,
// skips and info name schemes and metrics of the spec.
func (p *Plan) RunTask(ctx context.Context, shared any, k TaskKey) (TaskResult, error) {
	xs := FormatX(k.X)
	out, err := p.run(fmt.Sprintf("experiment %s: task %s=%s trial %d", p.Spec.ID, p.Spec.X, xs, k.Trial), Task{
		Params: p.Values.With(p.Spec.X, xs),
		X:      k.X,
		Point:  k.Point,
		Trial:  k.Trial,
		Rng:    TaskRng(p.Seed, p.Spec.StreamID(), k.Trial),
		Shared: shared,
		Ctx:    ctx,
	}, nil)
	if err != nil {
		return TaskResult{}, err
	}
	return TaskResult{TaskKey: k, Rows: out.Rows, Skipped: out.Skipped, Info: out.Info}, nil
}

// RunTrajectory runs one trial of a Trajectory spec — the task receives
// the whole checkpoint list (Task.X is NaN, Task.Point −1) — and splits its
// rows by Row.X into one record per key. keys must be the trial's keys.
// Skips apply to every checkpoint; Info is recorded with the last key.
func (p *Plan) RunTrajectory(ctx context.Context, shared any, keys []TaskKey) ([]TaskResult, error) {
	trial := keys[0].Trial
	at := map[float64]int{}
	for i, k := range keys {
		at[k.X] = i
	}
	all := map[float64]int{}
	for i, x := range p.Values.XList() {
		all[x] = i
	}
	out, err := p.run(fmt.Sprintf("experiment %s: trial %d", p.Spec.ID, trial), Task{
		Params: p.Values,
		X:      math.NaN(),
		Point:  -1,
		Trial:  trial,
		Rng:    TaskRng(p.Seed, p.Spec.StreamID(), trial),
		Shared: shared,
		Ctx:    ctx,
	}, all)
	if err != nil {
		return nil, err
	}
	res := make([]TaskResult, len(keys))
	for i, k := range keys {
		res[i] = TaskResult{TaskKey: k, Skipped: out.Skipped}
	}
	for _, r := range out.Rows {
		// keys may be the part of a trial that an interrupted run did not
		// journal: the rows of the other checkpoints are already recorded.
		if i, ok := at[r.X]; ok {
			res[i].Rows = append(res[i].Rows, Row{Scheme: r.Scheme, Metric: r.Metric, Value: r.Value})
		}
	}
	res[len(res)-1].Info = out.Info
	return res, nil
}

// run calls Spec.Run, turning a panic into an error, and checks the
// output: known schemes and metrics; no NaN value (an error naming the
// task, scheme and metric: NaN is never written to a results file, while
// ±Inf, e.g. an infinite KL divergence, is a value); no scheme both skipped
// and reported; and for trajectories (checkpoints != nil) every row's X a
// checkpoint. Info is normalised to what it reads back as from JSON (see
// normaliseInfo), so that a journaled task and a task run in this process
// give the same record.
func (p *Plan) run(where string, t Task, checkpoints map[float64]int) (out TaskOutput, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: panic: %v\n%s", where, r, debug.Stack())
		}
	}()
	out, err = p.Spec.Run(t)
	if err != nil {
		return TaskOutput{}, fmt.Errorf("%s: %w", where, err)
	}
	for _, r := range out.Rows {
		if !slices.Contains(p.Spec.Schemes, r.Scheme) || !slices.Contains(p.Spec.Metrics, r.Metric) {
			return TaskOutput{}, fmt.Errorf("%s: row (%q, %q) names a scheme or metric not in the spec", where, r.Scheme, r.Metric)
		}
		if _, ok := checkpoints[r.X]; checkpoints != nil && !ok {
			return TaskOutput{}, fmt.Errorf("%s: row (%q, %q) at %s=%s, which is not a checkpoint", where, r.Scheme, r.Metric, p.Spec.X, FormatX(r.X))
		}
		if math.IsNaN(r.Value) {
			return TaskOutput{}, fmt.Errorf("%s: scheme %q reported %s = NaN; NaN is never written to a results file", where, r.Scheme, r.Metric)
		}
	}
	for _, s := range out.Skipped {
		if !slices.Contains(p.Spec.Schemes, s.Scheme) {
			return TaskOutput{}, fmt.Errorf("%s: skips unknown scheme %q", where, s.Scheme)
		}
		for _, r := range out.Rows {
			if r.Scheme == s.Scheme {
				return TaskOutput{}, fmt.Errorf("%s: scheme %q both skipped and reported", where, s.Scheme)
			}
		}
	}
	if out.Info, err = normaliseInfo(out.Info); err != nil {
		return TaskOutput{}, fmt.Errorf("%s: %w", where, err)
	}
	return out, nil
}

// units groups key indices into units of work: one key each, or for a
// Trajectory spec all the keys of one trial.
func (p *Plan) units(keys []TaskKey) [][]int {
	var out [][]int
	if !p.Spec.Trajectory {
		for i := range keys {
			out = append(out, []int{i})
		}
		return out
	}
	byTrial := map[int]int{}
	for i, k := range keys {
		u, ok := byTrial[k.Trial]
		if !ok {
			u = len(out)
			byTrial[k.Trial] = u
			out = append(out, nil)
		}
		out[u] = append(out[u], i)
	}
	return out
}

func (p *Plan) runUnit(ctx context.Context, shared any, keys []TaskKey, unit []int) ([]TaskResult, error) {
	if !p.Spec.Trajectory {
		r, err := p.RunTask(ctx, shared, keys[unit[0]])
		return []TaskResult{r}, err
	}
	ks := make([]TaskKey, len(unit))
	for i, j := range unit {
		ks[i] = keys[j]
	}
	return p.RunTrajectory(ctx, shared, ks)
}

// Execute runs the given tasks on opts.Workers goroutines and returns their
// records in the order of keys, whatever the order they finish in. The
// first task error cancels the others and is returned; if ctx is cancelled
// no new task starts (a worker checks it before each) and ctx.Err() is
// returned.
func (p *Plan) Execute(ctx context.Context, shared any, keys []TaskKey, opts Options) ([]TaskResult, error) {
	units := p.units(keys)
	workers := max(1, min(opts.workers(), len(units)))
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	type done struct {
		u   int
		res []TaskResult
		err error
	}
	jobs := make(chan int)
	finished := make(chan done)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range jobs {
				if ctx.Err() != nil {
					// Cancelled after the unit was handed over: it does
					// not start (the run returns the cancellation).
					continue
				}
				r, err := p.runUnit(ctx, shared, keys, units[u])
				finished <- done{u, r, err}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for i := range units {
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(finished) }()

	prog := progress.New(opts.Progress, p.Spec.ID, "task", len(keys))
	ticker := time.NewTicker(prog.Every())
	defer ticker.Stop()
	results := make([]TaskResult, len(keys))
	var firstErr error
	recordFailed := false
	fail := func(err error) {
		if firstErr == nil {
			firstErr = err
			cancel()
		}
	}
	for open := true; open; {
		select {
		case d, ok := <-finished:
			if !ok {
				open = false
				break
			}
			if d.err != nil {
				fail(d.err)
				continue
			}
			// A task that finished is recorded even when the run is being
			// aborted (by another task's error or ctx): it is valid work
			// that a resumed run need not redo.
			for j, i := range units[d.u] {
				results[i] = d.res[j]
				prog.Add(1)
				if opts.OnTask != nil && !recordFailed {
					if err := opts.OnTask(d.res[j]); err != nil {
						recordFailed = true
						fail(fmt.Errorf("experiment %s: recording task: %w", p.Spec.ID, err))
					}
				}
			}
		case <-ticker.C:
			prog.Tick()
		}
	}
	if err := parent.Err(); err != nil {
		prog.Stop()
		return nil, err // a cancelled run, not the task errors it caused
	}
	if firstErr != nil {
		prog.Stop()
		return nil, firstErr
	}
	prog.Finish()
	return results, nil
}

// Compute runs the tasks keys of the plan: it calls Spec.Setup once (not
// at all when keys is empty), opts.OnSetup, and then Execute. It also
// returns what the Setup state reports (see SetupInfo; nil when keys is
// empty).
func (p *Plan) Compute(ctx context.Context, keys []TaskKey, opts Options) ([]TaskResult, map[string]map[string]any, error) {
	if len(keys) == 0 {
		return nil, nil, nil
	}
	shared, err := p.Setup()
	if err != nil {
		return nil, nil, err
	}
	info, err := SetupInfo(shared)
	if err != nil {
		return nil, nil, fmt.Errorf("experiment %s: %w", p.Spec.ID, err)
	}
	if opts.OnSetup != nil {
		if err := opts.OnSetup(info); err != nil {
			return nil, nil, fmt.Errorf("experiment %s: recording the setup's report: %w", p.Spec.ID, err)
		}
	}
	tasks, err := p.Execute(ctx, shared, keys, opts)
	return tasks, info, err
}

// Collect assembles the Result of shard opts.Shard of the run from its
// task records (see Plan.Result), ending now, as computed by this process
// (one Session, with opts.Machine; a resumed run of package journal lists
// the sessions its journal records instead), and prints each skip note
// once to opts.Progress.
func (p *Plan) Collect(tasks []TaskResult, start time.Time, opts Options) *Result {
	res := p.Result(tasks, start, time.Now())
	res.Shard = opts.Shard.Canonical()
	res.Sessions = []Session{opts.Session(start, len(tasks), res.Wall)}
	if opts.Progress != nil {
		for _, n := range res.Notes {
			fmt.Fprintf(opts.Progress, "note: %s\n", n)
		}
	}
	return res
}

// Run validates the parameters (see Resolve), calls Spec.Setup once, runs
// every (point, trial) task of opts.Shard on a worker pool, and returns the
// collected result. The result is identical for any Workers or GOMAXPROCS:
// each task's rng derives from (Seed, spec's StreamID, trial) (see TaskRng) and
// the records are ordered by (point, trial). Skip notes are printed once to
// opts.Progress. Package journal runs the same sweep durably.
func Run(ctx context.Context, spec Spec, opts Options) (*Result, error) {
	plan, err := NewPlan(spec, opts)
	if err != nil {
		return nil, err
	}
	keys, err := plan.ShardTasks(opts.Shard)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	tasks, info, err := plan.Compute(ctx, keys, opts)
	if err != nil {
		return nil, err
	}
	res := plan.Collect(tasks, start, opts)
	res.RunInfo = info
	return res, nil
}
