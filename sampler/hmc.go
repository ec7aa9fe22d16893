package sampler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/model"
)

// HMCKernel is Hamiltonian Monte Carlo preconditioned by the Laplace
// approximation. With θ̂ the posterior mode and H = −∇² log p(θ̂, Z) = L Lᵀ,
// it moves with identity mass in whitened coordinates φ = Lᵀ(θ − θ̂), where
// a log-concave posterior with many data points is close to N(0, I). A step
// draws r ~ N(0, I), makes n = min(MaxSteps, ⌈Length/ε⌉) leapfrog steps of
// size ε = StepSize·U(0.8, 1.2) (the jitter against periodicity) and
// accepts the end point with probability min(1, e^{−ΔH}), H(φ, r) =
// −log p(θ) + ‖r‖²/2. Each leapfrog step costs one gradient of the target.
//
// StepSize is the kernel's parameter, set from outside: HMC adapts it
// during burn-in (StepSizeAdaptation). The kernel's target caches scratch
// space, so a kernel must not step two chains concurrently; give each
// concurrent chain its own kernel (WithTarget with a cloned target).
type HMCKernel struct {
	// StepSize is the nominal leapfrog step ε in whitened coordinates.
	StepSize float64
	// Length is the nominal trajectory length nε (1.5, a quarter period
	// of the unit Gaussian) and MaxSteps caps n (100).
	Length   float64
	MaxSteps int

	target model.Fused
	mode   []float64
	l      blas64.Triangular // lower Cholesky factor of H
}

// HMCState is the state of an HMC chain: the whitened position φ, log p
// and ∇_φ log p there, θ, and the trajectory's working space.
type HMCState struct {
	phi, gphi []float64 // position φ and ∇_φ log p at φ
	logp      float64
	theta     []float64 // θ = θ̂ + L^{−ᵀ}φ

	// scratch
	r           []float64  // momentum
	th, g       *mat.Dense // 1×d: θ and ∇_θ log p at the last evaluation
	lp          []float64
	phi0, gphi0 []float64
}

// Position returns the current θ.
func (s *HMCState) Position() []float64 { return s.theta }

