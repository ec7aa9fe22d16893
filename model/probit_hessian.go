package model

import "gonum.org/v1/gonum/mat"

// NegHessian returns −∇² log p(θ, Z) = Uᵀ diag(w) U + σ⁻² I at θ, with
// w_n = λ(z_n)(z_n + λ(z_n)) ∈ (0, 1) the curvature of −log Φ at the signed
// margin z_n = s_n θᵀu_n. It is positive definite (the log-joint is
// strictly concave): at the mode it is the precision of the Laplace
// approximation.
func (p *Probit) NegHessian(theta []float64) *mat.SymDense {
	n, d := p.u.Dims()
	if len(theta) != d {
		panic(mat.ErrShape)
	}
	th := mat.NewVecDense(d, theta)
	h := mat.NewSymDense(d, nil)
	for i := 0; i < n; i++ {
		row := mat.NewVecDense(d, p.u.RawRowView(i))
		_, w := invMillsCurv(p.sign[i] * mat.Dot(row, th))
		h.SymRankOne(h, w, row)
	}
	for i := 0; i < d; i++ {
		h.SetSym(i, i, h.At(i, i)+1/p.priorVar)
	}
	return h
}
