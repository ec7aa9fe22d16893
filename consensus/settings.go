package consensus

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Settings configures the WVCMC optimisation, as optimize.Settings does
// for gonum's optimisers: a Method with its own settings, and what every
// method shares. The zero value is the documented default everywhere:
// L-BFGS (LBFGS{}) with the last DefaultHoldout of the signals held out to
// stop early.
type Settings struct {
	// Method is the optimiser: SGD, Adam, LBFGS or Newton (nil means
	// LBFGS{}).
	Method Method
	// Holdout is the fraction of the S signals (the last ones) kept out of
	// the objective and used to stop early: the run returns the map with
	// the best held-out objective and stops after Patience iterations
	// without improvement. 0 means DefaultHoldout; Off runs without a
	// held-out set (the in-sample objective alone); other values must lie
	// in (0, 1). With S below the number of receive dimensions (OMA with
	// S < K·m_r) the in-sample objective is unbounded below (see
	// Fit.Unspanned), and a held-out criterion is one way to make stopping
	// meaningful; LBFGS.Whiten (the Converged preset) is another.
	Holdout float64
	// Patience is the number of non-improving iterations tolerated under
	// Holdout (0 means DefaultPatience).
	Patience int
	// MaxEvaluations stops the run with status BudgetSpent after the
	// iteration at which the gradient evaluations reach it (0: no limit).
	MaxEvaluations int
	// Trace records the objective after every iteration (one extra pass
	// over the data per iteration for SGD and Adam), and for L-BFGS and
	// Newton the gradient norm (Fit.GradNorms); otherwise only the start
	// and final values.
	Trace bool
	// Observe, if set, is called after every iteration with the iteration
	// count (1-based), the gradient evaluations so far (each costs N_b·S
	// per-example gradients; L-BFGS line searches make it exceed the
	// iterations) and the current map (valid only during the call).
	Observe func(iter, evaluations int, m Map)
	// Progress, if set, is called after every iteration with the
	// iterations done and the method's iteration cap (IterationCap; a run
	// may stop before it), to show the run's advance. It changes nothing
	// in the run.
	Progress func(done, max int)
}

// IterationCap returns the most iterations the run of s makes: the
// method's Iters with its default filled in (0 when s is invalid).
func (s Settings) IterationCap() int {
	r, err := s.resolve()
	if err != nil {
		return 0
	}
	switch m := r.Method.(type) {
	case SGD:
		return m.Iters
	case Adam:
		return m.Iters
	case LBFGS:
		return m.Iters
	case Newton:
		return m.Iters
	}
	return 0
}

// Off disables a setting whose zero value selects a default:
// Settings.Holdout = Off runs without a held-out set, LBFGS.RelTol = Off
// without the stalled-objective test, SGD.Iters = Off or Adam.Iters = Off
// without any iteration.
const Off = -1

// Defaults of the settings (used where a setting is zero).
const (
	// DefaultHoldout is the fraction of the signals held out to stop early.
	DefaultHoldout = 0.2
	// DefaultPatience: iterations without held-out improvement before
	// stopping.
	DefaultPatience = 5
	// DefaultIters is t_m of SGD and Adam (the paper's probit t_m).
	DefaultIters = 50
	// DefaultAdamStep is Adam's step relative to the start map's scale.
	DefaultAdamStep = 0.01
	// DefaultLBFGSIters caps L-BFGS's major iterations.
	DefaultLBFGSIters = 1000
	// DefaultRelTol: L̃ is an average log-density of order N; a relative
	// change of 1e-7 is far below the Monte Carlo error of the S-sample
	// average that defines it.
	DefaultRelTol = 1e-7
)

