// Package runner is the sweep engine for Monte Carlo experiments: it
// validates a parameter set (Spec, Values), plans the work as (sweep point,
// trial) tasks (Plan, Shard), derives each task's random seed from the run
// seed, runs the tasks in parallel and collects their rows into a Result,
// the same whatever the number of workers.
//
// The runner knows nothing about wireless CMC: an experiment is a Spec whose
// Run function turns one task into rows of (scheme, metric, value). Package
// journal makes a run durable (resume, shards), package results writes and
// reads its files.
package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
)

// Kind is the type of a parameter value.
type Kind int

const (
	Int Kind = iota
	Float
	String
	Bool
)

// Param declares one parameter of an experiment.
type Param struct {
	Name    string
	Kind    Kind
	Default string // the default, written as on the command line
	Doc     string // one line: meaning and unit
	// Min and Max bound Int and Float values (inclusive) when HasMin/HasMax.
	Min, Max       float64
	HasMin, HasMax bool
	// Positive requires an Int or Float value > 0.
	Positive bool
	// Choices, when non-empty, lists the accepted String values.
	Choices []string
	// Added marks a parameter added to an experiment whose results may
	// already be stored, with a Default that runs the experiment exactly as
	// before it existed: results stored without it are read back as run at
	// Default (results.Load) instead of as computed with other settings.
	Added bool
	// Beyond marks a parameter of a model or baseline the paper does not
	// have (docs/BEYOND.md): `wcmc show` lists it apart from the paper's.
	Beyond bool
	// Digest, when set, marks a parameter whose value names input data (a
	// folder of files) and returns a digest of the data value names under
	// the run's values v ("" when it names none). Such a value is a
	// location, not a setting: a result stored with another value of it
	// still matches a plan (Plan.SameSetting) when both name the same
	// folder or data with the same digest (Result.InputDigests).
	Digest func(value string, v Values) (string, error)
}

// Spec describes one experiment.
type Spec struct {
	ID string // e.g. "gauss-snr"
	// Streams, if set, is the ID whose random streams the run draws
	// (SetupRng, TaskRng) instead of ID's: a spec that shows another
	// run's results from another angle (another main metric, the same
	// computation) sets it to that spec's ID, so that at the same
	// parameters and seed the two compute the same numbers and one
	// result can serve both (package reproduce reuses it).
	Streams string
	Figure  string // e.g. "Fig. 3"
	// Description is one line saying what the experiment computes, at the
	// default values of its parameters.
	Description string
	// Describe, if set, returns Description at the values v of a run: the
	// sizes and settings it names are v's (see results.Describe).
	Describe func(v Values) string
	// X names the swept parameter (one of Params, Kind Int or Float). Its
	// value is a comma-separated list; each entry is a sweep point.
	X      string
	XLabel string // axis label for X, e.g. "SNR (dB)"
	LogX   bool   // plot X on a log axis
	// Metrics lists the metrics the experiment reports; the first is the
	// main one (plotted as DIR/ID.png).
	Metrics     []string
	MetricLabel map[string]string // axis label per metric, e.g. "err2 (eq. err2)"
	// LinearY lists the metrics plotted on a linear y axis; the others use
	// a log axis.
	LinearY []string
	// Ideal gives the ideal value of a metric (e.g. 0.9 for a 90%
	// coverage), drawn as a guide line in its figures.
	Ideal map[string]float64
	// Bounds gives the range a metric's values lie in (e.g. [0, 1] for a
	// coverage); figures clip its bands to it.
	Bounds map[string][2]float64
	// MainOnly lists the metrics drawn under the main protocol only
	// (results.Figures): their values under the other protocols stay in
	// the CSV and the summary tables, but a figure per protocol of every
	// such metric would multiply the figures without a claim that reads them.
	MainOnly []string
	// Schemes lists the scheme names in the order they are plotted.
	Schemes []string
	// Params declares the parameters. The name "trials" is reserved: it
	// sets the number of trials in Quick and in --set.
	Params []Param
	// Trials is the default number of trials.
	Trials int
	// Quick overrides parameters (and "trials") for a smoke-sized run.
	Quick map[string]string
	// Validate, if set, checks relations between parameters (K ≤ N, …)
	// after each has been parsed and range-checked.
	Validate func(v Values) error
	// Setup, if set, builds state shared by every task of a run (a data
	// set, reference samples, covariances). It is called once per run with
	// the full parameter set (X holding the whole list) and an rng derived
	// from the run seed alone, so every shard of a run gets the same state.
	// A state that implements RunInfoer reports on itself once per run.
	Setup func(v Values, rng *rand.Rand) (any, error)
	// Run executes one task. It must be deterministic given Task.Rng.
	Run func(t Task) (TaskOutput, error)
	// Caption, if set, returns a line printed under each figure's title
	// (e.g. the settings a reader needs to interpret it).
	Caption func(v Values) string
	// Trajectory marks an experiment whose X values are checkpoints along
	// one run (e.g. numbers of computed gradients): each trial is a single
	// call of Run with the whole list in Task.Params (Task.X is NaN), and
	// every returned Row says with Row.X which checkpoint it belongs to.
	Trajectory bool
}

