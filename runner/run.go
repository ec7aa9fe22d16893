package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"time"
)

// Options configures Run. The zero value runs the spec's default trials
// with seed 0 on GOMAXPROCS workers, silently.
type Options struct {
	Seed     uint64
	Trials   int      // 0: the spec's default (or its quick value)
	Sets     []string // "name=value" overrides, see ParseSet
	Quick    bool     // apply Spec.Quick
	Workers  int      // 0: GOMAXPROCS
	Progress io.Writer
	// OnTask, if set, is called serially, in completion order, with each
	// finished task's record (e.g. to journal it); an error aborts the run.
	OnTask func(TaskResult) error
	// Dir, if set, makes Run journal the run in Dir: its Identity goes to
	// Dir/ID.run.json before any task runs, and each finished task is
	// appended to Dir/ID.journal.jsonl and synced to disk as it finishes,
	// so that a run killed at any instant loses no finished task. Without
	// Resume, a journal already holding finished tasks is refused
	// (ErrUnfinished), never overwritten; one process at a time may write
	// a journal.
	Dir string
	// Resume continues the run journaled in Dir: its finished tasks are
	// kept and only the others run. The parameters, seed, trials and shard
	// must be those of the journaled run.
	Resume bool
	// Shard runs one slice of the tasks (see Plan.ShardTasks); the zero
	// value runs them all.
	Shard Shard
}

// MaxTasks bounds the number of (point, trial) tasks of one run (a guard
// against a mistyped --trials, far above any real sweep).
const MaxTasks = 10_000_000

// TaskKey identifies one task of a run: a sweep point and a trial.
type TaskKey struct {
	Point int     `json:"point"` // index of X in the sweep list
	X     float64 `json:"x"`
	Trial int     `json:"trial"`
}

// TaskResult is the self-contained record of one finished task.
type TaskResult struct {
	TaskKey
	Rows    []Row                     `json:"rows"`
	Skipped []Skip                    `json:"skipped,omitempty"`
	Info    map[string]map[string]any `json:"info,omitempty"`
}

// Note is a scheme skipped at a sweep point, with the reason.
type Note struct {
	Scheme string  `json:"scheme"`
	XName  string  `json:"x_name"`
	X      float64 `json:"x"`
	Reason string  `json:"reason"`
}

func (n Note) String() string {
	return fmt.Sprintf("%s not applicable at %s=%s: %s", n.Scheme, n.XName, FormatX(n.X), n.Reason)
}

// Result is a finished run.
type Result struct {
	Spec   Spec
	Values Values
	Seed   uint64
	Trials int
	Quick  bool
	// Tasks holds every task's record ordered by (point, trial).
	Tasks []TaskResult
	// Notes lists the distinct skips in task order.
	Notes      []Note
	Start, End time.Time
	// Wall is the wall time spent computing the result: End − Start for a
	// run done in one go; for a resumed run, the sum over its sessions
	// (see sessionsTime), without the time between them.
	Wall time.Duration
	// Shard is the slice of the run that Tasks holds (0/1: all of it).
	Shard Shard
	// Resumed counts the tasks taken from the journal of an earlier,
	// interrupted process rather than run by this one.
	Resumed int
}

// Plan is a validated run: the spec, its parameters, and the explicit task
// list (points × trials, ordered by point then trial).
type Plan struct {
	Spec   Spec
	Values Values
	Trials int
	Seed   uint64
	Quick  bool
	Tasks  []TaskKey
}

// NewPlan validates opts.Sets, opts.Quick and opts.Trials against spec
// (see Resolve) and lists the tasks. Workers, Progress and OnTask are not
// used.
func NewPlan(spec Spec, opts Options) (*Plan, error) {
	if opts.Workers < 0 {
		return nil, fmt.Errorf("workers must be ≥ 0 (0 = all cores), got %d", opts.Workers)
	}
	v, trials, err := Resolve(spec, opts.Sets, opts.Quick, opts.Trials)
	if err != nil {
		return nil, err
	}
	if n := len(v.XList()); trials > MaxTasks/n {
		return nil, fmt.Errorf("experiment %s: %d sweep points × %d trials is more than %d tasks; use fewer trials", spec.ID, n, trials, MaxTasks)
	}
	return &Plan{Spec: spec, Values: v, Trials: trials, Seed: opts.Seed, Quick: opts.Quick,
		Tasks: Tasks(v, trials)}, nil
}