// Presets of the converged setting.
const (
	// ConvergedGradTol is Converged's default tolerance on ‖∇L̃‖ relative
	// to the start. Measured on paper-size probit trials (bench/convstudy,
	// docs/PERFORMANCE.md): from 1e-4 to 1e-8 the in-sample err2 and kl
	// move by ≤ 0.5%, while the fresh-signal metrics differ by up to 2×
	// between nearby minima at any tolerance; 1e-6 costs 3–10× the
	// iterations of 1e-4 and settles nothing more.
	ConvergedGradTol = 1e-4
	// ConvergedIters is Converged's iteration cap, far above the
	// iterations its Newton method (or, where it falls back, its whitened
	// L-BFGS) needs.
	ConvergedIters = 20000
	// DefaultNewtonMaxDim is the largest number of whitened coordinates
	// d·r for which Newton forms the Hessian: the synthetic probit
	// experiments (d = 5: NOMA d·r = 50, OMA ≤ 250). On MNIST (d = 30,
	// d·r = 1800) an iteration costs ≈ 6.5 of L-BFGS's and gained less
	// than that (docs/PERFORMANCE.md).
	DefaultNewtonMaxDim = 512
)

// Converged returns the settings that run WVCMC to a stationary point of
// the in-sample objective: Newton's method in whitened coordinates,
// confined to the start's region (Newton, LBFGS.Whiten, LBFGS.Confine),
// without a held-out set, stopped when ‖∇L̃‖ ≤ gradTol times its start
// value, or at maxIters iterations (0 means ConvergedIters, a gradTol of 0
// ConvergedGradTol; Fit.Status says which stopped it). Where Newton does not apply (a target that is
// not model.Curved, more than DefaultNewtonMaxDim coordinates, or signals
// that do not span every receive dimension) the run is whitened L-BFGS
// with the same stopping rule, without a stall test (Newton.FirstOrder).
// When the fitted signals do not span every receive dimension
// (Fit.Unspanned > 0: OMA with S < K·m_r) the in-sample objective has no
// minimum; the stationary point is then that of L̃ over the maps that
// agree with the start map along the unspanned directions (see
// LBFGS.Whiten).
func Converged(maxIters int, gradTol float64) Settings {
	if maxIters == 0 {
		maxIters = ConvergedIters
	}
	if gradTol == 0 {
		gradTol = ConvergedGradTol
	}
	return Settings{
		Method:  Newton{Iters: maxIters, GradTol: gradTol, Confine: true},
		Holdout: Off,
	}
}

// Paper returns the paper's procedure (Algorithms 1–2): SGD with step η
// for t_m = iters iterations on minibatches of batch data points (0: full
// batch), without a held-out set.
func Paper(step float64, iters, batch int) Settings {
	return Settings{Method: SGD{Step: step, Iters: iters, BatchSize: batch}, Holdout: Off}
}

// Method is a WVCMC optimiser with its own settings: SGD, Adam, LBFGS or
// Newton (values or pointers). The zero value of each is its documented
// default.
type Method interface {
	// Name is the optimiser's name in reports: "sgd", "adam", "lbfgs" or
	// "newton".
	Name() string
	method() // the set is closed
}

// Method names, as Name returns them.
const (
	NameSGD    = "sgd"
	NameAdam   = "adam"
	NameLBFGS  = "lbfgs"
	NameNewton = "newton"
)

// ParseMethod returns the zero-valued (default) method named name, one of
// the names Method.Name returns, in any case.
func ParseMethod(name string) (Method, error) {
	switch strings.ToLower(name) {
	case NameSGD:
		return SGD{}, nil
	case NameAdam:
		return Adam{}, nil
	case NameLBFGS:
		return LBFGS{}, nil
	case NameNewton:
		return Newton{}, nil
	}
	return nil, fmt.Errorf("unknown optimiser %q (want %s, %s, %s or %s)", name, NameLBFGS, NameNewton, NameAdam, NameSGD)
}

// SGD is the paper's literal procedure (Algorithms 1–2): W ← W − η ∇L̃
// for t_m iterations, on full batches or minibatches of N_b data points.
type SGD struct {
	// Step is η > 0. It has no default: the paper's η are tied to the
	// scale of the signals (docs/MATH.md note 11).
	Step float64
	// Iters is t_m (0 means DefaultIters; Off runs no iteration and
	// returns the start map).
	Iters int
	// BatchSize is N_b; 0 or ≥ N means full batch.
	BatchSize int
}

