package consensus

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/pprof"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"wcmc/channel"
	"wcmc/model"
)

// ErrCancelled is wrapped, with the context's cause, by the error WVCMC
// returns when its context was cancelled before the run finished.
var ErrCancelled = errors.New("WVCMC: optimisation cancelled")

// ErrDiverged is wrapped by the error of a run the guard could not recover.
var ErrDiverged = errors.New("WVCMC diverged")

// maxShrinks bounds the consecutive halvings of a step the divergence
// guard may make before it gives up.
const maxShrinks = 40

// Fit is the outcome of a WVCMC optimisation.
type Fit struct {
	Map Map
	// Method is the optimiser run, with its defaults filled in.
	Method Method
	// Holdout is the fraction of the signals held out (0: none).
	Holdout float64
	Iters   int // iterations made
	// Evaluations counts gradient evaluations (each costs N_b·S
	// per-example gradients, docs/MATH.md note 8).
	Evaluations int
	// Objective holds L̃ (up to a constant) at the start and after each
	// iteration when traced, else at the start and the end.
	Objective []float64
	// GradNorms holds, when traced, the gradient norm (as GradNorm) after
	// each iteration of L-BFGS or Newton (from the full-batch gradient
	// they evaluate anyway; SGD and Adam leave it empty).
	GradNorms []float64
	// GradNorm and StartGradNorm are ‖∇L̃‖_F, full batch on the fitted
	// signals, at Map and at the start map; under LBFGS.Whiten the norm of
	// the gradient of the problem solved, ‖∇L̃ V‖_F.
	GradNorm, StartGradNorm float64
	// Unspanned is the number of receive dimensions (of streams·m_r) the
	// fitted signals do not span: streams·m_r minus the rank of the stacked
	// signals (computed under LBFGS.Whiten, else min(S, streams·m_r), the
	// rank of noisy signals). When it is positive the in-sample objective
	// is unbounded below: growing W along those directions leaves every
	// in-sample output θ_s unchanged while the entropy terms grow without
	// bound.
	Unspanned int
	// Hessians counts Hessian evaluations (Newton; one per iteration).
	Hessians int
	// Shrinks counts steps the divergence guard undid and halved; 0 means
	// the run followed its nominal steps exactly.
	Shrinks int
	// BestIter and HeldOut are, under Holdout, the iteration whose map was
	// kept and its held-out objective.
	BestIter int
	HeldOut  float64
	// FinalStep is SGD's or Adam's step after any shrinking.
	FinalStep float64
	// Status says why the run stopped; Message details a Failed or
	// LineSearchFailed status.
	Status  Status
	Message string
}

// RelGradNorm is GradNorm / StartGradNorm (NaN when the start gradient is
// zero).
func (f *Fit) RelGradNorm() float64 {
	if f.StartGradNorm == 0 {
		return math.NaN()
	}
	return f.GradNorm / f.StartGradNorm
}

