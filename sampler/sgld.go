package sampler

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/model"
)

// SGLDConfig holds the settings of stochastic gradient Langevin dynamics
// (eq: update SGLD).
type SGLDConfig struct {
	// Alpha, Beta and Gamma set the step size η_t = α(β + t)^{−γ},
	// t = 0, 1, .... The paper uses β > 0 and γ ∈ (0.5, 1]; γ = 0 (a
	// constant step α β⁰ = α) is also accepted. α > 0, β > 0, 0 ≤ γ ≤ 1.
	Alpha, Beta, Gamma float64
	// BatchSize is N_b, 1 ≤ N_b ≤ N; each iteration draws a fresh
	// minibatch of N_b distinct data points uniformly without replacement.
	BatchSize int
	// BurnIn is t_b ≥ 0, the number of initial iterates discarded.
	BurnIn int
	// Every, if positive, calls Observe after every Every-th iteration (and
	// never otherwise).
	Every int
	// Observe, if not nil, receives the number t of iterations done (the
	// count of computed per-example gradients is t·N_b, docs/MATH.md note 8) and
	// the kept samples so far (the first rows of the output; nil while
	// still in burn-in). kept is a view of the output and must not be
	// retained past the call or modified.
	Observe func(t int, kept *mat.Dense)
}

// RunSGLD runs SGLD from θ^{(0)} = theta0,
//
//	θ^{(t+1)} = θ^{(t)} + (η_t/2) [∇log p(θ^{(t)}) + (N/N_b) Σ_{n∈B_t} ∇log p(z_n|θ^{(t)})] + n^{(t)},
//	n^{(t)} ~ N(0, η_t I),  η_t = α(β + t)^{−γ}               (eq: update SGLD)
//
// with the minibatch gradient from target.GradLogJointBatch, and stores the
// iterates θ^{(t)}, t = t_b+1, ..., t_b+S, in the S rows of dst (so it runs
// t_b + S iterations). B_t is drawn with a partial Fisher–Yates shuffle of
// a persistent index permutation, which yields a uniform N_b-subset at
// every iteration from the caller's rng alone. It is SGLDKernel driven by
// Run, with η_t set before each step by PolynomialDecay. After set-up,
// iterations do not allocate (provided the target's GradLogJointBatch does
// not).
//
// It returns an error for invalid settings, if len(theta0) != d, or if an
// iterate becomes NaN or ±Inf (naming the iteration and η_t, typically a
// step size too large for the target's curvature). It panics if dst does
// not have d columns.
func RunSGLD(rng *rand.Rand, target model.Minibatcher, cfg SGLDConfig, theta0 []float64, dst *mat.Dense) error {
	d, n := target.Dim(), target.NumData()
	switch {
	case !(cfg.Alpha > 0) || math.IsInf(cfg.Alpha, 1):
		return fmt.Errorf("sgld: step scale α = %v must be positive and finite", cfg.Alpha)
	case !(cfg.Beta > 0) || math.IsInf(cfg.Beta, 1):
		return fmt.Errorf("sgld: step offset β = %v must be positive and finite", cfg.Beta)
	case !(cfg.Gamma >= 0 && cfg.Gamma <= 1):
		return fmt.Errorf("sgld: step decay γ = %v must be in [0, 1]", cfg.Gamma)
	case cfg.BatchSize < 1 || cfg.BatchSize > n:
		return fmt.Errorf("sgld: batch size %d not in [1, N = %d]", cfg.BatchSize, n)
	case cfg.BurnIn < 0:
		return fmt.Errorf("sgld: negative burn-in %d", cfg.BurnIn)
	case cfg.Every < 0:
		return fmt.Errorf("sgld: negative observation period %d", cfg.Every)
	case len(theta0) != d:
		return fmt.Errorf("sgld: θ₀ has length %d, target dimension is %d", len(theta0), d)
	}
	for j, x := range theta0 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("sgld: θ₀[%d] = %v is not finite", j, x)
		}
	}
	if _, c := dst.Dims(); c != d {
		panic(mat.ErrShape)
	}

	k, err := NewSGLDKernel(target, cfg.BatchSize)
	if err != nil {
		return err
	}
	st := k.Init(theta0)
	sched := PolynomialDecay{Alpha: cfg.Alpha, Beta: cfg.Beta, Gamma: cfg.Gamma}
	sch := Schedule{
		BurnIn: cfg.BurnIn,
		Before: func(t int) { k.StepSize = sched.At(t) },
	}
	if cfg.Observe != nil && cfg.Every > 0 {
		sch.After = func(t int, _ Info) {
			done := t + 1
			if done%cfg.Every != 0 {
				return
			}
			var view *mat.Dense
			if kept := done - cfg.BurnIn; kept > 0 {
				view = dst.Slice(0, kept, 0, d).(*mat.Dense)
			}
			cfg.Observe(done, view)
		}
	}
	if _, err := Run(rng, k, st, sch, dst); err != nil {
		return fmt.Errorf("sgld: %w", err)
	}
	return nil
}