// RunInfoer is implemented by a Setup state that reports on itself (e.g.
// the convergence diagnostics of its reference samples): RunInfo is
// recorded once per run in Result.RunInfo and the run's ID.json, keyed by
// topic as TaskOutput.Info is by scheme. Values must be JSON-encodable.
// Setup being deterministic, a resumed run reports the same again.
type RunInfoer interface {
	RunInfo() map[string]map[string]any
}

// SetupInfo returns what a Setup state reports (see RunInfoer) as it
// reads back from JSON (see normaliseInfo); nil when it does not report.
func SetupInfo(shared any) (map[string]map[string]any, error) {
	r, ok := shared.(RunInfoer)
	if !ok {
		return nil, nil
	}
	info, err := normaliseInfo(r.RunInfo())
	if err != nil {
		return nil, fmt.Errorf("run info of the setup: %w", err)
	}
	return info, nil
}

// Task is one (sweep point, trial) unit of work.
type Task struct {
	Params Values // with X set to this point's single value
	X      float64
	Point  int // index of X in the sweep list
	Trial  int // 0-based trial index
	Rng    *rand.Rand
	Shared any // what Setup returned (nil without Setup); read-only
	// Ctx is cancelled when the run is aborted (Ctrl-C, another task's
	// error). Long tasks poll Err between stages and pass Done to their
	// inner loops; a task cut short must return an error, never a result,
	// because every result a task returns is recorded as finished work.
	Ctx context.Context
}

// Err is Ctx.Err(): non-nil once the run is aborted (nil without a Ctx).
func (t Task) Err() error {
	if t.Ctx == nil {
		return nil
	}
	return t.Ctx.Err()
}

// Done is Ctx.Done(): closed once the run is aborted (nil, never closed,
// without a Ctx).
func (t Task) Done() <-chan struct{} {
	if t.Ctx == nil {
		return nil
	}
	return t.Ctx.Done()
}

// Row is one measured value of one scheme in one task.
type Row struct {
	Scheme string  `json:"scheme"`
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
	// X is the checkpoint of the row in a Trajectory spec; otherwise unused.
	X float64 `json:"x,omitempty"`
}

// Skip records a scheme that cannot run at a sweep point (e.g. OMA with
// fewer than two samples per worker), with the reason. Skipped schemes get
// no rows.
type Skip struct {
	Scheme string `json:"scheme"`
	Reason string `json:"reason"`
}