func (SGD) Name() string { return NameSGD }
func (SGD) method()      {}

func (m SGD) resolve() SGD {
	m.Iters = iters(m.Iters)
	return m
}

// iters resolves SGD's and Adam's iterations: 0 is the default, Off none.
func iters(n int) int {
	switch n {
	case 0:
		return DefaultIters
	case Off:
		return 0
	}
	return n
}

// Adam runs Adam on minibatch gradients with a step relative to the scale
// of the start map, decayed linearly to zero over Iters iterations.
type Adam struct {
	// Step is the relative step α: the step on each entry of W_k is α
	// times the root-mean-square entry of the start W_k (0 means
	// DefaultAdamStep).
	Step float64
	// Iters is the number of iterations (0 means DefaultIters; Off runs
	// no iteration and returns the start map).
	Iters int
	// BatchSize is N_b; 0 or ≥ N means full batch.
	BatchSize int
}

func (Adam) Name() string { return NameAdam }
func (Adam) method()      {}

func (m Adam) resolve() Adam {
	if m.Step == 0 {
		m.Step = DefaultAdamStep
	}
	m.Iters = iters(m.Iters)
	return m
}

// LBFGS minimises the full-batch objective with gonum's L-BFGS. It needs
// no step size. It stops on the first of: ‖∇L̃‖_F ≤ GradTol·‖∇L̃(W_0)‖_F
// (GradientConverged; gonum's own test ‖∇‖_∞ < 1e-12 also applies), an
// objective that improved by less than RelTol·|L̃| over 10 iterations
// (ObjectiveStalled), Iters iterations (IterationCap), or a line search
// that finds no lower point (LineSearchFailed, the best point kept).
type LBFGS struct {
	// Iters caps the major iterations (0 means DefaultLBFGSIters).
	Iters int
	// GradTol is the gradient tolerance relative to the start gradient
	// norm; 0 means no relative gradient test.
	GradTol float64
	// RelTol is the relative objective tolerance of the stall test (0
	// means DefaultRelTol; Off disables the test).
	RelTol float64
	// Whiten runs L-BFGS in whitened coordinates. With Y = U Σ Vᵀ the thin
	// SVD of the S × (streams·m_r) matrix of stacked in-sample signals
	// (rows y_s), the stacked map is W = W_0 (I − V Vᵀ) + √S B Σ^{-1} Vᵀ
	// and L-BFGS moves B (d × rank): the in-sample outputs are
	// θ_s = √S B u_s, so the data term's Hessian is ≈ ∇²(−log p) ⊗ I
	// whatever the scale and the correlation of the signals. When the
	// signals span every receive dimension (S ≥ K·m_r under OMA, S ≥ m_r
	// under NOMA) this is a change of variables with the same minimiser.
	// Otherwise the in-sample objective has no minimum (Fit.Unspanned) and
	// whitening also keeps the map at W_0 along the directions the signals
	// do not span: the run minimises L̃ over the maps that agree with W_0
	// there, a problem that has a minimiser. Gradient norms are then those
	// of that restricted problem, ‖∇L̃ V‖_F.
	Whiten bool
	// Confine keeps the run in the region of maps it starts in. The maps
	// at which L̃ is finite (every W_k E_k invertible) fall into 2^streams
	// regions, one per pattern of signs of det(W_k E_k), separated by
	// singular maps where L̃ = +∞; descent from W_0 in small steps never
	// leaves its region, but a line search may step over the barrier.
	// Confine rejects such trial points, as if L̃ were +∞ there, so the
	// run converges to a stationary point that descent from W_0 reaches.
	Confine bool
}

func (LBFGS) Name() string { return NameLBFGS }
func (LBFGS) method()      {}

func (m LBFGS) resolve() LBFGS {
	if m.Iters == 0 {
		m.Iters = DefaultLBFGSIters
	}
	if m.RelTol == 0 {
		m.RelTol = DefaultRelTol
	}
	return m
}