// WVCMC optimises the variational objective (eq: obj OMA / eq: obj NOMA)
// over the linear map, starting from init, with the optimiser and
// settings of s (the zero Settings: L-BFGS with DefaultHoldout held out).
// Minibatches, if any, are drawn from rng. The run is abandoned within one
// iteration of ctx being cancelled, with an error wrapping ErrCancelled
// and the context's cause.
//
// Every optimiser is guarded: a step after which some W_k is non-finite,
// W_k E_k or W_k W_kᵀ is singular, or a log-determinant moves by more than
// d·ln 10 (the map's volume changing tenfold per dimension in one step) is
// undone and retried with half the step; the count is reported in
// Fit.Shrinks. After maxShrinks consecutive halvings the run fails with an
// error wrapping ErrDiverged. No optimiser returns a non-finite map.
//
// The optimisation carries the CPU-profile label wvcmc = "<access>/<method>"
// of the method run (e.g. "noma/newton", "oma/sgd", "oma/lbfgs+holdout",
// "oma/lbfgs+whiten"), so that a profile of a trial splits the
// optimisers' time by access and protocol.
func WVCMC(ctx context.Context, rng *rand.Rand, rx *channel.Received, target model.Target, init Map, s Settings) (*Fit, error) {
	r, err := s.resolve()
	if err != nil {
		return nil, err
	}
	fitRx := rx
	var stop *earlyStop
	if r.holdout > 0 {
		nv := int(math.Round(r.holdout * float64(rx.S)))
		if nv < 1 || rx.S-nv < 2 {
			return nil, fmt.Errorf("WVCMC: cannot hold out %g of S = %d signals", r.holdout, rx.S)
		}
		fitRx = rx.Rows(0, rx.S-nv)
		val, err := NewVariational(rx.Rows(rx.S-nv, rx.S), target)
		if err != nil {
			return nil, err
		}
		stop = &earlyStop{val: val, patience: r.Patience}
	}
	v, err := NewVariational(fitRx, target)
	if err != nil {
		return nil, err
	}
	f0, err := v.Value(init)
	if err != nil {
		return nil, fmt.Errorf("WVCMC: start map: %w", err)
	}
	if stop != nil {
		if err := stop.observe(init, 0); err != nil {
			return nil, fmt.Errorf("WVCMC: start map (held out): %w", err)
		}
	}
	var c coords = raw{}
	var w *whitened
	unspanned := max(0, fitRx.Streams()*fitRx.Mr-fitRx.S)
	if r.whiten() {
		if w, err = newWhitened(fitRx, init); err != nil {
			return nil, err
		}
		c, unspanned = w, w.unspanned
	}
	if m, ok := r.Method.(Newton); ok {
		if _, curved := target.(model.Curved); !curved || w.d*w.r > m.MaxDim || w.unspanned > 0 {
			r.Method = m.FirstOrder()
		}
	}
	g0, err := v.gradNorm(init, c)
	if err != nil {
		return nil, fmt.Errorf("WVCMC: start map: %w", err)
	}
	var fit *Fit
	pprof.Do(ctx, pprof.Labels("wvcmc", rx.Access.String()+"/"+r.profileLabel()), func(ctx context.Context) {
		fit, err = v.optimize(ctx, rng, init, f0, r, c, w, g0, target, stop)
	})
	if err != nil {
		return nil, err
	}
	fit.Method, fit.Holdout, fit.StartGradNorm, fit.Unspanned = r.Method, r.holdout, g0, unspanned
	if stop != nil {
		fit.Map = stop.best
		fit.BestIter = stop.bestIter
		fit.HeldOut = stop.bestVal
		if !r.Trace {
			// Start and end of the in-sample objective, for the kept map.
			f, err := v.Value(fit.Map)
			if err != nil {
				return nil, fmt.Errorf("WVCMC: kept map: %w", err)
			}
			fit.Objective = []float64{f0, f}
		}
	}
	if fit.GradNorm, err = v.gradNorm(fit.Map, c); err != nil {
		return nil, fmt.Errorf("WVCMC: final map: %w", err)
	}
	return fit, nil
}

// optimize runs the resolved method r from init (objective f0, gradient
// norm g0 in coordinates c; w is c when whitened).
func (v *Variational) optimize(ctx context.Context, rng *rand.Rand, init Map, f0 float64, r resolved, c coords, w *whitened, g0 float64, target model.Target, stop *earlyStop) (*Fit, error) {
	switch m := r.Method.(type) {
	case SGD:
		return v.firstOrder(ctx, rng, init, f0, r, m.Step, m.Iters, m.BatchSize, false, stop)
	case Adam:
		return v.firstOrder(ctx, rng, init, f0, r, m.Step, m.Iters, m.BatchSize, true, stop)
	case LBFGS:
		return v.minimize(ctx, init, f0, r, gonumRun{method: &optimize.LBFGS{}, iters: m.Iters, gradTol: m.GradTol, relTol: m.RelTol, confine: m.Confine}, c, g0, stop)
	case Newton:
		h := newHessian(v, w, target.(model.Curved))
		return v.minimize(ctx, init, f0, r, gonumRun{method: &optimize.Newton{}, iters: m.Iters, gradTol: m.GradTol, relTol: Off, confine: m.Confine, hess: h.eval}, c, g0, stop)
	}
	panic(fmt.Sprintf("consensus: unresolved method %T", r.Method))
}

// profileLabel names the method run, with its holdout and whitening, as
// in the wvcmc profile label.
func (r resolved) profileLabel() string {
	name := r.Method.Name()
	if r.holdout > 0 {
		name += "+holdout"
	}
	if m, ok := r.Method.(LBFGS); ok && m.Whiten {
		name += "+whiten"
	}
	return name
}

