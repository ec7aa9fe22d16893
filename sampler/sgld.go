package sampler

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"wcmc/model"
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
// every iteration from the caller's rng alone. After set-up, iterations do
// not allocate (provided the target's GradLogJointBatch does not).
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
	s, c := dst.Dims()
	if c != d {
		panic(mat.ErrShape)
	}

	theta := mat.NewDense(1, d, nil)
	grad := mat.NewDense(1, d, nil)
	th := theta.RawRowView(0)
	g := grad.RawRowView(0)
	copy(th, theta0)
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	nb := cfg.BatchSize
	batch := perm[:nb]
	total := cfg.BurnIn + s
	for t := 0; t < total; t++ {
		for i := 0; i < nb; i++ {
			j := i + rng.IntN(n-i)
			perm[i], perm[j] = perm[j], perm[i]
		}
		target.GradLogJointBatch(grad, theta, batch)
		eta := cfg.Alpha * math.Pow(cfg.Beta+float64(t), -cfg.Gamma)
		half, sd := eta/2, math.Sqrt(eta)
		finite := true
		for j := range th {
			th[j] += half*g[j] + sd*rng.NormFloat64()
			finite = finite && !math.IsNaN(th[j]) && !math.IsInf(th[j], 0)
		}
		if !finite {
			return fmt.Errorf("sgld: θ not finite after iteration %d (η_t = %g): %w", t+1, eta, ErrDiverged)
		}
		done := t + 1
		kept := done - cfg.BurnIn
		if kept > 0 {
			copy(dst.RawRowView(kept-1), th)
		}
		if cfg.Observe != nil && cfg.Every > 0 && done%cfg.Every == 0 {
			var view *mat.Dense
			if kept > 0 {
				view = dst.Slice(0, kept, 0, d).(*mat.Dense)
			}
			cfg.Observe(done, view)
		}
	}
	return nil
}

// ErrDiverged is wrapped by RunSGLD's error when an iterate is not finite.
var ErrDiverged = errors.New("diverged")