// Newton minimises the full-batch objective by Newton's method with the
// exact Hessian of L̃, in the whitened coordinates of LBFGS.Whiten (gonum's
// optimize.Newton: where the Hessian is not positive definite a multiple
// of the identity is added until it is, then a line search along the
// step). The Hessian is that of the data term, (1/S) Σ_s
// (−∇² log p(θ_s)) ⊗ z_s z_sᵀ in the whitened signals z_s, plus the
// entropy terms' in closed form; forming it costs about S·N·d²
// multiply-adds with a probit target and factoring it (d·r)³/3. Near the
// minimiser the steps converge quadratically, where L-BFGS on this
// ill-conditioned objective needs hundreds of iterations.
//
// It needs a target that provides its Hessians (model.Curved), at most
// MaxDim whitened coordinates d·r, and signals that span every receive
// dimension (Fit.Unspanned = 0: there L-BFGS and Newton reach the same
// minimum, while on the restricted problem of unspanned signals, which has
// several, they can reach different ones); otherwise the run is whitened
// L-BFGS with the same stopping rule (FirstOrder), and Fit.Method says so. It
// stops on the first of: ‖∇L̃‖ ≤ GradTol·‖∇L̃(W_0)‖ in the whitened norm
// (GradientConverged), Iters iterations (IterationCap), or a line search
// that finds no lower point (LineSearchFailed).
type Newton struct {
	// Iters caps the iterations (0 means ConvergedIters).
	Iters int
	// GradTol is the gradient tolerance relative to the start gradient
	// norm (0 means ConvergedGradTol).
	GradTol float64
	// Confine keeps the run in the region of maps it starts in
	// (LBFGS.Confine).
	Confine bool
	// MaxDim is the largest d·r for which the Hessian is formed (0 means
	// DefaultNewtonMaxDim).
	MaxDim int
}

// FirstOrder returns the whitened L-BFGS setting with n's stopping rule,
// which a Newton run falls back to (and which counts only gradients).
func (n Newton) FirstOrder() LBFGS {
	n = n.resolve()
	return LBFGS{Iters: n.Iters, GradTol: n.GradTol, RelTol: Off, Whiten: true, Confine: n.Confine}
}

func (Newton) Name() string { return NameNewton }
func (Newton) method()      {}

func (m Newton) resolve() Newton {
	if m.Iters == 0 {
		m.Iters = ConvergedIters
	}
	if m.GradTol == 0 {
		m.GradTol = ConvergedGradTol
	}
	if m.MaxDim == 0 {
		m.MaxDim = DefaultNewtonMaxDim
	}
	return m
}

// resolved are Settings with every default filled in.
type resolved struct {
	Settings
	holdout float64 // 0: none
}

// resolve fills in the defaults and checks the settings.
func (s Settings) resolve() (resolved, error) {
	r := resolved{Settings: s}
	switch m := s.Method.(type) {
	case nil:
		r.Method = LBFGS{Iters: DefaultLBFGSIters, RelTol: DefaultRelTol}
	case SGD:
		r.Method = m.resolve()
	case *SGD:
		r.Method = deref(m).resolve()
	case Adam:
		r.Method = m.resolve()
	case *Adam:
		r.Method = deref(m).resolve()
	case LBFGS:
		r.Method = m.resolve()
	case *LBFGS:
		r.Method = deref(m).resolve()
	case Newton:
		r.Method = m.resolve()
	case *Newton:
		r.Method = deref(m).resolve()
	}
	if err := r.check(); err != nil {
		return r, err
	}
	switch {
	case s.Holdout == 0:
		r.holdout = DefaultHoldout
	case s.Holdout == Off:
	case s.Holdout > 0 && s.Holdout < 1:
		r.holdout = s.Holdout
	default:
		return r, fmt.Errorf("WVCMC: holdout fraction %v must be in (0, 1), 0 (default %v) or Off", s.Holdout, DefaultHoldout)
	}
	if r.Patience == 0 {
		r.Patience = DefaultPatience
	}
	if r.Patience < 0 || r.MaxEvaluations < 0 {
		return r, fmt.Errorf("WVCMC: patience %d and evaluation budget %d must be ≥ 0", r.Patience, r.MaxEvaluations)
	}
	return r, nil
}