// TaskOutput is what one task's Run returns: its rows, the schemes it
// skipped, and per-scheme diagnostics. (Package claims has its own
// Outcome: a claim's verdict.)
type TaskOutput struct {
	Rows    []Row
	Skipped []Skip
	// Info holds per-scheme diagnostics recorded in the run's JSON
	// (optimiser iterations, final objective, measured transmit power, …).
	// Values must be JSON-encodable.
	Info map[string]map[string]any
}

var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)

// Check reports mistakes in the spec itself: a missing ID or Run, an X
// that is not an Int or Float parameter, duplicate or reserved names,
// names unsafe in file names, Quick keys that are not parameters, invalid
// defaults or quick values, Trials < 1.
func (s Spec) Check() error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("spec %q: %s", s.ID, fmt.Sprintf(format, args...))
	}
	if !safeName.MatchString(s.ID) {
		return fail("ID must be a file-name-safe word")
	}
	if s.Run == nil {
		return fail("Run is nil")
	}
	if s.Trials < 1 {
		return fail("Trials = %d, want ≥ 1", s.Trials)
	}
	if len(s.Metrics) == 0 || len(s.Schemes) == 0 {
		return fail("no Metrics or no Schemes")
	}
	for _, list := range [][]string{s.Metrics, s.Schemes} {
		seen := map[string]bool{}
		for _, m := range list {
			if !safeName.MatchString(m) {
				return fail("name %q must be a file-name-safe word", m)
			}
			if seen[m] {
				return fail("name %q listed twice", m)
			}
			seen[m] = true
		}
	}
	for _, m := range s.LinearY {
		if !slices.Contains(s.Metrics, m) {
			return fail("LinearY names %q, which is not a metric", m)
		}
	}
	for m := range s.Ideal {
		if !slices.Contains(s.Metrics, m) {
			return fail("Ideal names %q, which is not a metric", m)
		}
	}
	for _, m := range s.MainOnly {
		if !slices.Contains(s.Metrics, m) {
			return fail("MainOnly names %q, which is not a metric", m)
		}
	}
	for m, b := range s.Bounds {
		if !slices.Contains(s.Metrics, m) {
			return fail("Bounds names %q, which is not a metric", m)
		}
		if !(b[0] < b[1]) {
			return fail("Bounds of %q are [%g, %g], not an interval", m, b[0], b[1])
		}
	}
	byName := map[string]Param{}
	for _, p := range s.Params {
		if p.Name == "" || strings.ContainsAny(p.Name, "=, \t") {
			return fail("bad parameter name %q", p.Name)
		}
		if p.Name == trialsKey {
			return fail("parameter name %q is reserved", trialsKey)
		}
		if _, dup := byName[p.Name]; dup {
			return fail("parameter %q declared twice", p.Name)
		}
		byName[p.Name] = p
		if _, err := normalise(p, p.Default, p.Name == s.X); err != nil {
			return fail("default: %v", err)
		}
	}
	xp, ok := byName[s.X]
	if !ok || (xp.Kind != Int && xp.Kind != Float) {
		return fail("X %q must name an Int or Float parameter", s.X)
	}
	for k, val := range s.Quick {
		if k == trialsKey {
			if n, err := parseInt(val); err != nil || n < 1 {
				return fail("quick trials %q, want an integer ≥ 1", val)
			}
			continue
		}
		p, ok := byName[k]
		if !ok {
			return fail("Quick sets %q, which is not a parameter", k)
		}
		if _, err := normalise(p, val, k == s.X); err != nil {
			return fail("quick value: %v", err)
		}
	}
	return nil
}

// StreamID returns the ID that names the spec's random streams: Streams,
// or ID when it is unset.
func (s Spec) StreamID() string {
	if s.Streams != "" {
		return s.Streams
	}
	return s.ID
}

// PaperFigure reports whether the experiment reproduces one of the paper's
// figures: its Figure is "Fig. N" (experiments beyond the paper have
// another, e.g. "Beyond").
func (s Spec) PaperFigure() bool { return strings.HasPrefix(s.Figure, "Fig.") }
