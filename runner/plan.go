package runner

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"
)

// Options configures a run. The zero value runs the spec's default trials
// with seed 0 on GOMAXPROCS workers, silently. Package journal adds the
// directory that makes a run durable.
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
	// OnSetup, if set, is called once Setup has run, before any task
	// starts, with what its state reports (see SetupInfo; nil when it
	// reports nothing), e.g. to journal it; an error aborts the run.
	OnSetup func(info map[string]map[string]any) error
	// Shard runs one slice of the tasks (see Plan.ShardTasks); the zero
	// value runs them all.
	Shard Shard
	// Machine describes the machine this process runs on (for wcmc's
	// commands, machine.Describe), recorded with the tasks it computes
	// (Result.Sessions); "" records none.
	Machine string
}

// workers is the number of tasks run at once: Workers, or GOMAXPROCS.
func (o Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// Session is this process's share of a run that began at began and
// computed tasks tasks in wall (with the machine and workers of o).
func (o Options) Session(began time.Time, tasks int, wall time.Duration) Session {
	return Session{Began: began, Tasks: tasks, Wall: wall, Machine: o.Machine, Workers: o.workers()}
}

// MaxTasks bounds the number of (point, trial) tasks of one run (a guard
// against a mistyped --trials, far above any real sweep).
const MaxTasks = 10_000_000

// Plan is a validated run: the spec, its parameters, and the explicit task
// list (points × trials, ordered by point then trial).
type Plan struct {
	Spec   Spec
	Values Values
	Trials int
	Seed   uint64
	Quick  bool
	Tasks  []TaskKey
	// Inputs holds the digests of the data the data-folder parameters
	// name (Param.Digest) once known: computed by InputDigests on first
	// use, or set from a journal that recorded them; nil until then.
	Inputs map[string]string
}

// NewPlan validates opts.Sets, opts.Quick and opts.Trials against spec
// (see Resolve) and lists the tasks. Workers, Progress, OnTask, OnSetup
// and Machine are not used.
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
// from SetupRng, under the pprof label stage=setup (so that a CPU profile
// tells the setup from the tasks: internal/stageprof).
func (p *Plan) Setup() (any, error) {
	if p.Spec.Setup == nil {
		return nil, nil
	}
	var (
		shared any
		err    error
	)
	pprof.Do(context.Background(), pprof.Labels("stage", "setup"), func(context.Context) {
		shared, err = p.Spec.Setup(p.Values, SetupRng(p.Seed, p.Spec.StreamID()))
	})
	if err != nil {
		return nil, fmt.Errorf("experiment %s: setup: %w", p.Spec.ID, err)
	}
	return shared, nil
}

// CheckRecord checks that a task record read back from a file is a task of
// the plan's run: its point and x match the sweep, its trial is in range,
// and its rows and skips name schemes and metrics of the spec, with no NaN
// value.
func (p *Plan) CheckRecord(r TaskResult) error {
	xs := p.Values.XList()
	where := fmt.Sprintf("task %s=%s trial %d", p.Spec.X, FormatX(r.X), r.Trial)
	switch {
	case r.Point < 0 || r.Point >= len(xs):
		return fmt.Errorf("%s: point %d is not in the sweep (%d points)", where, r.Point, len(xs))
	case xs[r.Point] != r.X:
		return fmt.Errorf("%s: point %d of the sweep is %s=%s", where, r.Point, p.Spec.X, FormatX(xs[r.Point]))
	case r.Trial < 0 || r.Trial >= p.Trials:
		return fmt.Errorf("%s: trial out of range 0..%d", where, p.Trials-1)
	}
	for _, row := range r.Rows {
		if !slices.Contains(p.Spec.Schemes, row.Scheme) || !slices.Contains(p.Spec.Metrics, row.Metric) {
			return fmt.Errorf("%s: row (%q, %q) names a scheme or metric not in %s", where, row.Scheme, row.Metric, p.Spec.ID)
		}
		if math.IsNaN(row.Value) {
			return fmt.Errorf("%s: scheme %q: %s = NaN", where, row.Scheme, row.Metric)
		}
	}
	for _, s := range r.Skipped {
		if !slices.Contains(p.Spec.Schemes, s.Scheme) {
			return fmt.Errorf("%s: skips scheme %q, not in %s", where, s.Scheme, p.Spec.ID)
		}
	}
	for s := range r.Info {
		if r.Info[s] == nil {
			return fmt.Errorf("%s: info of %q is null", where, s)
		}
	}
	return nil
}