// deref is *p, or the zero value for a nil p.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// whiten reports whether the run is in whitened coordinates (Newton
// always is).
func (r resolved) whiten() bool {
	switch m := r.Method.(type) {
	case LBFGS:
		return m.Whiten
	case Newton:
		return true
	}
	return false
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

// check reports settings no optimiser can run with.
func (r resolved) check() error {
	positive := func(what string, x float64) error {
		if !(x > 0) || math.IsInf(x, 0) {
			return fmt.Errorf("WVCMC %s: %s %v must be positive and finite", r.Method.Name(), what, x)
		}
		return nil
	}
	switch m := r.Method.(type) {
	case SGD:
		if m.Step == 0 {
			return errors.New("WVCMC sgd: no step η given (SGD has no default step: the paper's η depend on the scale of the signals)")
		}
		if err := positive("step", m.Step); err != nil {
			return err
		}
		return iterBatch(m.Name(), m.Iters, m.BatchSize)
	case Adam:
		if err := positive("relative step", m.Step); err != nil {
			return err
		}
		return iterBatch(m.Name(), m.Iters, m.BatchSize)
	case LBFGS:
		if m.Iters < 0 {
			return fmt.Errorf("WVCMC lbfgs: %d iterations", m.Iters)
		}
		if !(m.GradTol >= 0) || math.IsInf(m.GradTol, 0) {
			return fmt.Errorf("WVCMC lbfgs: gradient tolerance %v must be ≥ 0 and finite", m.GradTol)
		}
		if m.RelTol != Off {
			return positive("relative objective tolerance", m.RelTol)
		}
	case Newton:
		if m.Iters < 0 || m.MaxDim < 0 {
			return fmt.Errorf("WVCMC newton: %d iterations, largest dimension %d: both must be ≥ 0", m.Iters, m.MaxDim)
		}
		return positive("gradient tolerance", m.GradTol)
	}
	return nil
}

func iterBatch(name string, iters, batch int) error {
	if iters < 0 || batch < 0 {
		return fmt.Errorf("WVCMC %s: %d iterations, batch %d: both must be ≥ 0", name, iters, batch)
	}
	return nil
}

// Status says why an optimisation stopped.
type Status int

// Statuses.
const (
	// NotStopped is the zero value; no finished run reports it.
	NotStopped Status = iota
	// GradientConverged: ‖∇L̃‖_F fell to LBFGS.GradTol times its start
	// value (or below gonum's absolute ‖∇‖_∞ < 1e-12): a stationary point.
	GradientConverged
	// ObjectiveStalled: L̃ improved by less than LBFGS.RelTol·|L̃| over
	// 10 iterations.
	ObjectiveStalled
	// IterationCap: the method ran its iterations (t_m for SGD and Adam,
	// the cap for L-BFGS).
	IterationCap
	// HeldOutStop: the held-out objective did not improve for Patience
	// iterations; the best held-out map is kept.
	HeldOutStop
	// BudgetSpent: Settings.MaxEvaluations gradient evaluations were made.
	BudgetSpent
	// LineSearchFailed: L-BFGS's line search found no lower point; the
	// best point found is kept.
	LineSearchFailed
	// Failed: gonum's L-BFGS stopped for another reason (Fit.Message).
	Failed
)

var statusNames = [...]string{
	NotStopped:        "not-stopped",
	GradientConverged: "gradient-converged",
	ObjectiveStalled:  "objective-stalled",
	IterationCap:      "iteration-cap",
	HeldOutStop:       "held-out-stop",
	BudgetSpent:       "budget-spent",
	LineSearchFailed:  "line-search-failed",
	Failed:            "failed",
}

// String returns the status's name in reports ("gradient-converged", …).
func (s Status) String() string {
	if s < 0 || int(s) >= len(statusNames) {
		return fmt.Sprintf("status(%d)", int(s))
	}
	return statusNames[s]
}

// MarshalText writes the status as its name.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
