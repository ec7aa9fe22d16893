package consensus

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/pprof"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/model"
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

// divergedRise is the rise of the objective, in units of max(|L̃_0|, 1),
// beyond which Diverged reports a run as diverged.
const divergedRise = 10

// Diverged returns an error wrapping ErrDiverged when the run ended far
// worse than it started: its last objective or gradient norm is not
// finite, or the objective rose by more than divergedRise·max(|L̃_0|, 1).
// The guard of WVCMC only undoes steps that break the map, so a fixed
// step too large for the problem (SGD, Adam) can climb without breaking
// it; WVCMC returns such a run as it is and leaves the verdict to the
// caller. It returns nil for a run whose objective decreased.
func (f *Fit) Diverged() error {
	if len(f.Objective) == 0 {
		return nil
	}
	f0, f1 := f.Objective[0], f.Objective[len(f.Objective)-1]
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	name := "WVCMC"
	if f.Method != nil {
		name = f.Method.Name()
	}
	switch {
	case !finite(f1) || !finite(f.GradNorm):
		return fmt.Errorf("%w: %s ended with objective %g and gradient norm %g", ErrDiverged, name, f1, f.GradNorm)
	case f1-f0 > divergedRise*math.Max(math.Abs(f0), 1):
		return fmt.Errorf("%w: %s raised the objective from %.4g to %.4g in %d iterations (final step %g): the step is too large", ErrDiverged, name, f0, f1, f.Iters, f.FinalStep)
	}
	return nil
}

// WVCMC optimises the variational objective (eq: obj OMA / eq: obj NOMA)
// over the linear map, and its offset b when init has one (a mean-centred
// link, docs/BEYOND.md note 17), starting from init, with the optimiser and
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
//
// A map with an offset (a mean-centred link) is optimised in centred
// coordinates: with ȳ_k the mean of stream k's fitted signals,
// θ_s = Σ_k W_k (y_k^{(s)} − ȳ_k) + c, c = b + Σ_k W_k ȳ_k, so that the
// fitted outputs' mean is c whatever W (the optimisers see the offset
// decoupled from the matrices, and whitened coordinates, spanning the
// centred signals, reach no constant shift that c already makes). Its
// offset is first fitted alone, W fixed (fitOffset). Observe and the
// result get the map on y itself.
//
// On a link whose matched precoder sends some direction without power it
// fails with ErrRankDeficient: the entropy bound is −∞ for every map.
func WVCMC(ctx context.Context, rng *rand.Rand, rx *channel.Received, target model.Target, init Map, s Settings) (*Fit, error) {
	r, err := s.resolve()
	if err != nil {
		return nil, err
	}
	if err := checkFullRank(rx); err != nil {
		return nil, err
	}
	var shift *signalShift
	if init.Offset != nil {
		nfit := rx.S
		if r.holdout > 0 {
			nfit = max(1, rx.S-int(math.Round(r.holdout*float64(rx.S))))
		}
		shift = newSignalShift(rx, nfit)
		rx, init = shift.rx, shift.centred(init, 1)
		if obs := r.Observe; obs != nil {
			r.Observe = func(iter, evals int, m Map) { obs(iter, evals, shift.centred(m, -1)) }
		}
	}
	fit, err := wvcmc(ctx, rng, rx, target, init, r)
	if err != nil || shift == nil {
		return fit, err
	}
	fit.Map = shift.centred(fit.Map, -1)
	return fit, nil
}

// FitFromStart runs WVCMC from the paper's start point: InitialMap(rx),
// then WVCMC(ctx, rng, rx, target, start, s). It returns the fit, the
// start map (unchanged by the run) and whether the OMA start fell back to
// the decoded average (InitialMap). An error of the start point is
// returned as "start point: …", with a zero start.
func FitFromStart(ctx context.Context, rng *rand.Rand, rx *channel.Received, target model.Target, s Settings) (fit *Fit, start Map, fallback bool, err error) {
	start, fallback, err = InitialMap(rx)
	if err != nil {
		return nil, Map{}, false, fmt.Errorf("start point: %w", err)
	}
	fit, err = WVCMC(ctx, rng, rx, target, start, s)
	return fit, start, fallback, err
}

// signalShift holds signals shifted to centred coordinates (WVCMC): each
// stream minus ȳ_k, the mean of its first nfit rows.
type signalShift struct {
	rx   *channel.Received
	ybar [][]float64
}

