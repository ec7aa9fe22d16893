package sampler

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"

	"github.com/wcmc-project/wcmc/model"
)

// The samplers of the probit posterior, by name.
const (
	// MethodGibbs is the Albert–Chib Gibbs sampler (GibbsKernel), the
	// paper's.
	MethodGibbs = "gibbs"
	// MethodHMC is Laplace-preconditioned HMC (HMCKernel).
	MethodHMC = "hmc"
)

// Methods lists the names NewProbitChains accepts.
var Methods = []string{MethodGibbs, MethodHMC}

// DispersionScale is the factor by which the start of chain c ≥ 1 of
// NewProbitChains is moved further from the mode than a draw of the
// Laplace approximation.
const DispersionScale = 2

// NewProbitChains starts one chain per generator, of method MethodGibbs or
// MethodHMC, on the probit posterior with data U (N×d, retained), labels v
// and prior N(0, priorVar·I). The mode θ̂ (model.Probit.MAP) and the
// preconditioner are computed once. Chain 0 starts at θ̂, exactly as
// NewGibbs and NewProbitHMC do; chain c ≥ 1 starts at a draw (from
// rngs[c], by distmv.Normal) of
//
//	θ₀ ~ N(θ̂, 2² H⁻¹),  H = −∇² log p(θ̂),
//
// the Laplace approximation N(θ̂, H⁻¹) with its deviations from the mode
// doubled (DispersionScale): overdispersed relative to the
// posterior, so that R̂ across chains detects chains that have not yet
// forgotten their starts. The generators then drive the chains
// (RunChains); each chain's start and draws depend only on its own
// generator. The chains share the (read-only) data; each HMC chain has its
// own step size and a clone of the target. An unknown method is an error.
func NewProbitChains(method string, rngs []*rand.Rand, u *mat.Dense, v []float64, priorVar float64) ([]Runner, error) {
	if method != MethodGibbs && method != MethodHMC {
		return nil, fmt.Errorf("unknown sampler %q (want %s or %s)", method, MethodGibbs, MethodHMC)
	}
	if len(rngs) == 0 {
		return nil, fmt.Errorf("%s: no chains to start", method)
	}
	p, err := model.NewProbit(u, v, priorVar)
	if err != nil {
		return nil, err
	}
	mode, err := p.MAP(nil)
	if err != nil {
		return nil, fmt.Errorf("%s: starting point: %w", method, err)
	}
	var negHess *mat.SymDense
	if method == MethodHMC || len(rngs) > 1 {
		negHess = p.NegHessian(mode)
	}
	starts := make([][]float64, len(rngs))
	if len(rngs) > 1 {
		// N(θ̂, 4H⁻¹) has precision H/4.
		var prec mat.SymDense
		prec.ScaleSym(1/float64(DispersionScale*DispersionScale), negHess)
		for c := 1; c < len(rngs); c++ {
			laplace, ok := distmv.NewNormalPrecision(mode, &prec, rngs[c])
			if !ok {
				return nil, fmt.Errorf("%s: the negative Hessian at the mode is not positive definite: cannot disperse the starts of %d chains", method, len(rngs))
			}
			starts[c] = laplace.Rand(nil)
		}
	}
	chains := make([]Runner, len(rngs))
	switch method {
	case MethodGibbs:
		k, err := NewGibbsKernel(p)
		if err != nil {
			return nil, err
		}
		for c := range chains {
			g := &Gibbs{k: k, s: k.Init(mode), theta0: mode}
			if starts[c] != nil {
				g.Start(starts[c])
			}
			chains[c] = g
		}
	case MethodHMC:
		k, err := NewHMCKernel(p, mode, negHess)
		if err != nil {
			return nil, err
		}
		for c := range chains {
			kc := k
			if c > 0 {
				kc = k.WithTarget(p.Clone())
			}
			if chains[c], err = newHMCChain(kc, starts[c]); err != nil {
				return nil, fmt.Errorf("chain %d: %w", c+1, err)
			}
		}
	}
	return chains, nil
}
