package channel

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// zfLink simulates one block of one worker physically: it draws the
// channel H and the worker's estimate Ĥ, precodes with Ĥ^†, applies H
// (docs/BEYOND.md eq. (12.4)), reusing its buffers. A complex channel is
// handled through its real representation [[Re, −Im], [Im, Re]]
// (complexRep), acting on the block's real symbols packed as [I; Q].
type zfLink struct {
	mr         int // received real symbols
	rows, cols int // size of the (real representation of the) channel
	cplx       bool
	mc, mtc    int // complex uses: received, transmitted
	imperfect  bool
	h, hhat    *mat.Dense // hhat is h under perfect CSI
	re, im     []float64  // complex draws of H, then of Ĥ (mc×mtc)
	hre, him   []float64
	gram       mat.SymDense
	fac        blas64.Triangular // Cholesky factor U of ĤĤᵀ = UᵀU
	facData    []float64
	t, a, x    *mat.VecDense
	hx         *mat.VecDense
}

func newZFLink(c Config, mr int) *zfLink {
	z := &zfLink{mr: mr, cplx: c.Complex, imperfect: c.CSI.imperfect()}
	if c.Complex {
		z.mc, z.mtc = c.complexDims(mr)
		z.rows, z.cols = 2*z.mc, 2*z.mtc
		n := z.mc * z.mtc
		z.re, z.im, z.hre, z.him = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	} else {
		z.rows, z.cols = mr, mr+c.ExtraTx
	}
	z.h = mat.NewDense(z.rows, z.cols, nil)
	z.hhat = z.h
	if z.imperfect {
		z.hhat = mat.NewDense(z.rows, z.cols, nil)
	}
	z.t = mat.NewVecDense(z.rows, nil)
	z.a = mat.NewVecDense(z.rows, nil)
	z.x = mat.NewVecDense(z.cols, nil)
	z.hx = mat.NewVecDense(z.rows, nil)
	return z
}

// maxRedraws bounds the draws of one block's channel: a singular ĤĤᵀ has
// probability zero, so maxRedraws singular draws in a row mean that the
// channel law is degenerate in floating point (the scattered part of Ĥ
// vanishing next to the Rician line of sight), not bad luck.
const maxRedraws = 100

// errSingular reports maxRedraws singular draws of ĤĤᵀ in a row.
var errSingular = fmt.Errorf("channel: %d draws of the channel estimate Ĥ in a row have ĤĤᵀ singular in floating point, so it cannot be zero-forced: the scattered part of Ĥ vanishes next to its Rician line of sight (a K-factor too large, or pilots so weak that the MMSE estimate is the line of sight alone)", maxRedraws)

// draw draws H and Ĥ for worker link w until ĤĤᵀ is positive definite (a
// singular draw has probability zero), and factorises ĤĤᵀ; it gives up
// with errSingular after maxRedraws draws.
func (z *zfLink) draw(rng *rand.Rand, w workerLink) error {
	for range maxRedraws {
		if z.cplx {
			z.drawComplex(rng, w)
		} else {
			z.drawReal(rng, w)
		}
		if z.factor() {
			return nil
		}
	}
	return errSingular
}

// drawReal draws H with i.i.d. N(0,1) entries and, under imperfect CSI,
// Ĥ = c (H + E), E i.i.d. N(0, σ²).
func (z *zfLink) drawReal(rng *rand.Rand, w workerLink) {
	raw := z.h.RawMatrix().Data
	for i := range raw {
		raw[i] = rng.NormFloat64()
	}
	if !z.imperfect {
		return
	}
	sd := math.Sqrt(w.lsVar)
	hat := z.hhat.RawMatrix().Data
	for i, v := range raw {
		hat[i] = w.shrink * (v + sd*rng.NormFloat64())
	}
}

// drawComplex draws H = μ 1 1ᵀ + √v W, W i.i.d. CN(0,1), and under
// imperfect CSI Ĥ = μ + c (H + E − μ), E i.i.d. CN(0, σ²).
func (z *zfLink) drawComplex(rng *rand.Rand, w workerLink) {
	sv := math.Sqrt(w.scat / 2)
	for i := range z.re {
		z.re[i] = w.mean + sv*rng.NormFloat64()
		z.im[i] = sv * rng.NormFloat64()
	}
	complexRep(z.h, z.re, z.im, z.mc, z.mtc)
	if !z.imperfect {
		return
	}
	se := math.Sqrt(w.lsVar / 2)
	for i := range z.re {
		z.hre[i] = w.mean + w.shrink*(z.re[i]+se*rng.NormFloat64()-w.mean)
		z.him[i] = w.shrink * (z.im[i] + se*rng.NormFloat64())
	}
	complexRep(z.hhat, z.hre, z.him, z.mc, z.mtc)
}