func newSignalShift(rx *channel.Received, nfit int) *signalShift {
	out := *rx
	out.Y = make([]*mat.Dense, len(rx.Y))
	sh := &signalShift{rx: &out, ybar: make([][]float64, len(rx.Y))}
	for k, y := range rx.Y {
		_, c := y.Dims()
		m := make([]float64, c)
		for i := range nfit {
			floats.Add(m, y.RawRowView(i))
		}
		floats.Scale(1/float64(nfit), m)
		yc := mat.DenseCopyOf(y)
		for i := range rx.S {
			floats.Sub(yc.RawRowView(i), m)
		}
		out.Y[k], sh.ybar[k] = yc, m
	}
	return sh
}

// centred returns m with its offset moved by sign·Σ_k W_k ȳ_k: sign = 1
// from a map on y to the same map on the centred signals, −1 back.
func (sh *signalShift) centred(m Map, sign float64) Map {
	out := m.Clone()
	var t mat.VecDense
	for k, w := range m.W {
		t.MulVec(w, mat.NewVecDense(len(sh.ybar[k]), sh.ybar[k]))
		floats.AddScaled(out.Offset, sign, t.RawVector().Data)
	}
	return out
}

// Offset start: at most offsetIters L-BFGS iterations, to a gradient of
// offsetGradTol times the start's.
const (
	offsetIters   = 100
	offsetGradTol = 1e-6
)

// fitOffset returns m with its offset moved to the minimiser of L̃ in b at
// W fixed, and the gradient evaluations it took: L-BFGS on b alone, from
// m's offset. For a log-concave target this is a convex problem in d
// variables whose solution makes the fitted outputs' mean score vanish,
// (1/S) Σ_s ∇ log p(θ_s, Z) = 0 (docs/BEYOND.md eq. (17.6)) — for a
// Gaussian target, their mean is the posterior mean. The joint
// optimisation then starts there rather than at the Gaussian consensus of
// the workers' means, which a non-Gaussian posterior's mean need not be,
// and which early stopping on held-out signals may not leave far. A run
// that fails returns m.
func (v *Variational) fitOffset(m Map) (Map, int) {
	out, grad := m.Clone(), zeroLike(m)
	evals := 0
	var (
		cacheX, cacheG []float64
		cacheF         float64
		cacheOK        bool
	)
	eval := func(b []float64) {
		if cacheX != nil && slices.Equal(cacheX, b) {
			return
		}
		copy(out.Offset, b)
		evals++
		f, err := v.ValueGrad(grad, out)
		cacheX = append(cacheX[:0], b...)
		cacheF, cacheOK = f, err == nil
		cacheG = append(cacheG[:0], grad.Offset...)
	}
	prob := optimize.Problem{
		Func: func(b []float64) float64 {
			if eval(b); !cacheOK {
				return math.Inf(1)
			}
			return cacheF
		},
		Grad: func(g, b []float64) {
			if eval(b); !cacheOK {
				for i := range g {
					g[i] = math.NaN()
				}
				return
			}
			copy(g, cacheG)
		},
	}
	b0 := slices.Clone(m.Offset)
	eval(b0)
	if !cacheOK {
		return m, evals
	}
	f0 := cacheF
	settings := &optimize.Settings{MajorIterations: offsetIters, GradientThreshold: offsetGradTol * floats.Norm(cacheG, 2)}
	res, _ := optimize.Minimize(prob, b0, settings, &optimize.LBFGS{})
	if res == nil || !allFinite(res.X) || math.IsInf(res.F, 0) || math.IsNaN(res.F) || !(res.F < f0) {
		return m, evals
	}
	copy(out.Offset, res.X)
	return out, evals
}

// wvcmc is WVCMC with its settings resolved.
func wvcmc(ctx context.Context, rng *rand.Rand, rx *channel.Received, target model.Target, init Map, r resolved) (*Fit, error) {
	var err error
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
	offsetEvals := 0
	if init.Offset != nil {
		init, offsetEvals = v.fitOffset(init)
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
		if _, curved := target.(model.Curved); !curved || w.d*w.r+w.offset > m.MaxDim || w.unspanned > 0 {
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
	fit.Evaluations += offsetEvals
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