// Tasks lists the tasks of a run: for each sweep point of v in order, the
// trials 0..trials-1.
func Tasks(v Values, trials int) []TaskKey {
	xs := v.XList()
	out := make([]TaskKey, 0, len(xs)*trials)
	for i, x := range xs {
		for t := range trials {
			out = append(out, TaskKey{Point: i, X: x, Trial: t})
		}
	}
	return out
}

// Setup calls Spec.Setup (if any) with the full parameter set and the rng
// from SetupRng.
func (p *Plan) Setup() (any, error) {
	if p.Spec.Setup == nil {
		return nil, nil
	}
	shared, err := p.Spec.Setup(p.Values, SetupRng(p.Seed, p.Spec.ID))
	if err != nil {
		return nil, fmt.Errorf("experiment %s: setup: %w", p.Spec.ID, err)
	}
	return shared, nil
}

// RunTask runs one task with its derived rng and checks that the rows,
// skips and info name schemes and metrics of the spec.
func (p *Plan) RunTask(ctx context.Context, shared any, k TaskKey) (TaskResult, error) {
	xs := FormatX(k.X)
	out, err := p.run(fmt.Sprintf("experiment %s: task %s=%s trial %d", p.Spec.ID, p.Spec.X, xs, k.Trial), Task{
		Params: p.Values.With(p.Spec.X, xs),
		X:      k.X,
		Point:  k.Point,
		Trial:  k.Trial,
		Rng:    TaskRng(p.Seed, p.Spec.ID, k.X, k.Trial),
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
		Rng:    TaskRng(p.Seed, p.Spec.ID, math.NaN(), trial),
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
// outcome: known schemes and metrics; no NaN value (an error naming the
// task, scheme and metric: NaN is never written to a results file, while
// ±Inf, e.g. an infinite KL divergence, is a value); no scheme both skipped
// and reported; and for trajectories (checkpoints != nil) every row's X a
// checkpoint. Info is normalised to what it reads back as from JSON (see
// normaliseInfo), so that a journaled task and a task run in this process
// give the same record.
func (p *Plan) run(where string, t Task, checkpoints map[float64]int) (out Outcome, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: panic: %v\n%s", where, r, debug.Stack())
		}
	}()
	out, err = p.Spec.Run(t)
	if err != nil {
		return Outcome{}, fmt.Errorf("%s: %w", where, err)
	}
	for _, r := range out.Rows {
		if !slices.Contains(p.Spec.Schemes, r.Scheme) || !slices.Contains(p.Spec.Metrics, r.Metric) {
			return Outcome{}, fmt.Errorf("%s: row (%q, %q) names a scheme or metric not in the spec", where, r.Scheme, r.Metric)
		}
		if _, ok := checkpoints[r.X]; checkpoints != nil && !ok {
			return Outcome{}, fmt.Errorf("%s: row (%q, %q) at %s=%s, which is not a checkpoint", where, r.Scheme, r.Metric, p.Spec.X, FormatX(r.X))
		}
		if math.IsNaN(r.Value) {
			return Outcome{}, fmt.Errorf("%s: scheme %q reported %s = NaN; NaN is never written to a results file", where, r.Scheme, r.Metric)
		}
	}
	for _, s := range out.Skipped {
		if !slices.Contains(p.Spec.Schemes, s.Scheme) {
			return Outcome{}, fmt.Errorf("%s: skips unknown scheme %q", where, s.Scheme)
		}
		for _, r := range out.Rows {
			if r.Scheme == s.Scheme {
				return Outcome{}, fmt.Errorf("%s: scheme %q both skipped and reported", where, s.Scheme)
			}
		}
	}
	if out.Info, err = normaliseInfo(out.Info); err != nil {
		return Outcome{}, fmt.Errorf("%s: %w", where, err)
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
// no new task starts and ctx.Err() is returned.
func (p *Plan) Execute(ctx context.Context, shared any, keys []TaskKey, opts Options) ([]TaskResult, error) {
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	units := p.units(keys)
	workers = max(1, min(workers, len(units)))
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

	prog := newProgress(opts.Progress, p.Spec.ID, len(keys))
	ticker := time.NewTicker(progressEvery)
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
				prog.done++
				if opts.OnTask != nil && !recordFailed {
					if err := opts.OnTask(d.res[j]); err != nil {
						recordFailed = true
						fail(fmt.Errorf("experiment %s: recording task: %w", p.Spec.ID, err))
					}
				}
			}
		case <-ticker.C:
			prog.tick()
		}
	}
	if err := parent.Err(); err != nil {
		return nil, err // a cancelled run, not the task errors it caused
	}
	if firstErr != nil {
		return nil, firstErr
	}
	prog.finish()
	return results, nil
}