// gradNorm is the full-batch ‖∇L̃(m)‖_F in coordinates c. It is a
// diagnostic, not counted in Fit.Evaluations.
func (v *Variational) gradNorm(m Map, c coords) (float64, error) {
	g := zeroLike(m)
	if err := v.Gradient(g, m, nil); err != nil {
		return math.NaN(), err
	}
	return c.norm(g), nil
}

// cancelled is the error of a run whose context ended after iteration it.
func cancelled(ctx context.Context, it int, method string) error {
	return fmt.Errorf("%w at iteration %d of %s: %w", ErrCancelled, it, method, context.Cause(ctx))
}

// earlyStop tracks the held-out objective and the best map seen.
type earlyStop struct {
	val      *Variational
	patience int
	best     Map
	bestVal  float64
	bestIter int
	since    int
}

var (
	errEarlyStop = errors.New("held-out objective stopped improving")
	errBudget    = errors.New("evaluation budget spent")
	// errLeftRegion marks a trial point Confine rejects.
	errLeftRegion = errors.New("a det(W_k E_k) changed sign: the step crossed a singular map")
)

// observe records the map after iteration it and returns errEarlyStop
// when the held-out objective has not improved for patience iterations.
func (e *earlyStop) observe(m Map, it int) error {
	f, err := e.val.Value(m)
	if err != nil {
		// An undefined held-out objective counts as no improvement.
		f = math.Inf(1)
		if it == 0 {
			return err
		}
	}
	if it == 0 || f < e.bestVal {
		e.best, e.bestVal, e.bestIter, e.since = m.Clone(), f, it, 0
		return nil
	}
	e.since++
	if e.since >= e.patience {
		return errEarlyStop
	}
	return nil
}

// firstOrder runs SGD or Adam (step η or relative step α, iters
// iterations, minibatches of batch) with the divergence guard.
func (v *Variational) firstOrder(ctx context.Context, rng *rand.Rand, init Map, f0 float64, r resolved, step float64, iters, batchSize int, adam bool, stop *earlyStop) (*Fit, error) {
	name := r.Method.Name()
	m := init.Clone()
	prev := m.Clone()
	grad := m.Clone()
	fit := &Fit{Objective: []float64{f0}, Status: IterationCap}
	batch, perm := v.batchBuffers(batchSize)

	// Adam state: first and second moments, and per-stream step scales.
	var mom, sec Map
	scale := make([]float64, len(m.W))
	if adam {
		mom, sec = zeroLike(m), zeroLike(m)
		for k, w := range m.W {
			r, c := w.Dims()
			scale[k] = mat.Norm(w, 2) / math.Sqrt(float64(r*c))
		}
	}
	const b1, b2, eps = 0.9, 0.999, 1e-8

	ld, err := v.logDetsAll(m)
	if err != nil {
		return nil, err
	}
	shrink := 1.0
	for t := 1; t <= iters; t++ {
		if batch != nil {
			drawBatch(rng, perm, batch)
		}
		if err := v.Gradient(grad, m, batch); err != nil {
			return nil, fmt.Errorf("WVCMC %s iteration %d: %w", name, t, err)
		}
		fit.Evaluations++
		copyMap(prev, m)
		if adam {
			c1 := 1 - math.Pow(b1, float64(t))
			c2 := 1 - math.Pow(b2, float64(t))
			decay := 1 - float64(t-1)/float64(iters)
			for k := range m.W {
				g, mk, sk := grad.W[k].RawMatrix().Data, mom.W[k].RawMatrix().Data, sec.W[k].RawMatrix().Data
				mk2 := m.W[k].RawMatrix().Data
				for i, gi := range g {
					mk[i] = b1*mk[i] + (1-b1)*gi
					sk[i] = b2*sk[i] + (1-b2)*gi*gi
				}
				lr := step * scale[k] * decay
				for i := range g {
					mk2[i] -= shrink * lr * (mk[i] / c1) / (math.Sqrt(sk[i]/c2) + eps)
				}
			}
		}
		// SGD: W ← W − η ∇L̃ (adam already stepped).
		tries := 0
		for {
			if !adam {
				for k := range m.W {
					m.W[k].Copy(prev.W[k])
					m.W[k].Add(m.W[k], scaled(-step*shrink, grad.W[k]))
				}
			}
			nld, err := v.logDetsAll(m)
			if err == nil && allFiniteMap(m) && math.Abs(nld-ld) <= float64(v.rx.D)*math.Ln10 {
				ld = nld
				break
			}
			tries++
			fit.Shrinks++
			if tries > maxShrinks {
				return nil, fmt.Errorf("%w at iteration %d of %s: the step was halved %d times (nominal step %g) and the map still breaks down; try a smaller step or the %s optimiser",
					ErrDiverged, t, name, maxShrinks, step, NameLBFGS)
			}
			shrink /= 2
			if adam {
				// Undo and retake the Adam step at half the size.
				for k := range m.W {
					var d mat.Dense
					d.Sub(m.W[k], prev.W[k])
					d.Scale(0.5, &d)
					m.W[k].Add(prev.W[k], &d)
				}
			}
		}
		fit.Iters = t
		if r.Trace || t == iters {
			f, err := v.Value(m)
			if err != nil {
				return nil, fmt.Errorf("%w at iteration %d of %s: %v", ErrDiverged, t, name, err)
			}
			fit.Objective = append(fit.Objective, f)
		}
		if r.Observe != nil {
			r.Observe(t, fit.Evaluations, m)
		}
		if ctx.Err() != nil {
			return nil, cancelled(ctx, t, name)
		}
		if stop != nil {
			if err := stop.observe(m, t); err != nil {
				fit.Status = HeldOutStop
				break
			}
		}
		if r.MaxEvaluations > 0 && fit.Evaluations >= r.MaxEvaluations {
			fit.Status = BudgetSpent
			break
		}
	}
	if !r.Trace && fit.Iters < iters && stop == nil {
		// Stopped before the last iteration: its objective is the end.
		f, err := v.Value(m)
		if err != nil {
			return nil, fmt.Errorf("%w at iteration %d of %s: %v", ErrDiverged, fit.Iters, name, err)
		}
		fit.Objective = append(fit.Objective, f)
	}
	fit.FinalStep = step * shrink
	fit.Map = m
	return fit, nil
}