// PolynomialDecay is the step-size schedule η_t = α(β + t)^{−γ},
// t = 0, 1, … (eq: update SGLD).
type PolynomialDecay struct {
	Alpha, Beta, Gamma float64
}

// At returns η_t.
func (p PolynomialDecay) At(t int) float64 {
	return p.Alpha * math.Pow(p.Beta+float64(t), -p.Gamma)
}

// SGLDKernel is one step of stochastic gradient Langevin dynamics
// (eq: update SGLD) at step size η = StepSize:
//
//	θ ← θ + (η/2) [∇log p(θ) + (N/N_b) Σ_{n∈B} ∇log p(z_n|θ)] + n,  n ~ N(0, η I),
//
// with a fresh minibatch B of N_b distinct data points drawn uniformly
// without replacement, by a partial Fisher–Yates shuffle of the state's
// persistent index permutation. The step-size schedule is set from
// outside (PolynomialDecay). Every move is "accepted" (no Metropolis
// correction); Divergent flags an iterate that is not finite. The kernel's
// target may cache scratch space: one kernel per concurrent chain.
type SGLDKernel struct {
	// StepSize is η.
	StepSize float64

	target model.Minibatcher
	batch  int
}

// SGLDState is the state of an SGLD chain: θ, the gradient buffer and the
// index permutation the minibatches are drawn from.
type SGLDState struct {
	theta, grad *mat.Dense // 1×d
	perm        []int
}

// Position returns the current θ.
func (s *SGLDState) Position() []float64 { return s.theta.RawRowView(0) }

// NewSGLDKernel returns the SGLD kernel on target with minibatches of
// batchSize points. It returns an error unless 1 ≤ batchSize ≤ N.
func NewSGLDKernel(target model.Minibatcher, batchSize int) (*SGLDKernel, error) {
	if n := target.NumData(); batchSize < 1 || batchSize > n {
		return nil, fmt.Errorf("sgld: batch size %d not in [1, N = %d]", batchSize, n)
	}
	return &SGLDKernel{target: target, batch: batchSize}, nil
}

// Init returns a state at θ = theta0 (copied). It panics if
// len(theta0) != d.
func (k *SGLDKernel) Init(theta0 []float64) *SGLDState {
	d, n := k.target.Dim(), k.target.NumData()
	if len(theta0) != d {
		panic(mat.ErrShape)
	}
	s := &SGLDState{theta: mat.NewDense(1, d, nil), grad: mat.NewDense(1, d, nil), perm: make([]int, n)}
	copy(s.theta.RawRowView(0), theta0)
	for i := range s.perm {
		s.perm[i] = i
	}
	return s
}

// Step makes one SGLD iteration of s. It does not allocate (provided the
// target's GradLogJointBatch does not).
func (k *SGLDKernel) Step(rng *rand.Rand, s *SGLDState) Info {
	n, nb := len(s.perm), k.batch
	for i := 0; i < nb; i++ {
		j := i + rng.IntN(n-i)
		s.perm[i], s.perm[j] = s.perm[j], s.perm[i]
	}
	k.target.GradLogJointBatch(s.grad, s.theta, s.perm[:nb])
	eta := k.StepSize
	half, sd := eta/2, math.Sqrt(eta)
	th, g := s.theta.RawRowView(0), s.grad.RawRowView(0)
	finite := true
	for j := range th {
		th[j] += half*g[j] + sd*rng.NormFloat64()
		finite = finite && !math.IsNaN(th[j]) && !math.IsInf(th[j], 0)
	}
	return Info{AcceptProb: 1, Accepted: true, LogDensity: math.NaN(), StepSize: eta, Divergent: !finite}
}