// Result assembles a Result from task records (in any order).
func (p *Plan) Result(tasks []TaskResult, start, end time.Time) *Result {
	tasks = slices.Clone(tasks)
	slices.SortStableFunc(tasks, func(a, b TaskResult) int {
		return cmp.Or(cmp.Compare(a.Point, b.Point), cmp.Compare(a.Trial, b.Trial))
	})
	res := &Result{Spec: p.Spec, Values: p.Values, Seed: p.Seed, Trials: p.Trials, Quick: p.Quick,
		Tasks: tasks, Start: start, End: end, Wall: end.Sub(start)}
	seen := map[Note]bool{}
	for _, t := range tasks {
		for _, s := range t.Skipped {
			n := Note{Scheme: s.Scheme, XName: p.Spec.X, X: t.X, Reason: s.Reason}
			if !seen[n] {
				seen[n] = true
				res.Notes = append(res.Notes, n)
			}
		}
	}
	return res
}

// Run validates the parameters (see Resolve), calls Spec.Setup once, runs
// every (point, trial) task of opts.Shard on a worker pool, and returns the
// collected result. The result is identical for any Workers or GOMAXPROCS:
// each task's rng derives from (Seed, spec ID, x, trial) (see TaskRng) and
// the records are ordered by (point, trial). Skip notes are printed once to
// opts.Progress.
//
// With opts.Dir, every finished task is journaled as it finishes (see
// Options.Dir); with opts.Resume the tasks already journaled are not run
// again, and the result is the same as that of an uninterrupted run. A run
// stopped by ctx then returns an *Interrupted error.
func Run(ctx context.Context, spec Spec, opts Options) (*Result, error) {
	plan, err := NewPlan(spec, opts)
	if err != nil {
		return nil, err
	}
	keys, err := plan.ShardTasks(opts.Shard)
	if err != nil {
		return nil, err
	}
	if opts.Resume && opts.Dir == "" {
		return nil, errors.New("resuming needs the directory of the run's journal (Options.Dir)")
	}
	start := time.Now()
	var (
		done    []TaskResult
		journal *journalFile
	)
	if opts.Dir != "" {
		journal, done, start, err = plan.openJournal(opts.Dir, opts.Shard, keys, opts.Resume, opts.Progress)
		if err != nil {
			return nil, fmt.Errorf("experiment %s: %w", spec.ID, err)
		}
		defer journal.Close()
		user := opts.OnTask
		opts.OnTask = func(r TaskResult) error {
			if err := journal.Append(r); err != nil {
				return err
			}
			if user != nil {
				return user(r)
			}
			return nil
		}
	}
	todo := remaining(keys, done)
	var tasks []TaskResult
	if len(todo) > 0 {
		shared, err := plan.Setup()
		if err != nil {
			return nil, err
		}
		tasks, err = plan.Execute(ctx, shared, todo, opts)
		if err != nil {
			if journal == nil {
				return nil, err
			}
			saved := len(done) + journal.n
			if ctx.Err() != nil {
				return nil, &Interrupted{Journal: journal.Path(), Done: saved, Total: len(keys), Err: err}
			}
			return nil, fmt.Errorf("%w\n(%d of %d tasks finished and are saved in %s)", err, saved, len(keys), journal.Path())
		}
	}
	res := plan.Result(append(done, tasks...), start, time.Now())
	res.Shard, res.Resumed = opts.Shard.norm(), len(done)
	if journal != nil && len(done) > 0 {
		res.Wall = journal.earlier + res.End.Sub(journal.began)
	}
	if opts.Progress != nil {
		for _, n := range res.Notes {
			fmt.Fprintf(opts.Progress, "note: %s\n", n)
		}
	}
	return res, nil
}
