package experiment

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/wcmc-project/wcmc/runner"
)

// Typed configuration. Every experiment family decodes the parameters of
// one sweep point once into its own configuration struct C (gaussConfig,
// probitConfig, gradientConfig), whose fields the task code then uses;
// runner.Values is read by name only in the decoders. typedSpec turns a
// family's decoder, checks, setup and task into the closures of a
// runner.Spec, so that the runner stays unaware of the types.

// typedSpec is an experiment family: its configuration C and its shared
// state S (what Setup builds once per run).
type typedSpec[C, S any] struct {
	// decode reads the parameters of one sweep point (for a Trajectory
	// spec: the whole checkpoint list) into C, reporting what it cannot
	// read to p.
	decode func(v runner.Values, p *problems) C
	// check reports relations and limits that C must meet before any
	// work starts (called in Validate only, point by point).
	check func(c C, p *problems)
	// setup builds the shared state from the configuration of every
	// sweep point and the run's setup stream.
	setup func(sw sweep[C], rng *rand.Rand) (S, error)
	// run executes one task with its point's configuration.
	run func(c C, shared S, t runner.Task) (runner.TaskOutput, error)
	// caption returns the figures' caption line: c is the first point's
	// configuration, v the parameters as written (for numbers printed as
	// the user gave them).
	caption func(c C, v runner.Values) string
}

// sweep is a run's configuration at every point of its sweep.
type sweep[C any] struct {
	x      string // the swept parameter
	points []C    // in sweep order; one point, the whole list, for a Trajectory spec
}

// each returns f of every point of sw.
func each[C, T any](sw sweep[C], f func(*C) T) []T {
	out := make([]T, len(sw.points))
	for i := range sw.points {
		out[i] = f(&sw.points[i])
	}
	return out
}

// bind returns s with Validate, Setup, Run and Caption built from ts:
// Validate decodes and checks every sweep point (each problem reported
// once, naming its parameter), Setup decodes the sweep again for
// ts.setup, and Run decodes its task's point and asserts the shared
// state's type once.
func (ts typedSpec[C, S]) bind(s runner.Spec) runner.Spec {
	trajectory := s.Trajectory
	s.Validate = func(v runner.Values) error {
		_, err := ts.decodeSweep(v, trajectory, true)
		return err
	}
	s.Setup = func(v runner.Values, rng *rand.Rand) (any, error) {
		sw, err := ts.decodeSweep(v, trajectory, false)
		if err != nil {
			return nil, err
		}
		shared, err := ts.setup(sw, rng)
		if err != nil {
			return nil, err
		}
		return shared, nil
	}
	id := s.ID
	s.Run = func(t runner.Task) (runner.TaskOutput, error) {
		var p problems
		c := ts.decode(t.Params, &p)
		if err := p.err(); err != nil {
			return runner.TaskOutput{}, err
		}
		shared, ok := t.Shared.(S)
		if !ok {
			return runner.TaskOutput{}, fmt.Errorf("experiment %s: the shared state is %T, want %T (from the spec's Setup)", id, t.Shared, shared)
		}
		return ts.run(c, shared, t)
	}
	s.Caption = func(v runner.Values) string {
		sw, err := ts.decodeSweep(v, trajectory, false)
		if err != nil || len(sw.points) == 0 {
			return ""
		}
		return ts.caption(sw.points[0], v)
	}
	return s
}

// decodeSweep decodes v at every sweep point (once, with the whole list,
// for a trajectory), running the checks too when check is set.
func (ts typedSpec[C, S]) decodeSweep(v runner.Values, trajectory, check bool) (sweep[C], error) {
	sw := sweep[C]{x: v.XName()}
	at := []runner.Values{v}
	if !trajectory {
		at = at[:0]
		for _, x := range v.XList() {
			at = append(at, v.With(v.XName(), runner.FormatX(x)))
		}
	}
	var p problems
	for _, pv := range at {
		c := ts.decode(pv, &p)
		if check && ts.check != nil {
			ts.check(c, &p)
		}
		sw.points = append(sw.points, c)
	}
	return sw, p.err()
}

// problems collects what is wrong with a configuration, at most one error
// per key (a parameter's name, or a relation's), so that a sweep reports
// each problem once, at its first bad point, and all problems together.
type problems struct {
	seen map[string]bool
	errs []error
}

// add records err under key unless one was recorded there; nil is ignored.
func (p *problems) add(key string, err error) {
	if err == nil || p.seen[key] {
		return
	}
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	p.seen[key] = true
	p.errs = append(p.errs, err)
}

// addf records a formatted error under key.
func (p *problems) addf(key, format string, args ...any) {
	if !p.seen[key] {
		p.add(key, fmt.Errorf(format, args...))
	}
}

// err joins the recorded errors (nil when none).
func (p *problems) err() error { return errors.Join(p.errs...) }
