package model

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

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

// NegHessians sets row s of dst to the packed upper triangle of
// −∇² log p(θ_s, Z) = Σ_n w_sn u_n u_nᵀ + σ⁻² I (Curved), w_sn the
// curvature of −log Φ at the signed margin s_n θ_sᵀu_n (NegHessian). In
// matrix form dst = W Q + σ⁻² 1 vech(I)ᵀ with W = [w_sn] (S×N) and row n
// of Q the packed u_n u_nᵀ: the margins and W are formed tile by tile as in
// the gradient, and each tile adds W_blk Q_blk. It panics if theta is not
// S×d or dst is not S×d(d+1)/2.
func (p *Probit) NegHessians(dst, theta *mat.Dense) {
	s := p.checkTheta(theta)
	n, d := p.u.Dims()
	pk := d * (d + 1) / 2
	if r, c := dst.Dims(); r != s || c != pk {
		panic(mat.ErrShape)
	}
	out := dst.RawMatrix()
	zeroGeneral(out)
	th, u := theta.RawMatrix(), p.u.RawMatrix()
	nb := min(n, max(minBlockRows, blockElems/s))
	sb := min(s, max(1, blockElems/nb))
	p.marg = grow(p.marg, sb*nb)
	p.quad = grow(p.quad, nb*pk)
	for i0 := 0; i0 < n; i0 += nb {
		nr := min(nb, n-i0)
		ublk := blas64.General{Rows: nr, Cols: d, Stride: u.Stride, Data: u.Data[i0*u.Stride:]}
		q := blas64.General{Rows: nr, Cols: pk, Stride: pk, Data: p.quad[:nr*pk]}
		for r := range nr {
			row := ublk.Data[r*ublk.Stride : r*ublk.Stride+d]
			dq := q.Data[r*pk : (r+1)*pk]
			k := 0
			for i, ui := range row {
				for _, uj := range row[i:] {
					dq[k] = ui * uj
					k++
				}
			}
		}
		sg := p.sign[i0 : i0+nr]
		if d <= rowsMaxDim {
			// Small d: each sample row's margins and weights are summed
			// into its packed Hessian directly (the product W_blk Q_blk
			// has an inner dimension of d(d+1)/2, costly as calls).
			w := p.marg[:nr]
			for r := range s {
				t := th.Data[r*th.Stride : r*th.Stride+d]
				row := out.Data[r*out.Stride : r*out.Stride+pk]
				for n := range nr {
					w[n] = sg[n] * dotRow(t, ublk.Data[n*ublk.Stride:n*ublk.Stride+d])
				}
				p.curvRow(w)
				for n, wn := range w {
					for k, x := range q.Data[n*pk : (n+1)*pk] {
						row[k] += wn * x
					}
				}
			}
			continue
		}
		for s0 := 0; s0 < s; s0 += sb {
			sr := min(sb, s-s0)
			tb := blas64.General{Rows: sr, Cols: d, Stride: th.Stride, Data: th.Data[s0*th.Stride:]}
			m := blas64.General{Rows: sr, Cols: nr, Stride: nr, Data: p.marg[:sr*nr]}
			gemm(blas.Trans, 1, tb, ublk, 0, m)
			for r := range sr {
				mr := m.Data[r*nr : (r+1)*nr]
				for j, mv := range mr {
					mr[j] = sg[j] * mv
				}
				p.curvRow(mr)
			}
			ob := blas64.General{Rows: sr, Cols: pk, Stride: out.Stride, Data: out.Data[s0*out.Stride:]}
			gemm(blas.NoTrans, 1, m, q, 1, ob)
		}
	}
	for r := range s {
		row := out.Data[r*out.Stride:]
		for i := range d {
			row[PackedIndex(d, i, i)] += 1 / p.priorVar
		}
	}
}

// curvRow replaces each signed margin x_j of row by w(x_j) = −d²/dx² log Φ(x)
// = λ(x)(x + λ(x)), exactly as invMillsCurv computes it: λ from the row
// kernel (invMillsRow with unit signs and scale gives λ(x_j) itself), the
// left tail through invMillsCurv.
func (p *Probit) curvRow(row []float64) {
	n := len(row)
	p.lam = grow(p.lam, n)
	if len(p.ones) < n {
		p.ones = make([]float64, n)
		for i := range p.ones {
			p.ones[i] = 1
		}
	}
	lam := p.lam[:n]
	copy(lam, row)
	invMillsRow(lam, p.ones[:n], 1)
	for j, x := range row {
		if x > tailSwitch {
			row[j] = lam[j] * (x + lam[j])
			continue
		}
		_, row[j] = invMillsCurv(x)
	}
}