// factor factorises ĤĤᵀ = UᵀU into z.fac, reporting whether it is positive
// definite. It is mat.Cholesky.Factorize's arithmetic (lapack64.Potrf on
// the upper triangle) without the condition estimate Factorize adds, which
// took most of a small factorisation's time (m_r = 10: 0.9 of 1.0 s a
// probit-snr task) and was never used.
func (z *zfLink) factor() bool {
	z.gram.SymOuterK(1, z.hhat)
	g := z.gram.RawSymmetric()
	if len(z.facData) < len(g.Data) {
		z.facData = make([]float64, len(g.Data))
	}
	copy(z.facData, g.Data)
	var ok bool
	z.fac, ok = lapack64.Potrf(blas64.Symmetric{N: g.N, Stride: g.Stride, Uplo: blas.Upper, Data: z.facData[:len(g.Data)]})
	return ok
}

// send draws the block's channel and precodes t (the m_r symbols E_k θ_k)
// as x = Ĥ^† t = Ĥᵀ(ĤĤᵀ)^{-1} t; under truncated inversion a block with
// X = ‖t‖²/(v̂ ‖x‖²) below the cutoff is not sent. Otherwise H x is added
// to dst. It returns the transmit energy ‖x‖²/β (the worker's channel is
// √β H), the residual interference power per symbol ‖H x − t‖²/m_r
// (computed only under imperfect CSI) and whether the block was sent, or
// the error of draw.
func (z *zfLink) send(rng *rand.Rand, dst, t []float64, w workerLink) (energy, resid float64, sent bool, err error) {
	if err := z.draw(rng, w); err != nil {
		return 0, 0, false, err
	}
	energy, resid, sent = z.apply(dst, t, w)
	return energy, resid, sent, nil
}

// apply is send on the channel drawn last.
func (z *zfLink) apply(dst, t []float64, w workerLink) (energy, resid float64, sent bool) {
	tv := z.t.RawVector().Data
	copy(tv, t)
	for i := len(t); i < len(tv); i++ {
		tv[i] = 0 // the I/Q pad of an odd m_r
	}
	// a = (ĤĤᵀ)⁻¹ t by the factor (mat.Cholesky.SolveVecTo's Potrs). An
	// ill-conditioned Ĥ needs a large x: that is the physics of
	// zero-forcing, so no condition number is checked.
	z.a.CopyVec(z.t)
	av := z.a.RawVector()
	lapack64.Potrs(z.fac, blas64.General{Rows: av.N, Cols: 1, Stride: av.Inc, Data: av.Data})
	z.x.MulVec(z.hhat.T(), z.a)
	e := mat.Dot(z.x, z.x)
	if w.cutoff > 0 && mat.Dot(z.t, z.t) < w.cutoff*w.vHat*e {
		return 0, 0, false
	}
	z.hx.MulVec(z.h, z.x)
	hx := z.hx.RawVector().Data
	for i := range z.mr {
		dst[i] += hx[i]
	}
	if z.imperfect {
		for i := range z.mr {
			r := hx[i] - t[i]
			resid += r * r
		}
		resid /= float64(z.mr)
	}
	return e / w.gain, resid, true
}

// equivLink draws a block of Rayleigh fading with zero-forcing on an
// estimate from its exact law given the symbols t, without drawing H
// (docs/BEYOND.md eq. (12.7)): X = ‖t‖²/(v̂ ‖x‖²) from costLaw, and
// H x = a t + r with r | X ~ N(0, s² ‖x‖² I) (CN on the complex channel).
type equivLink struct {
	rng       *rand.Rand
	cost      distuv.Gamma
	cplx      bool
	imperfect bool
}

func newEquivLink(c Config, rng *rand.Rand) *equivLink {
	alpha, scale := c.costLaw()
	return &equivLink{rng: rng, cost: distuv.Gamma{Alpha: alpha, Beta: 1 / scale, Src: rng}, cplx: c.Complex, imperfect: c.CSI.imperfect()}
}

// send is zfLink.send in law, drawing from the generator given to
// newEquivLink.
func (q *equivLink) send(dst, t []float64, w workerLink) (energy, resid float64, sent bool) {
	x := q.cost.Rand()
	var n2 float64
	for _, v := range t {
		n2 += v * v
	}
	e := n2 / (w.vHat * x)
	if w.cutoff > 0 && x < w.cutoff {
		return 0, 0, false
	}
	if !q.imperfect {
		for i, v := range t {
			dst[i] += v
		}
		return e / w.gain, 0, true
	}
	v := w.s2 * e
	if q.cplx {
		v /= 2
	}
	sd := math.Sqrt(v)
	for i, tv := range t {
		r := (w.a-1)*tv + sd*q.rng.NormFloat64()
		dst[i] += tv + r
		resid += r * r
	}
	return e / w.gain, resid / float64(len(t)), true
}
