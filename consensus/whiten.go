package consensus

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
)

// coords are the variables L-BFGS moves: a map W(x) of a flat vector x.
type coords interface {
	fromMap(m Map) []float64                 // x of the map m (m must be reachable)
	toMap(dst Map, x []float64)              // dst = W(x)
	pullback(dst []float64, g Map) []float64 // ∇_x appended to dst, from g = ∇_W
	norm(g Map) float64                      // the gradient norm of the problem solved, from ∇_W
	normX(gx []float64) float64              // the same, from ∇_x
}

// raw coordinates: x is W, its matrices flattened in stream order.
type raw struct{}

func (raw) fromMap(m Map) []float64                 { return flattenMap(m) }
func (raw) toMap(dst Map, x []float64)              { unflattenMap(dst, x) }
func (raw) pullback(dst []float64, g Map) []float64 { return appendMap(dst, g) }
func (raw) norm(g Map) float64                      { return frob(g) }
func (raw) normX(gx []float64) float64              { return floats.Norm(gx, 2) }

// whitened coordinates (LBFGS.Whiten): with Y = U Σ Vᵀ the thin SVD of the
// stacked fitted signals (S × streams·m_r) truncated to its rank r, the
// stacked map is W = base + √S B Σ^{-1} Vᵀ, base = W_0 (I − V Vᵀ), and x is
// B (d × r, row-major), followed by the offset b when the map has one.
// Per stream, W_k = base_k + B M_k with M_k = √S Σ^{-1} V_kᵀ (r × m_r), V_k
// the stream's m_r rows of V.
type whitened struct {
	d, r      int
	offset    int          // d when x ends with the offset b, else 0
	base      Map          // nil when the signals span every dimension
	v         []*mat.Dense // V_k, m_r × r
	m         []*mat.Dense // M_k, r × m_r
	scale     []float64    // σ_j/√S: ∇_W V = ∇_B diag(scale)
	unspanned int          // streams·m_r − r
	b, gb, wv *mat.Dense   // d × r scratch
	wk        *mat.Dense   // d × m_r scratch
}

// newWhitened prepares the whitened coordinates of the signals rx around
// the start map w0.
func newWhitened(rx *channel.Received, w0 Map) (*whitened, error) {
	streams, mr, s := rx.Streams(), rx.Mr, rx.S
	cols := streams * mr
	y := mat.NewDense(s, cols, nil)
	for k, yk := range rx.Y {
		y.Slice(0, s, k*mr, (k+1)*mr).(*mat.Dense).Copy(yk)
	}
	var svd mat.SVD
	if !svd.Factorize(y, mat.SVDThin) {
		return nil, errors.New("WVCMC: whitening: SVD of the received signals did not converge")
	}
	sv := svd.Values(nil)
	// Numerical rank, with the tolerance of numpy's matrix_rank.
	r := 0
	for _, x := range sv {
		if x > sv[0]*float64(max(s, cols))*0x1p-52 {
			r++
		}
	}
	if r == 0 {
		return nil, errors.New("WVCMC: whitening: the received signals are all zero")
	}
	var vFull mat.Dense
	svd.VTo(&vFull)
	d := rx.D
	w := &whitened{d: d, r: r, offset: len(w0.Offset), unspanned: cols - r, scale: make([]float64, r),
		b: mat.NewDense(d, r, nil), gb: mat.NewDense(d, r, nil), wv: mat.NewDense(d, r, nil),
		wk: mat.NewDense(d, mr, nil)}
	root := math.Sqrt(float64(s))
	for j := range r {
		w.scale[j] = sv[j] / root
	}
	for k := range streams {
		vk := mat.DenseCopyOf(vFull.Slice(k*mr, (k+1)*mr, 0, r))
		mk := mat.DenseCopyOf(vk.T())
		for j := range r {
			floats.Scale(1/w.scale[j], mk.RawRowView(j))
		}
		w.v = append(w.v, vk)
		w.m = append(w.m, mk)
	}
	if w.unspanned > 0 {
		// base_k = W0_k − (W0 V) V_kᵀ.
		w0v := w.project(w0)
		w.base = Map{W: make([]*mat.Dense, streams)}
		for k, vk := range w.v {
			b := mat.DenseCopyOf(w0.W[k])
			var t mat.Dense
			t.Mul(w0v, vk.T())
			b.Sub(b, &t)
			w.base.W[k] = b
		}
	}
	return w, nil
}

// project returns g V = Σ_k g_k V_k (d × r) in w.wv.
func (w *whitened) project(g Map) *mat.Dense {
	w.wv.Zero()
	wv := w.wv.RawMatrix()
	for k, gk := range g.W {
		gemmAcc(blas.NoTrans, blas.NoTrans, gk.RawMatrix(), w.v[k].RawMatrix(), wv)
	}
	return w.wv
}

// fromMap returns B = (W V) Σ/√S: the B of a map W = base + √S B Σ^{-1} Vᵀ
// (and its offset).
func (w *whitened) fromMap(m Map) []float64 {
	b := mat.DenseCopyOf(w.project(m))
	for i := range w.d {
		floats.Mul(b.RawRowView(i), w.scale)
	}
	return append(b.RawMatrix().Data, m.Offset...)
}

func (w *whitened) toMap(dst Map, x []float64) {
	nb := w.d * w.r
	copy(dst.Offset, x[nb:])
	b := mat.NewDense(w.d, w.r, x[:nb]).RawMatrix()
	for k, mk := range w.m {
		out := dst.W[k]
		if w.base.W != nil {
			out.Copy(w.base.W[k])
		} else {
			out.Zero()
		}
		gemmAcc(blas.NoTrans, blas.NoTrans, b, mk.RawMatrix(), out.RawMatrix())
	}
}

// pullback: ∇_B = Σ_k ∇_{W_k} M_kᵀ.
func (w *whitened) pullback(dst []float64, g Map) []float64 {
	w.gb.Zero()
	gb := w.gb.RawMatrix()
	for k, gk := range g.W {
		gemmAcc(blas.NoTrans, blas.Trans, gk.RawMatrix(), w.m[k].RawMatrix(), gb)
	}
	return append(append(dst, gb.Data...), g.Offset...)
}

// norm is ‖(∇_W V, ∇_b)‖_F, the gradient of L̃ restricted to the maps the
// coordinates reach.
func (w *whitened) norm(g Map) float64 {
	return math.Hypot(mat.Norm(w.project(g), 2), floats.Norm(g.Offset, 2))
}

// normX is ‖(∇_B diag(σ/√S), ∇_b)‖_F = ‖(∇_W V, ∇_b)‖_F.
func (w *whitened) normX(gx []float64) float64 {
	nb := w.d * w.r
	var s float64
	for i, g := range gx[:nb] {
		t := g * w.scale[i%w.r]
		s += t * t
	}
	for _, g := range gx[nb:] {
		s += g * g
	}
	return math.Sqrt(s)
}

func appendMap(dst []float64, m Map) []float64 {
	for _, w := range m.W {
		dst = append(dst, w.RawMatrix().Data...)
	}
	return append(dst, m.Offset...)
}

// gemmAcc adds op(A) op(B) to C (gonum's Dgemm computes each block of C in
// one goroutine, so the sum does not depend on the number of cores).
func gemmAcc(tA, tB blas.Transpose, a, b, c blas64.General) {
	blas64.Gemm(tA, tB, 1, a, b, 1, c)
}
