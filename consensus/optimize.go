package consensus

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"wcmc/channel"
	"wcmc/model"
)

// Optimiser names.
const (
	// SGD is the paper's literal procedure (Algorithms 1–2): fixed step η,
	// t_m iterations, full batch or minibatches.
	SGD = "sgd"
	// LBFGS minimises the full-batch objective with gonum's L-BFGS, stopping
	// on a small gradient or a stalled objective. It needs no step size.
	LBFGS = "lbfgs"
	// Adam runs Adam on minibatch gradients with a step relative to the scale
	// of the start map, decayed linearly to zero.
	Adam = "adam"
)

// Optimizer configures the WVCMC optimisation.
type Optimizer struct {
	Method string // SGD, LBFGS or Adam
	// Eta is SGD's step η, or Adam's relative step α (the step on each entry
	// of W_k is α times the root-mean-square entry of the start W_k; 0 means
	// DefaultAdamStep).
	Eta float64
	// Iters is t_m for SGD and Adam, and the maximum number of major
	// iterations for L-BFGS (0 means DefaultLBFGSIters).
	Iters int
	// BatchSize N_b; 0 or ≥ N means full batch. L-BFGS needs full batches.
	BatchSize int
	// Holdout is the fraction of the S signals (the last ones) kept out of
	// the objective and used to stop early: the run returns the map with the
	// best held-out objective and stops after Patience iterations without
	// improvement. With S below the number of free directions (OMA with
	// S < K·m_r) the in-sample objective is unbounded below, and only a
	// held-out criterion makes "converged" meaningful. 0 disables it.
	Holdout float64
	// Patience is the number of non-improving iterations tolerated under
	// Holdout (0 means DefaultPatience).
	Patience int
	// RelTol stops L-BFGS when the objective has improved by less than
	// RelTol·|L̃| over 10 consecutive iterations (0 means DefaultRelTol).
	RelTol float64
	// Trace records the objective after every iteration (one extra pass
	// over the data per iteration for SGD and Adam); otherwise only the
	// start and final values.
	Trace bool
	// Observe, if set, is called after every iteration with the iteration
	// count (1-based), the gradient evaluations so far (each costs N_b·S
	// per-example gradients; L-BFGS line searches make it exceed the
	// iterations) and the current map (valid only during the call).
	Observe func(iter, evaluations int, m Map)
	// Done, if set, is checked after every iteration: once it is closed the
	// run is abandoned and WVCMC returns an error wrapping ErrCancelled (a
	// runner passes its context's Done channel, so that Ctrl-C stops a long
	// optimisation within one iteration).
	Done <-chan struct{}
}

// ErrCancelled is wrapped by the error WVCMC returns when Optimizer.Done
// was closed before the run finished.
var ErrCancelled = errors.New("WVCMC: optimisation cancelled")