// NewHMCKernel prepares HMC on target preconditioned by negHess =
// −∇² log p at the mode (e.g. model.Probit.NegHessian), with StepSize 0.5,
// Length 1.5 and MaxSteps 100. It returns an error if the sizes disagree or
// negHess is not positive definite.
func NewHMCKernel(target model.Fused, mode []float64, negHess mat.Symmetric) (*HMCKernel, error) {
	d := target.Dim()
	if len(mode) != d || negHess.SymmetricDim() != d {
		return nil, fmt.Errorf("hmc: mode has length %d, Hessian is %d×%d, target d = %d", len(mode), negHess.SymmetricDim(), negHess.SymmetricDim(), d)
	}
	var ch mat.Cholesky
	if !ch.Factorize(negHess) {
		return nil, errors.New("hmc: the negative Hessian at the mode is not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	return &HMCKernel{
		StepSize: 0.5, Length: 1.5, MaxSteps: 100,
		target: target, mode: append([]float64(nil), mode...), l: l.RawTriangular(),
	}, nil
}

// WithTarget returns a copy of k (same parameters and preconditioner) on
// target, which must be the same density, e.g. a clone with its own
// scratch space for another goroutine.
func (k *HMCKernel) WithTarget(target model.Fused) *HMCKernel {
	c := *k
	c.target = target
	return &c
}

// Dim returns d, the dimension of θ.
func (k *HMCKernel) Dim() int { return len(k.mode) }

// Init returns a state at θ = theta0, or at the mode (φ = 0) when theta0
// is nil. It returns an error if the log density is not finite there and
// panics if len(theta0) != d.
func (k *HMCKernel) Init(theta0 []float64) (*HMCState, error) {
	d := len(k.mode)
	s := &HMCState{
		phi: make([]float64, d), gphi: make([]float64, d), theta: make([]float64, d),
		r: make([]float64, d), th: mat.NewDense(1, d, nil), g: mat.NewDense(1, d, nil), lp: make([]float64, 1),
		phi0: make([]float64, d), gphi0: make([]float64, d),
	}
	if theta0 != nil {
		if len(theta0) != d {
			panic(mat.ErrShape)
		}
		// φ = Lᵀ(θ₀ − θ̂).
		for i := range s.phi {
			s.phi[i] = theta0[i] - k.mode[i]
		}
		blas64.Trmv(blas.Trans, k.l, blas64.Vector{N: d, Inc: 1, Data: s.phi})
	}
	s.logp = k.eval(s, s.phi, s.gphi)
	copy(s.theta, s.th.RawRowView(0))
	if math.IsNaN(s.logp) || math.IsInf(s.logp, 0) {
		return nil, fmt.Errorf("hmc: log-density %v at the start", s.logp)
	}
	return s, nil
}

// eval sets grad = ∇_φ log p = L^{-1} ∇_θ log p at θ = θ̂ + L^{-ᵀ}φ (left
// in s.th) and returns log p.
func (k *HMCKernel) eval(s *HMCState, phi, grad []float64) float64 {
	th := s.th.RawRowView(0)
	copy(th, phi)
	blas64.Trsv(blas.Trans, k.l, blas64.Vector{N: len(th), Inc: 1, Data: th})
	for i := range th {
		th[i] += k.mode[i]
	}
	k.target.LogJointGrad(s.lp, s.g, s.th)
	copy(grad, s.g.RawRowView(0))
	blas64.Trsv(blas.NoTrans, k.l, blas64.Vector{N: len(grad), Inc: 1, Data: grad})
	return s.lp[0]
}

// Step makes one HMC transition of s. The info carries the acceptance
// probability, the jittered step ε and the number of leapfrog steps, log p
// at the new state, and Divergent when ΔH > DivergenceThreshold or is not
// finite (a trajectory that met a non-finite log density stops there and
// is rejected).
func (k *HMCKernel) Step(rng *rand.Rand, s *HMCState) Info {
	d := len(s.phi)
	eps := k.StepSize * (0.8 + 0.4*rng.Float64())
	steps := max(1, min(k.MaxSteps, int(math.Ceil(k.Length/eps))))
	copy(s.phi0, s.phi)
	copy(s.gphi0, s.gphi)
	var k0 float64
	for i := range d {
		s.r[i] = rng.NormFloat64()
		k0 += s.r[i] * s.r[i] / 2
	}
	lp := s.logp
	for range steps {
		for i := range d {
			s.r[i] += eps / 2 * s.gphi[i]
			s.phi[i] += eps * s.r[i]
		}
		lp = k.eval(s, s.phi, s.gphi)
		if math.IsNaN(lp) || math.IsInf(lp, 0) {
			break
		}
		for i := range d {
			s.r[i] += eps / 2 * s.gphi[i]
		}
	}
	var k1 float64
	for _, ri := range s.r {
		k1 += ri * ri / 2
	}
	logA := lp - k1 - s.logp + k0 // −ΔH
	a := 1.0
	if !(logA >= 0) {
		a = math.Exp(logA) // 0 for NaN or −Inf
		if math.IsNaN(a) {
			a = 0
		}
	}
	info := Info{AcceptProb: a, StepSize: eps, IntegrationSteps: steps, Divergent: !(-logA <= DivergenceThreshold)}
	if rng.Float64() < a {
		s.logp = lp
		copy(s.theta, s.th.RawRowView(0))
		info.Accepted = true
	} else {
		copy(s.phi, s.phi0)
		copy(s.gphi, s.gphi0)
	}
	info.LogDensity = s.logp
	return info
}

// StepSizeAdaptation tunes a step size during burn-in towards a target
// acceptance probability by Robbins–Monro on log ε: after burn-in step t
// with acceptance probability a,
//
//	ε ← ε · exp((a − Target) / √(t + Offset)).
type StepSizeAdaptation struct {
	Target, Offset float64
}

// DefaultStepSizeAdaptation is HMC's: Target 0.8, Offset 10.
var DefaultStepSizeAdaptation = StepSizeAdaptation{Target: 0.8, Offset: 10}

// Update returns the step size after step t with info.
func (a StepSizeAdaptation) Update(eps float64, t int, info Info) float64 {
	return eps * math.Exp((info.AcceptProb-a.Target)/math.Sqrt(float64(t)+a.Offset))
}

// HMC is an HMC chain: an HMCKernel bound to its state, with the step size
// adapted during each burn-in (DefaultStepSizeAdaptation) and then frozen.
//
// It is meant for posteriors on which the Albert–Chib Gibbs sampler mixes
// slowly (nearly separable data, such as MNIST 0 vs 1). An HMC is not safe
// for concurrent use.
type HMC struct {
	k     *HMCKernel
	s     *HMCState
	stats Stats
}

// NewHMC starts an HMC chain at the mode of target, preconditioned by
// negHess = −∇² log p at the mode (e.g. model.Probit.NegHessian).
func NewHMC(target model.Fused, mode []float64, negHess mat.Symmetric) (*HMC, error) {
	k, err := NewHMCKernel(target, mode, negHess)
	if err != nil {
		return nil, err
	}
	return newHMCChain(k, nil)
}

// newHMCChain binds k to a state at theta0 (nil: the mode).
func newHMCChain(k *HMCKernel, theta0 []float64) (*HMC, error) {
	s, err := k.Init(theta0)
	if err != nil {
		return nil, err
	}
	return &HMC{k: k, s: s, stats: Stats{AcceptRate: math.NaN()}}, nil
}

// NewProbitHMC builds an HMC chain for the probit posterior of U, v with
// prior N(0, priorVar·I), started and preconditioned at its mode.
func NewProbitHMC(u *mat.Dense, v []float64, priorVar float64) (*HMC, error) {
	p, err := model.NewProbit(u, v, priorVar)
	if err != nil {
		return nil, err
	}
	mode, err := p.MAP(nil)
	if err != nil {
		return nil, fmt.Errorf("hmc: starting point: %w", err)
	}
	return NewHMC(p, mode, p.NegHessian(mode))
}

// Sample runs burnin transitions that adapt the step size, then stores the
// θ after each of the next S transitions in the S rows of dst: shorthand
// for h.Run(context.Background(), rng, dst, nil, burnin, 1, nil).
func (h *HMC) Sample(rng *rand.Rand, dst *mat.Dense, burnin int) error {
	_, err := h.Run(context.Background(), rng, dst, nil, burnin, 1, nil)
	return err
}

// Run drives the chain with the generic driver Run: burnin transitions
// that adapt the step size (DefaultStepSizeAdaptation), then thin
// transitions per row of dst at the frozen step size, the info of each
// row's transition in infos (if not nil), its advance to progress (if not
// nil), stopping once ctx is done; it returns the statistics after burn-in.
func (h *HMC) Run(ctx context.Context, rng *rand.Rand, dst *mat.Dense, infos []Info, burnin, thin int, progress Progress) (Stats, error) {
	adapt := DefaultStepSizeAdaptation
	sch := Schedule{BurnIn: burnin, Thin: thin, Infos: infos, Progress: progress, Ctx: ctx, After: func(t int, info Info) {
		if t < burnin {
			h.k.StepSize = adapt.Update(h.k.StepSize, t, info)
		}
	}}
	st, err := Run(rng, h.k, h.s, sch, dst)
	if err != nil {
		return st, fmt.Errorf("hmc: %w", err)
	}
	h.stats = st
	return st, nil
}

// Position returns the current θ.
func (h *HMC) Position() []float64 { return h.s.theta }

// Kernel returns the chain's kernel.
func (h *HMC) Kernel() *HMCKernel { return h.k }

// AcceptRate is the fraction of accepted proposals after the last burn-in.
func (h *HMC) AcceptRate() float64 { return h.stats.AcceptRate }

// StepSize is the current leapfrog step ε (in whitened coordinates).
func (h *HMC) StepSize() float64 { return h.k.StepSize }
