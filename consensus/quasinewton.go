package consensus

// The full-batch methods run through gonum's optimize package: L-BFGS
// and Newton, with the confinement to the start's sign region and the
// stopping rules of Settings.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

type gonumRun struct {
	method  optimize.Method
	iters   int
	gradTol float64
	relTol  float64
	confine bool
	hess    func(dst *mat.SymDense, m Map) error
}

// minimize minimises the full-batch objective with gonum's L-BFGS or
// Newton (opt) in coordinates c; g0 is the start gradient norm. A trial
// point where the objective is undefined (a singular map) is given the
// value +Inf, which the line search rejects by shrinking its step.
func (v *Variational) minimize(ctx context.Context, init Map, f0 float64, r resolved, opt gonumRun, c coords, g0 float64, stop *earlyStop) (*Fit, error) {
	name := r.Method.Name()
	m := init.Clone()
	grad := m.Clone()
	fit := &Fit{Objective: []float64{f0}}
	x0 := c.fromMap(init)
	var signs []float64 // of det(W_k E_k) at the start, under Confine
	if opt.confine {
		if _, err := v.Value(init); err != nil {
			return nil, err
		}
		signs = append(signs, v.signs...)
	}
	// gonum asks for the value and then the gradient at the same point;
	// both come from one fused pass, cached by point.
	var (
		lastErr   error
		cacheX    []float64
		cacheF    float64
		cacheG    []float64
		cacheOK   bool
		evaluated = func(x []float64) {
			if cacheX != nil && slices.Equal(cacheX, x) {
				return
			}
			c.toMap(m, x)
			fit.Evaluations++
			f, err := v.ValueGrad(grad, m)
			cacheX = append(cacheX[:0], x...)
			if err == nil && signs != nil && !slices.Equal(signs, v.signs) {
				err = errLeftRegion
			}
			cacheF, cacheOK = f, err == nil
			if err != nil {
				lastErr = err
				return
			}
			cacheG = c.pullback(cacheG[:0], grad)
		}
	)
	prob := optimize.Problem{
		Func: func(x []float64) float64 {
			evaluated(x)
			if !cacheOK {
				return math.Inf(1)
			}
			return cacheF
		},
		Grad: func(g, x []float64) {
			evaluated(x)
			if !cacheOK {
				for i := range g {
					g[i] = math.NaN()
				}
				return
			}
			copy(g, cacheG)
		},
	}
	if opt.hess != nil {
		hm := init.Clone()
		prob.Hess = func(h *mat.SymDense, x []float64) {
			c.toMap(hm, x)
			fit.Hessians++
			if err := opt.hess(h, hm); err != nil {
				// A NaN Hessian fails every factorisation: the step is
				// then along the negative gradient.
				lastErr = err
				for i := range h.SymmetricDim() {
					h.SetSym(i, i, math.NaN())
				}
			}
		}
	}
	conv := &converger{c: c, gradTol: opt.gradTol * g0}
	if opt.relTol != Off {
		conv.stall = &optimize.FunctionConverge{Relative: opt.relTol, Iterations: 10}
	}
	settings := &optimize.Settings{
		MajorIterations: opt.iters,
		Converger:       conv,
		Recorder: recorderFunc(func(loc *optimize.Location, op optimize.Operation) error {
			if op != optimize.MajorIteration {
				return nil
			}
			fit.Iters++
			if r.Trace {
				fit.Objective = append(fit.Objective, loc.F)
				fit.GradNorms = append(fit.GradNorms, c.normX(loc.Gradient))
			}
			if r.Observe != nil || stop != nil {
				c.toMap(m, loc.X)
			}
			if r.Observe != nil {
				r.Observe(fit.Iters, fit.Evaluations, m)
			}
			if r.Progress != nil {
				r.Progress(fit.Iters, opt.iters)
			}
			if ctx.Err() != nil {
				return cancelled(ctx, fit.Iters, name)
			}
			if stop != nil {
				if err := stop.observe(m, fit.Iters); err != nil {
					return err
				}
			}
			if r.MaxEvaluations > 0 && fit.Evaluations >= r.MaxEvaluations {
				return errBudget
			}
			return nil
		}),
	}
	res, err := optimize.Minimize(prob, x0, settings, opt.method)
	if errors.Is(err, ErrCancelled) {
		return nil, err
	}
	if errors.Is(err, errEarlyStop) && stop != nil {
		// The best map is stop.best; WVCMC sets it.
		fit.Status = HeldOutStop
		return fit, nil
	}
	if res == nil || math.IsInf(res.F, 0) || math.IsNaN(res.F) || !allFinite(res.X) {
		return nil, fmt.Errorf("%w: %s failed: %v (last objective error: %v)", ErrDiverged, name, err, lastErr)
	}
	// A line-search failure after progress still leaves the best point
	// found; it is kept and the status says why the run stopped.
	out := init.Clone()
	c.toMap(out, res.X)
	fit.Map = out
	if !r.Trace {
		fit.Objective = append(fit.Objective, res.F)
	}
	fit.Status, fit.Message = gonumStatus(res.Status, err)
	return fit, nil
}

// gonumStatus translates gonum's outcome.
func gonumStatus(s optimize.Status, err error) (Status, string) {
	switch {
	case errors.Is(err, errBudget):
		return BudgetSpent, ""
	case errors.Is(err, optimize.ErrLinesearcherFailure):
		return LineSearchFailed, err.Error()
	case err != nil:
		return Failed, fmt.Sprintf("%v: %v", s, err)
	}
	switch s {
	case optimize.GradientThreshold:
		return GradientConverged, ""
	case optimize.FunctionConvergence:
		return ObjectiveStalled, ""
	case optimize.IterationLimit:
		return IterationCap, ""
	}
	return Failed, s.String()
}

// converger stops L-BFGS when the gradient norm (in the map's
// coordinates) is at most gradTol, or when the stall test fires.
type converger struct {
	c       coords
	gradTol float64 // 0: no gradient test
	stall   *optimize.FunctionConverge
}

func (cv *converger) Init(dim int) {
	if cv.stall != nil {
		cv.stall.Init(dim)
	}
}

func (cv *converger) Converged(loc *optimize.Location) optimize.Status {
	if cv.gradTol > 0 && loc.Gradient != nil && cv.c.normX(loc.Gradient) <= cv.gradTol {
		return optimize.GradientThreshold
	}
	if cv.stall != nil {
		return cv.stall.Converged(loc)
	}
	return optimize.NotTerminated
}

type recorderFunc func(*optimize.Location, optimize.Operation) error

func (r recorderFunc) Init() error { return nil }
func (r recorderFunc) Record(loc *optimize.Location, op optimize.Operation, _ *optimize.Stats) error {
	return r(loc, op)
}