// cancelled reports whether done (possibly nil) is closed.
func cancelled(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// Defaults of the step-free optimisers.
const (
	DefaultAdamStep   = 0.01
	DefaultLBFGSIters = 1000
	// DefaultRelTol: L̃ is an average log-density of order N; a relative
	// change of 1e-7 is far below the Monte Carlo error of the S-sample
	// average that defines it.
	DefaultRelTol = 1e-7
	// DefaultPatience: iterations without held-out improvement before
	// stopping.
	DefaultPatience = 5
	// maxShrinks bounds the consecutive halvings of a step the divergence
	// guard may make before it gives up.
	maxShrinks = 40
)

// Fit is the outcome of a WVCMC optimisation.
type Fit struct {
	Map    Map
	Method string
	Iters  int // iterations made
	// Evaluations counts gradient evaluations (each costs N_b·S per-example
	// gradients, docs/MATH.md note 8).
	Evaluations int
	// Objective holds L̃ (up to a constant) at the start and after each
	// iteration when traced, else at the start and the end.
	Objective []float64
	GradNorm  float64 // Frobenius norm of the last gradient
	// Shrinks counts steps the divergence guard undid and halved; 0 means
	// the run followed its nominal steps exactly.
	Shrinks int
	// BestIter and HeldOut are, under Holdout, the iteration whose map was
	// kept and its held-out objective.
	BestIter int
	HeldOut  float64
	// FinalStep is SGD's step after any shrinking.
	FinalStep float64
	Status    string // why it stopped
}

// ErrDiverged is wrapped by the error of a run the guard could not recover.
var ErrDiverged = errors.New("WVCMC diverged")

// WVCMC optimises the variational objective (eq: obj OMA / eq: obj NOMA)
// over the linear map, starting from init, with the chosen optimiser.
//
// Every optimiser is guarded: a step after which some W_k is non-finite,
// W_k E_k or W_k W_kᵀ is singular, or a log-determinant moves by more than
// d·ln 10 (the map's volume changing tenfold per dimension in one step) is
// undone and retried with half the step; the count is reported in
// Fit.Shrinks. After maxShrinks consecutive halvings the run fails with an
// error wrapping ErrDiverged. No optimiser returns a non-finite map.
func WVCMC(rng *rand.Rand, rx *channel.Received, target model.Target, init Map, opt Optimizer) (*Fit, error) {
	fitRx := rx
	var stop *earlyStop
	if opt.Holdout != 0 {
		if !(opt.Holdout > 0 && opt.Holdout < 1) {
			return nil, fmt.Errorf("WVCMC: holdout fraction %v must be in [0, 1)", opt.Holdout)
		}
		nv := int(math.Round(opt.Holdout * float64(rx.S)))
		if nv < 1 || rx.S-nv < 2 {
			return nil, fmt.Errorf("WVCMC: cannot hold out %g of S = %d signals", opt.Holdout, rx.S)
		}
		fitRx = rx.Rows(0, rx.S-nv)
		val, err := NewVariational(rx.Rows(rx.S-nv, rx.S), target)
		if err != nil {
			return nil, err
		}
		patience := opt.Patience
		if patience == 0 {
			patience = DefaultPatience
		}
		stop = &earlyStop{val: val, patience: patience}
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
	var fit *Fit
	switch opt.Method {
	case SGD, Adam:
		fit, err = v.firstOrder(rng, init, f0, opt, stop)
	case LBFGS:
		fit, err = v.lbfgs(init, f0, opt, stop)
	default:
		return nil, fmt.Errorf("unknown optimiser %q (want %s, %s or %s)", opt.Method, SGD, LBFGS, Adam)
	}
	if err != nil || stop == nil {
		return fit, err
	}
	fit.Map = stop.best
	fit.BestIter = stop.bestIter
	fit.HeldOut = stop.bestVal
	if !opt.Trace {
		// Start and end of the in-sample objective, for the kept map.
		f, err := v.Value(fit.Map)
		if err != nil {
			return nil, fmt.Errorf("WVCMC: kept map: %w", err)
		}
		fit.Objective = []float64{f0, f}
	}
	return fit, nil
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

var errEarlyStop = errors.New("held-out objective stopped improving")

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

// firstOrder runs SGD or Adam with the divergence guard.
func (v *Variational) firstOrder(rng *rand.Rand, init Map, f0 float64, opt Optimizer, stop *earlyStop) (*Fit, error) {
	adam := opt.Method == Adam
	if opt.Iters < 0 {
		return nil, fmt.Errorf("WVCMC: %d iterations", opt.Iters)
	}
	step := opt.Eta
	if adam && step == 0 {
		step = DefaultAdamStep
	}
	if !(step > 0) || math.IsInf(step, 0) {
		return nil, fmt.Errorf("WVCMC %s: step %v must be positive and finite", opt.Method, step)
	}
	m := init.Clone()
	prev := m.Clone()
	grad := m.Clone()
	fit := &Fit{Method: opt.Method, Objective: []float64{f0}}
	batch, perm := v.batchBuffers(opt.BatchSize)

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
	for t := 1; t <= opt.Iters; t++ {
		if batch != nil {
			drawBatch(rng, perm, batch)
		}
		if err := v.Gradient(grad, m, batch); err != nil {
			return nil, fmt.Errorf("WVCMC %s iteration %d: %w", opt.Method, t, err)
		}
		fit.Evaluations++
		fit.GradNorm = frob(grad)
		copyMap(prev, m)
		if adam {
			c1 := 1 - math.Pow(b1, float64(t))
			c2 := 1 - math.Pow(b2, float64(t))
			decay := 1 - float64(t-1)/float64(opt.Iters)
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
					ErrDiverged, t, opt.Method, maxShrinks, step, LBFGS)
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
		if opt.Trace || t == opt.Iters {
			f, err := v.Value(m)
			if err != nil {
				return nil, fmt.Errorf("%w at iteration %d of %s: %v", ErrDiverged, t, opt.Method, err)
			}
			fit.Objective = append(fit.Objective, f)
		}
		if opt.Observe != nil {
			opt.Observe(t, fit.Evaluations, m)
		}
		if cancelled(opt.Done) {
			return nil, fmt.Errorf("%w at iteration %d of %s", ErrCancelled, t, opt.Method)
		}
		if stop != nil {
			if err := stop.observe(m, t); err != nil {
				fit.Status = err.Error()
				break
			}
		}
	}
	fit.FinalStep = step * shrink
	if fit.Status == "" {
		fit.Status = "iteration limit"
	}
	fit.Map = m
	return fit, nil
}

// lbfgs minimises the full-batch objective with gonum's L-BFGS. A trial
// point where the objective is undefined (a singular map) is given the
// value +Inf, which the line search rejects by shrinking its step.
func (v *Variational) lbfgs(init Map, f0 float64, opt Optimizer, stop *earlyStop) (*Fit, error) {
	if opt.BatchSize > 0 {
		if mb, ok := v.target.(model.Minibatcher); ok && opt.BatchSize < mb.NumData() {
			return nil, fmt.Errorf("WVCMC: L-BFGS needs full batches (N_b = %d < N = %d); use %s for minibatches", opt.BatchSize, mb.NumData(), Adam)
		}
	}
	iters := opt.Iters
	if iters == 0 {
		iters = DefaultLBFGSIters
	}
	relTol := opt.RelTol
	if relTol == 0 {
		relTol = DefaultRelTol
	}
	m := init.Clone()
	grad := m.Clone()
	fit := &Fit{Method: LBFGS, Objective: []float64{f0}}
	x0 := flattenMap(init)
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
			unflattenMap(m, x)
			fit.Evaluations++
			f, err := v.ValueGrad(grad, m)
			cacheX = append(cacheX[:0], x...)
			cacheF, cacheOK = f, err == nil
			if err != nil {
				lastErr = err
				return
			}
			cacheG = append(cacheG[:0], flattenMap(grad)...)
			fit.GradNorm = frob(grad)
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
	settings := &optimize.Settings{
		MajorIterations: iters,
		Converger:       &optimize.FunctionConverge{Relative: relTol, Iterations: 10},
		Recorder: recorderFunc(func(loc *optimize.Location, op optimize.Operation) error {
			if op != optimize.MajorIteration {
				return nil
			}
			fit.Iters++
			if opt.Trace {
				fit.Objective = append(fit.Objective, loc.F)
			}
			if opt.Observe != nil || stop != nil {
				unflattenMap(m, loc.X)
			}
			if opt.Observe != nil {
				opt.Observe(fit.Iters, fit.Evaluations, m)
			}
			if cancelled(opt.Done) {
				return fmt.Errorf("%w at iteration %d of %s", ErrCancelled, fit.Iters, LBFGS)
			}
			if stop != nil {
				return stop.observe(m, fit.Iters)
			}
			return nil
		}),
	}
	res, err := optimize.Minimize(prob, x0, settings, &optimize.LBFGS{})
	if errors.Is(err, ErrCancelled) {
		return nil, err
	}
	if errors.Is(err, errEarlyStop) && stop != nil {
		// The best map is stop.best; res may be nil after a recorder stop.
		fit.Status = err.Error()
		return fit, nil
	}
	if res == nil || math.IsInf(res.F, 0) || math.IsNaN(res.F) || !allFinite(res.X) {
		return nil, fmt.Errorf("%w: L-BFGS failed: %v (last objective error: %v)", ErrDiverged, err, lastErr)
	}
	// A line-search failure after progress still leaves the best point
	// found; it is kept and the status says why the run stopped.
	out := init.Clone()
	unflattenMap(out, res.X)
	fit.Map = out
	if !opt.Trace {
		fit.Objective = append(fit.Objective, res.F)
	}
	if res.Gradient != nil {
		fit.GradNorm = math.Sqrt(floatsDot(res.Gradient, res.Gradient))
	}
	fit.Status = res.Status.String()
	if err != nil {
		fit.Status += ": " + err.Error()
	}
	return fit, nil
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
