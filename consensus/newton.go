package consensus

import (
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/model"
)

// hessian evaluates the exact Hessian of L̃ in the whitened coordinates B
// of whitened (x = B, d × r, row-major), for the Newton method.
//
// Data term. With θ_s = θ_s⁰ + B z_s, z_s = Σ_k M_k y_k^{(s)} (= √S u_s),
//
//	∂²/∂B_il ∂B_jm [−(1/S) Σ_s log p(θ_s)] = (1/S) Σ_s H_s[i,j] z_s[l] z_s[m],
//
// H_s = −∇² log p(θ_s, Z): one product (1/S) Aᵀ Z₂ of the packed H_s (rows
// of A, model.Curved) with the packed z_s z_sᵀ (rows of Z₂).
//
// Entropy terms, per stream (W = W_k, E = E_k, M = M_k, dW = dB M): with
// P = (W E)^{-1}, G = M E P (r×d), Q = (W Wᵀ)^{-1}, F = M Wᵀ Q (r×d),
// Ŝ = F W Mᵀ and T = M Mᵀ (r×r), the second differentials
//
//	d²[−log|det(W E)|] = tr(P dW E P dW E)
//	d²[−½ log det(W Wᵀ)] = tr(Q dW Wᵀ Q dW Wᵀ) + tr(Q W dWᵀ Q dW Wᵀ) − tr(Q dW dWᵀ)
//
// give the entries
//
//	∂²/∂B_ib ∂B_je = a G[b,j] G[e,i] + b (F[b,j] F[e,i] + Q[i,j] (Ŝ[b,e] − T[b,e])),
//
// a and b the weights of the two log-determinants.
//
// Offset. A map with an offset b (θ_s = θ_s⁰ + B z_s + b) has d more
// coordinates, after B: the data term extends z_s by a constant 1,
// z̃_s = (z_s, 1), so that its blocks are (1/S) Σ_s H_s[i,j] z̃_s[l] z̃_s[m]
// with index r for b (one product over the packed z̃_s z̃_sᵀ as before), and
// the entropy terms do not depend on b.
type hessian struct {
	v      *Variational
	w      *whitened
	target model.Curved
	n      int        // d·r, plus d with an offset
	rr     int        // r, plus 1 with an offset
	zq     *mat.Dense // S × rr(rr+1)/2: packed z̃_s z̃_sᵀ
	a      *mat.Dense // S × d(d+1)/2: packed H_s
	g      mat.Dense  // d(d+1)/2 × rr(rr+1)/2
	me, mm []*mat.Dense
	full   []float64 // n × n
}

func newHessian(v *Variational, w *whitened, target model.Curved) *hessian {
	d, r, s := w.d, w.r, v.rx.S
	rr := r
	if w.offset > 0 {
		rr++
	}
	n := d*r + w.offset
	h := &hessian{v: v, w: w, target: target, n: n, rr: rr,
		zq:   mat.NewDense(s, rr*(rr+1)/2, nil),
		a:    mat.NewDense(s, d*(d+1)/2, nil),
		full: make([]float64, n*n)}
	z := mat.NewDense(s, r, nil)
	var t mat.Dense
	for k, mk := range w.m {
		t.Mul(v.rx.Y[k], mk.T())
		z.Add(z, &t)
		var me, mm mat.Dense
		me.Mul(mk, v.enc[k])
		mm.Mul(mk, mk.T())
		h.me = append(h.me, &me)
		h.mm = append(h.mm, &mm)
	}
	zt := make([]float64, rr)
	for i := range s {
		dst := z.RawRowView(i)
		copy(zt, dst)
		if rr > r {
			zt[r] = 1
		}
		dst = h.zq.RawRowView(i)
		for l := range rr {
			for m := l; m < rr; m++ {
				dst[model.PackedIndex(rr, l, m)] = zt[l] * zt[m]
			}
		}
	}
	return h
}

// coord is the coordinate of B_il (l < r) or, for l = r, of b_i.
func (h *hessian) coord(i, l int) int {
	if l < h.w.r {
		return i*h.w.r + l
	}
	return h.w.d*h.w.r + i
}

// eval sets dst to the Hessian of L̃ with respect to B at the map m.
func (h *hessian) eval(dst *mat.SymDense, m Map) error {
	v, d, rr, n := h.v, h.w.d, h.rr, h.n
	v.apply(m)
	h.target.NegHessians(h.a, v.theta)
	h.g.Mul(h.a.T(), h.zq)
	g := h.g.RawMatrix()
	inv := 1 / float64(v.rx.S)
	for i := range d {
		for l := range rr {
			row := h.full[h.coord(i, l)*n:]
			for j := range d {
				gr := g.Data[model.PackedIndex(d, min(i, j), max(i, j))*g.Stride:]
				for mm := range rr {
					row[h.coord(j, mm)] = inv * gr[model.PackedIndex(rr, min(l, mm), max(l, mm))]
				}
			}
		}
	}
	for k, w := range m.W {
		if err := h.addEntropy(k, w); err != nil {
			return err
		}
	}
	raw := dst.RawSymmetric()
	for i := range n {
		copy(raw.Data[i*raw.Stride+i:i*raw.Stride+n], h.full[i*n+i:(i+1)*n])
	}
	return nil
}

// addEntropy adds stream k's entropy terms at W_k = w to h.full.
func (h *hessian) addEntropy(k int, w *mat.Dense) error {
	v, d, r, n := h.v, h.w.d, h.w.r, h.n
	var we, p mat.Dense
	we.Mul(w, v.enc[k])
	if err := p.Inverse(&we); err != nil {
		return ErrSingular
	}
	var gk mat.Dense
	gk.Mul(h.me[k], &p)
	var ww mat.SymDense
	ww.SymOuterK(1, w)
	var chol mat.Cholesky
	if !chol.Factorize(&ww) {
		return ErrSingular
	}
	var q mat.SymDense
	if err := chol.InverseTo(&q); err != nil {
		return ErrSingular
	}
	var nk, f, sh mat.Dense
	nk.Mul(h.w.m[k], w.T())
	f.Mul(&nk, &q)
	sh.Mul(&f, nk.T())
	G, F, S, T := gk.RawMatrix(), f.RawMatrix(), sh.RawMatrix(), h.mm[k].RawMatrix()
	a, b := v.a, v.b
	for i := range d {
		for bi := range r {
			row := h.full[(i*r+bi)*n:]
			gb, fb := G.Data[bi*G.Stride:], F.Data[bi*F.Stride:]
			sb, tb := S.Data[bi*S.Stride:], T.Data[bi*T.Stride:]
			for j := range d {
				qij := q.At(i, j)
				for e := range r {
					ge, fe := G.Data[e*G.Stride+i], F.Data[e*F.Stride+i]
					row[j*r+e] += a*gb[j]*ge + b*(fb[j]*fe+qij*(sb[e]-tb[e]))
				}
			}
		}
	}
	return nil
}
