package sampler

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"wcmc/model"
)

// HMC is Hamiltonian Monte Carlo preconditioned by the Laplace
// approximation. With θ̂ the posterior mode and H = −∇² log p(θ̂, Z) = L Lᵀ,
// it runs HMC with identity mass in whitened coordinates φ = Lᵀ(θ − θ̂),
// where a log-concave posterior with many data points is close to N(0, I).
// There the leapfrog step ε is adapted during burn-in towards an
// acceptance rate of 0.8 (Robbins–Monro on log ε) and then frozen; each
// trajectory has length ≈ 1.5 (a quarter period of the unit Gaussian) with
// ±20% jitter of ε against periodicity.
//
// It is meant for posteriors on which the Albert–Chib Gibbs sampler mixes
// slowly (nearly separable data, such as MNIST 0 vs 1). Each leapfrog step
// costs one gradient of the target. An HMC is not safe for concurrent use.
type HMC struct {
	target model.Fused
	mode   []float64
	l      blas64.Triangular // lower Cholesky factor of H

	eps      float64
	phi, r   []float64 // position (whitened) and momentum
	logp     float64
	gphi     []float64 // ∇_φ log p at phi
	accepted int
	proposed int

	// scratch
	th, g       *mat.Dense // 1×d
	lp          []float64
	phi0, gphi0 []float64
}

// NewHMC starts an HMC chain at the mode of target, preconditioned by
// negHess = −∇² log p at the mode (e.g. model.Probit.NegHessian).
func NewHMC(target model.Fused, mode []float64, negHess mat.Symmetric) (*HMC, error) {
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
	h := &HMC{
		target: target, mode: append([]float64(nil), mode...), l: l.RawTriangular(),
		eps: 0.5, phi: make([]float64, d), r: make([]float64, d), gphi: make([]float64, d),
		th: mat.NewDense(1, d, nil), g: mat.NewDense(1, d, nil), lp: make([]float64, 1),
		phi0: make([]float64, d), gphi0: make([]float64, d),
	}
	h.logp = h.eval(h.phi, h.gphi)
	if math.IsNaN(h.logp) || math.IsInf(h.logp, 0) {
		return nil, fmt.Errorf("hmc: log-density %v at the mode", h.logp)
	}
	return h, nil
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

// eval sets grad = ∇_φ log p = L^{-1} ∇_θ log p at θ = θ̂ + L^{-ᵀ}φ and
// returns log p.
func (h *HMC) eval(phi, grad []float64) float64 {
	th := h.th.RawRowView(0)
	copy(th, phi)
	blas64.Trsv(blas.Trans, h.l, blas64.Vector{N: len(th), Inc: 1, Data: th})
	for i := range th {
		th[i] += h.mode[i]
	}
	h.target.LogJointGrad(h.lp, h.g, h.th)
	copy(grad, h.g.RawRowView(0))
	blas64.Trsv(blas.NoTrans, h.l, blas64.Vector{N: len(grad), Inc: 1, Data: grad})
	return h.lp[0]
}

// transition makes one HMC move and returns its acceptance probability.
func (h *HMC) transition(rng *rand.Rand) float64 {
	d := len(h.phi)
	eps := h.eps * (0.8 + 0.4*rng.Float64())
	steps := max(1, min(100, int(math.Ceil(1.5/eps))))
	copy(h.phi0, h.phi)
	copy(h.gphi0, h.gphi)
	var k0 float64
	for i := range d {
		h.r[i] = rng.NormFloat64()
		k0 += h.r[i] * h.r[i] / 2
	}
	lp := h.logp
	for s := 0; s < steps; s++ {
		for i := range d {
			h.r[i] += eps / 2 * h.gphi[i]
			h.phi[i] += eps * h.r[i]
		}
		lp = h.eval(h.phi, h.gphi)
		if math.IsNaN(lp) || math.IsInf(lp, 0) {
			break
		}
		for i := range d {
			h.r[i] += eps / 2 * h.gphi[i]
		}
	}
	var k1 float64
	for _, ri := range h.r {
		k1 += ri * ri / 2
	}
	logA := lp - k1 - h.logp + k0
	a := 1.0
	if !(logA >= 0) {
		a = math.Exp(logA) // 0 for NaN or −Inf
		if math.IsNaN(a) {
			a = 0
		}
	}
	h.proposed++
	if rng.Float64() < a {
		h.logp = lp
		h.accepted++
		return a
	}
	copy(h.phi, h.phi0)
	copy(h.gphi, h.gphi0)
	return a
}

// Sample runs burnin transitions that adapt the step size, then stores the
// θ after each of the next S transitions in the S rows of dst.
func (h *HMC) Sample(rng *rand.Rand, dst *mat.Dense, burnin int) error {
	if burnin < 0 {
		return fmt.Errorf("hmc: negative burn-in %d", burnin)
	}
	s, d := dst.Dims()
	if d != len(h.phi) {
		panic(mat.ErrShape)
	}
	const target = 0.8
	for t := 0; t < burnin; t++ {
		a := h.transition(rng)
		h.eps *= math.Exp((a - target) / math.Sqrt(float64(t)+10))
	}
	h.accepted, h.proposed = 0, 0
	for i := 0; i < s; i++ {
		h.transition(rng)
		row := dst.RawRowView(i)
		copy(row, h.phi)
		blas64.Trsv(blas.Trans, h.l, blas64.Vector{N: d, Inc: 1, Data: row})
		for j := range row {
			row[j] += h.mode[j]
		}
	}
	return nil
}

// AcceptRate is the fraction of accepted proposals since the last burn-in.
func (h *HMC) AcceptRate() float64 {
	if h.proposed == 0 {
		return math.NaN()
	}
	return float64(h.accepted) / float64(h.proposed)
}

// StepSize is the current leapfrog step ε (in whitened coordinates).
func (h *HMC) StepSize() float64 { return h.eps }