// gonumRun is a run of a gonum optimiser: the method, its iteration cap,
// the relative gradient tolerance (0: none), the stall test's relative
// tolerance (Off: none), Confine, and for a second-order method the
// Hessian in the run's coordinates at a map.
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
			if cacheX != nil && floatsEqual(cacheX, x) {
				return
			}
			c.toMap(m, x)
			fit.Evaluations++
			f, err := v.ValueGrad(grad, m)
			cacheX = append(cacheX[:0], x...)
			if err == nil && signs != nil && !floatsEqual(signs, v.signs) {
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

func (v *Variational) batchBuffers(n int) (batch, perm []int) {
	mb, ok := v.target.(model.Minibatcher)
	if !ok || n <= 0 || n >= mb.NumData() {
		return nil, nil
	}
	perm = make([]int, mb.NumData())
	for i := range perm {
		perm[i] = i
	}
	return make([]int, n), perm
}

// logDetsAll sums the entropy-bound log-determinant terms over streams.
func (v *Variational) logDetsAll(m Map) (float64, error) {
	var sum float64
	for k, w := range m.W {
		ld, err := v.logDets(w, k, false)
		if err != nil {
			return 0, err
		}
		sum += ld
	}
	return sum, nil
}

func zeroLike(m Map) Map {
	out := Map{W: make([]*mat.Dense, len(m.W))}
	for i, w := range m.W {
		r, c := w.Dims()
		out.W[i] = mat.NewDense(r, c, nil)
	}
	return out
}

func copyMap(dst, src Map) {
	for i := range src.W {
		dst.W[i].Copy(src.W[i])
	}
}

func frob(m Map) float64 {
	var s float64
	for _, w := range m.W {
		s += sqFrob(w)
	}
	return math.Sqrt(s)
}

func allFiniteMap(m Map) bool {
	for _, w := range m.W {
		if !allFinite(w.RawMatrix().Data) {
			return false
		}
	}
	return true
}

func allFinite(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

func flattenMap(m Map) []float64 {
	var x []float64
	for _, w := range m.W {
		x = append(x, w.RawMatrix().Data...)
	}
	return x
}

func unflattenMap(m Map, x []float64) {
	i := 0
	for _, w := range m.W {
		data := w.RawMatrix().Data
		copy(data, x[i:i+len(data)])
		i += len(data)
	}
}

func floatsDot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func floatsEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
