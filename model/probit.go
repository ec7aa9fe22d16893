package model

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// blockElems bounds the margin tile held in scratch: the data are processed
// in blocks of B = min(N, max(minBlockRows, blockElems/S)) rows and the
// samples in tiles of max(1, blockElems/B) rows, so the scratch stays at
// ~8 MiB whatever S and N are (plus, at d = 5 with S ≥ 4, a tile's data
// by columns: 5·B values, at most 5·blockElems/4, 10 MiB).
const (
	blockElems   = 1 << 20
	minBlockRows = 256
)

// Probit is the Bayesian probit regression target of Sec. VI-B,
//
//	p(v_n = 1 | θ, u_n) = Φ(θᵀu_n)             (eq: probit model)
//	p(θ) = N(0, σ² I),
//
// with log-joint, up to constants,
//
//	log p(θ, Z) = −‖θ‖²/(2σ²) + Σ_n log Φ(s_n θᵀu_n),  s_n = 2v_n − 1.
//
// A subposterior p(θ)^{1/K} p(Z_k|θ) (eq: subposterior) is the probit target
// of shard Z_k with prior variance Kσ²: NewProbit(U_k, v_k, K*σ²)
// (docs/MATH.md note 6).
//
// Probit implements Minibatcher. It caches scratch space between calls, so a
// Probit is not safe for concurrent use; Clone gives a copy that shares the
// (read-only) data and has its own scratch, one per goroutine.
type Probit struct {
	u        *mat.Dense // N×d covariates, rows u_n (not copied)
	v        []float64  // labels in {0, 1}
	sign     []float64  // s_n = 2v_n − 1
	priorVar float64

	// Scratch, grown on demand and reused.
	marg []float64 // S×B margin / weight block
	sums []float64 // running sums of log Φ of a tile's sample rows (fusedTile)
	cols []float64 // a d = 5 data tile by columns, 5×B (rowTile)
	quad []float64 // B×d(d+1)/2 packed u_n u_nᵀ (NegHessians)
	lam  []float64 // one row of λ values (curvRow)
	ones []float64 // 1s, the signs of already signed margins (curvRow)
	ubat []float64 // gathered minibatch rows, N_b×d
	sbat []float64 // gathered minibatch signs
}

// NewProbit returns the probit target with data U (N×d, rows u_n), labels
// v (v_n ∈ {0, 1}) and prior N(0, priorVar·I). U is retained, not copied, and
// must not be modified afterwards. It returns an error if the sizes
// disagree, a label is not 0 or 1, an entry of U is NaN or ±Inf, or priorVar
// is not a positive finite number.
func NewProbit(u *mat.Dense, v []float64, priorVar float64) (*Probit, error) {
	if u == nil || u.IsEmpty() {
		return nil, errors.New("probit: empty covariate matrix U")
	}
	n, _ := u.Dims()
	if len(v) != n {
		return nil, fmt.Errorf("probit: %d labels for %d rows of U", len(v), n)
	}
	if !(priorVar > 0) || math.IsInf(priorVar, 1) {
		return nil, fmt.Errorf("probit: prior variance %v is not positive and finite", priorVar)
	}
	for i := 0; i < n; i++ {
		for j, x := range u.RawRowView(i) {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("probit: U[%d,%d] = %v is not finite", i, j, x)
			}
		}
	}
	p := &Probit{
		u:        u,
		v:        make([]float64, n),
		sign:     make([]float64, n),
		priorVar: priorVar,
	}
	for i, vi := range v {
		switch vi {
		case 0:
			p.sign[i] = -1
		case 1:
			p.sign[i] = 1
		default:
			return nil, fmt.Errorf("probit: label v[%d] = %v is not 0 or 1", i, vi)
		}
		p.v[i] = vi
	}
	return p, nil
}

// Clone returns a Probit sharing p's data with fresh scratch space, for use
// in another goroutine.
func (p *Probit) Clone() *Probit {
	return &Probit{u: p.u, v: p.v, sign: p.sign, priorVar: p.priorVar}
}

// U returns the N×d covariate matrix. It must not be modified.
func (p *Probit) U() *mat.Dense { return p.u }

// V returns the labels v_n ∈ {0, 1}. The slice must not be modified.
func (p *Probit) V() []float64 { return p.v }

// Signs returns s_n = 2v_n − 1 ∈ {−1, +1}. The slice must not be modified.
func (p *Probit) Signs() []float64 { return p.sign }

// PriorVar returns the prior variance σ² of p(θ) = N(0, σ² I).
func (p *Probit) PriorVar() float64 { return p.priorVar }

// NumData returns N, the number of data points.
func (p *Probit) NumData() int { r, _ := p.u.Dims(); return r }

// Dim returns d, the dimension of θ.
func (p *Probit) Dim() int { _, c := p.u.Dims(); return c }

// LogJoint sets dst[s] = −‖θ_s‖²/(2σ²) + Σ_n log Φ(s_n θ_sᵀu_n) for each row
// θ_s of theta (constants dropped). The margins are computed blockwise as
// M = Θ Uᵀ. It panics if theta is not S×d or len(dst) != S.
func (p *Probit) LogJoint(dst []float64, theta *mat.Dense) {
	sr := p.checkTheta(theta)
	if len(dst) != sr {
		panic(mat.ErrShape)
	}
	for i := range dst {
		dst[i] = 0
	}
	p.dataTerm(dst, nil, theta.RawMatrix(), p.u.RawMatrix(), p.sign, 1)
	for i := range dst {
		th := theta.RawRowView(i)
		dst[i] -= floats.Dot(th, th) / (2 * p.priorVar)
	}
}

// GradLogJoint sets row s of grad to
//
//	∇ log p(θ_s, Z) = −θ_s/σ² + Σ_n s_n λ(s_n θ_sᵀu_n) u_n,
//
// with λ(x) = φ(x)/Φ(x) (eq: gradient theta prior probit, eq: gradient theta
// posterior probit, written through the inverse Mills ratio: for v_n = 1 the
// per-example weight is φ(m)/Φ(m), for v_n = 0 it is −φ(m)/Φ(−m), m = θᵀu_n).
// In matrix form grad = W U − Θ/σ² with W = [s_n λ(s_n M_sn)], M = Θ Uᵀ.
// It panics if theta or grad is not S×d or if they share storage.
func (p *Probit) GradLogJoint(grad, theta *mat.Dense) {
	p.checkTheta(theta)
	p.checkGrad(grad, theta)
	g := grad.RawMatrix()
	zeroGeneral(g)
	p.dataTerm(nil, &g, theta.RawMatrix(), p.u.RawMatrix(), p.sign, 1)
	p.addPriorGrad(grad, theta)
}

// LogJointGrad does LogJoint and GradLogJoint in one pass over the data,
// evaluating the special functions once per margin.
func (p *Probit) LogJointGrad(dst []float64, grad, theta *mat.Dense) {
	sr := p.checkTheta(theta)
	p.checkGrad(grad, theta)
	if len(dst) != sr {
		panic(mat.ErrShape)
	}
	for i := range dst {
		dst[i] = 0
	}
	g := grad.RawMatrix()
	zeroGeneral(g)
	p.dataTerm(dst, &g, theta.RawMatrix(), p.u.RawMatrix(), p.sign, 1)
	for i := range dst {
		th := theta.RawRowView(i)
		dst[i] -= floats.Dot(th, th) / (2 * p.priorVar)
	}
	p.addPriorGrad(grad, theta)
}

// GradLogJointBatch sets row s of grad to the minibatch estimate
//
//	−θ_s/σ² + (N/N_b) Σ_{n∈B} s_n λ(s_n θ_sᵀu_n) u_n,
//
// the bracket of eq: gradient Dk and eq: update SGLD, with B = batch
// (N_b = len(batch); indices may repeat). The batch rows are gathered into
// scratch reused across calls. It panics if theta or grad is not S×d or
// they share storage, the batch is empty or an index is out of range.
func (p *Probit) GradLogJointBatch(grad, theta *mat.Dense, batch []int) {
	p.checkTheta(theta)
	p.checkGrad(grad, theta)
	if len(batch) == 0 {
		panic("probit: empty minibatch")
	}
	n, d := p.u.Dims()
	nb := len(batch)
	p.ubat = grow(p.ubat, nb*d)
	p.sbat = grow(p.sbat, nb)
	raw := p.u.RawMatrix()
	for i, idx := range batch {
		copy(p.ubat[i*d:(i+1)*d], raw.Data[idx*raw.Stride:idx*raw.Stride+d])
		p.sbat[i] = p.sign[idx]
	}
	ub := blas64.General{Rows: nb, Cols: d, Stride: d, Data: p.ubat}
	g := grad.RawMatrix()
	zeroGeneral(g)
	p.dataTerm(nil, &g, theta.RawMatrix(), ub, p.sbat, float64(n)/float64(nb))
	p.addPriorGrad(grad, theta)
}

// dataTerm adds scale·Σ_n log Φ(s_n θ_sᵀu_n) to logj[s] (if logj != nil) and
// scale·Σ_n s_n λ(s_n θ_sᵀu_n) u_n to row s of grad (if grad != nil), for the
// rows u_n of u. The S×N margin matrix M = Θ Uᵀ is formed tile by tile
// (at most blockElems entries at a time, data blocks of ≥ minBlockRows rows),
// and each tile contributes W U_blk to the gradient: two matrix products per
// tile. At d ≤ rowsMaxDim under the pure-Go BLAS a tile is computed by
// sample rows instead (rowTile), and at rowsMaxDim < d ≤ fusedMaxDim under
// package dgemm's product in cache-sized blocks (fusedTile), both with the
// same results.
func (p *Probit) dataTerm(logj []float64, grad *blas64.General, theta, u blas64.General, sign []float64, scale float64) {
	s, n := theta.Rows, u.Rows
	nb := min(n, max(minBlockRows, blockElems/s))
	sb := min(s, max(1, blockElems/nb))
	p.marg = grow(p.marg, sb*nb)
	for s0 := 0; s0 < s; s0 += sb {
		sr := min(sb, s-s0)
		th := blas64.General{Rows: sr, Cols: theta.Cols, Stride: theta.Stride, Data: theta.Data[s0*theta.Stride:]}
		var gr blas64.General
		if grad != nil {
			gr = blas64.General{Rows: sr, Cols: grad.Cols, Stride: grad.Stride, Data: grad.Data[s0*grad.Stride:]}
		}
		for i0 := 0; i0 < n; i0 += nb {
			nr := min(nb, n-i0)
			ublk := blas64.General{Rows: nr, Cols: u.Cols, Stride: u.Stride, Data: u.Data[i0*u.Stride:]}
			sg := sign[i0 : i0+nr]
			if byRows(theta.Cols) {
				var lj []float64
				if logj != nil {
					lj = logj[s0 : s0+sr]
				}
				var g *blas64.General
				if grad != nil {
					g = &gr
				}
				if theta.Cols == 5 && sr >= colsMinRows {
					p.cols = grow(p.cols, 5*nr)
				}
				rowTile(lj, g, th, ublk, sg, scale, p.marg, p.cols)
				continue
			}
			if fuses(sr, nr, theta.Cols, grad != nil) {
				var lj []float64
				if logj != nil {
					lj = logj[s0 : s0+sr]
				}
				var g *blas64.General
				if grad != nil {
					g = &gr
				}
				p.sums = grow(p.sums, sr)
				fusedTile(lj, g, th, ublk, sg, scale, p.marg, p.sums, specialMode(logj != nil, grad != nil))
				continue
			}
			m := blas64.General{Rows: sr, Cols: nr, Stride: nr, Data: p.marg[:sr*nr]}
			gemm(blas.Trans, 1, th, ublk, 0, m)
			if logj != nil && grad != nil {
				// Fused: the special functions once per margin for both terms.
				for r := 0; r < sr; r++ {
					logj[s0+r] += scale * logPhiMillsRow(m.Data[r*nr:(r+1)*nr], sg, scale)
				}
				gemm(blas.NoTrans, 1, m, ublk, 1, gr)
				continue
			}
			if logj != nil {
				for r := 0; r < sr; r++ {
					logj[s0+r] += scale * logPhiRow(m.Data[r*nr:(r+1)*nr], sg)
				}
			}
			if grad != nil {
				for r := 0; r < sr; r++ {
					invMillsRow(m.Data[r*nr:(r+1)*nr], sg, scale)
				}
				gemm(blas.NoTrans, 1, m, ublk, 1, gr)
			}
		}
	}
}

// gemmTile is the largest C tile handed to one BLAS call: gonum's Dgemm
// runs fewer than four 64×64 blocks serially and spawns goroutines (and
// allocates) otherwise.
const gemmTileRows, gemmTileCols = 64, 192

// singleGemm reports whether gemm should issue one BLAS call per product
// instead of tiles: true when gonum's BLAS has been replaced (by
// UseFastBLAS: package dgemm's product or OpenBLAS), which blocks and packs
// large products itself.
func singleGemm() bool {
	_, pureGo := blas64.Implementation().(gonum.Implementation)
	return !pureGo
}

// gemm computes C = α A op(B) + β C (op(B) = B or Bᵀ) as a sequence of
// tiles of C small enough for gonum's serial kernel, so it neither
// allocates nor starts goroutines (callers parallelise over tasks). Each
// entry of C is still one dot product over the full inner dimension, so
// the result does not depend on the tiling. Under another BLAS (singleGemm) it
// is one call.
func gemm(tB blas.Transpose, alpha float64, a, b blas64.General, beta float64, c blas64.General) {
	if singleGemm() {
		blas64.Gemm(blas.NoTrans, tB, alpha, a, b, beta, c)
		return
	}
	k := a.Cols
	for i0 := 0; i0 < c.Rows; i0 += gemmTileRows {
		mi := min(gemmTileRows, c.Rows-i0)
		at := blas64.General{Rows: mi, Cols: k, Stride: a.Stride, Data: a.Data[i0*a.Stride:]}
		for j0 := 0; j0 < c.Cols; j0 += gemmTileCols {
			nj := min(gemmTileCols, c.Cols-j0)
			ct := blas64.General{Rows: mi, Cols: nj, Stride: c.Stride, Data: c.Data[i0*c.Stride+j0:]}
			var bt blas64.General
			if tB == blas.Trans {
				bt = blas64.General{Rows: nj, Cols: k, Stride: b.Stride, Data: b.Data[j0*b.Stride:]}
			} else {
				bt = blas64.General{Rows: k, Cols: nj, Stride: b.Stride, Data: b.Data[j0:]}
			}
			blas64.Gemm(blas.NoTrans, tB, alpha, at, bt, beta, ct)
		}
	}
}

func (p *Probit) addPriorGrad(grad, theta *mat.Dense) {
	s, _ := theta.Dims()
	for i := 0; i < s; i++ {
		floats.AddScaled(grad.RawRowView(i), -1/p.priorVar, theta.RawRowView(i))
	}
}

func (p *Probit) checkTheta(theta *mat.Dense) int {
	s, d := theta.Dims()
	if d != p.Dim() {
		panic(mat.ErrShape)
	}
	return s
}

func (p *Probit) checkGrad(grad, theta *mat.Dense) {
	gs, gd := grad.Dims()
	s, d := theta.Dims()
	if gs != s || gd != d {
		panic(mat.ErrShape)
	}
	if &grad.RawMatrix().Data[0] == &theta.RawMatrix().Data[0] {
		panic("probit: grad aliases theta")
	}
}

func zeroGeneral(g blas64.General) {
	for i := 0; i < g.Rows; i++ {
		row := g.Data[i*g.Stride : i*g.Stride+g.Cols]
		for j := range row {
			row[j] = 0
		}
	}
}

func grow(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}

// MAP returns the posterior mode θ̂ = argmax log p(θ, Z) by damped Newton
// iterations on the strictly concave log-joint, starting from θ = 0:
//
//	Δ = H⁻¹ g,  H = Uᵀ diag(w) U + σ⁻² I,  g = ∇ log p(θ, Z),
//	w_n = λ(z_n)(z_n + λ(z_n)) ∈ (0, 1),  z_n = s_n θᵀu_n,
//
// with H factored by Cholesky and a backtracking (Armijo) line search on
// θ + tΔ. It stops when the Newton decrement gᵀΔ/2, the predicted gain in
// log-density, is below 1e-10 (a scale-free criterion) after one last full
// step, and reports an
// error after 100 iterations. The result is stored in dst, allocated when
// nil. (gonum/optimize is not used: it pulls in a module outside go.sum.)
//
// The paper starts Gibbs at the maximum likelihood estimate (Appendix,
// "Gibbs Sampling from Posterior"); the MLE does not exist for linearly
// separable data (common for small shards), while the MAP under the Gaussian
// prior always does and equals the MLE as σ² → ∞, so we use the MAP.
func (p *Probit) MAP(dst []float64) ([]float64, error) {
	n, d := p.u.Dims()
	if dst == nil {
		dst = make([]float64, d)
	} else if len(dst) != d {
		panic(mat.ErrShape)
	}
	const (
		maxIter   = 100
		decrement = 1e-10
		armijo    = 1e-4
	)
	theta := make([]float64, d)
	trial := make([]float64, d)
	grad := make([]float64, d)
	delta := make([]float64, d)
	marg := mat.NewVecDense(n, nil)
	h := mat.NewSymDense(d, nil)
	var chol mat.Cholesky
	// Blockwise accumulation of Uᵀ diag(w) U from √w-scaled rows.
	b := min(n, blockElems/d+1)
	scaled := make([]float64, b*d)
	raw := p.u.RawMatrix()

	f := func(x []float64) float64 {
		marg.MulVec(p.u, mat.NewVecDense(d, x))
		v := -floats.Dot(x, x) / (2 * p.priorVar)
		for i, m := range marg.RawVector().Data {
			v += LogPhi(p.sign[i] * m)
		}
		return v
	}
	fx := f(theta)
	for iter := 0; iter < maxIter; iter++ {
		// Gradient and Hessian at theta (marg holds its margins).
		m := marg.RawVector().Data
		for i := range grad {
			grad[i] = -theta[i] / p.priorVar
		}
		hs := h.RawSymmetric()
		for i := 0; i < d; i++ {
			for j := i; j < d; j++ {
				hs.Data[i*hs.Stride+j] = 0
			}
			hs.Data[i*hs.Stride+i] = 1 / p.priorVar
		}
		for i0 := 0; i0 < n; i0 += b {
			nr := min(b, n-i0)
			for r := 0; r < nr; r++ {
				i := i0 + r
				lam, w := invMillsCurv(p.sign[i] * m[i])
				row := raw.Data[i*raw.Stride : i*raw.Stride+d]
				floats.AddScaled(grad, p.sign[i]*lam, row)
				floats.ScaleTo(scaled[r*d:(r+1)*d], math.Sqrt(w), row)
			}
			a := blas64.General{Rows: nr, Cols: d, Stride: d, Data: scaled[:nr*d]}
			blas64.Syrk(blas.Trans, 1, a, 1, hs)
		}
		if ok := chol.Factorize(h); !ok {
			return nil, fmt.Errorf("probit: MAP: Hessian not positive definite at iteration %d", iter)
		}
		dv := mat.NewVecDense(d, delta)
		if err := chol.SolveVecTo(dv, mat.NewVecDense(d, grad)); err != nil {
			return nil, fmt.Errorf("probit: MAP: Newton step at iteration %d: %w", iter, err)
		}
		dec := floats.Dot(grad, delta)
		if dec/2 <= decrement {
			// Inside the region of quadratic convergence: take the full
			// step, which squares the (already tiny) decrement.
			floats.AddTo(dst, theta, delta)
			return dst, nil
		}
		t := 1.0
		for {
			floats.AddScaledTo(trial, theta, t, delta)
			ft := f(trial)
			if ft >= fx+armijo*t*dec {
				fx = ft
				break
			}
			t /= 2
			if t < 1e-12 {
				return nil, fmt.Errorf("probit: MAP: line search failed at iteration %d (Newton decrement %g)", iter, dec/2)
			}
		}
		copy(theta, trial)
	}
	return nil, fmt.Errorf("probit: MAP: no convergence in %d Newton iterations", maxIter)
}

// PredictiveProb sets dst[i] to the ensemble predictive probability
//
//	p̂(v = 1 | u_i) = (1/S) Σ_s Φ(θ_sᵀu_i)         (eq: pred dist1)
//
// for the rows θ_s of theta (S×d) and u_i of u (N_t×d), computing the
// margins as one product Θ Uᵀ per block of test rows. dst is allocated when
// nil. It panics if the column counts differ or len(dst) != N_t.
func PredictiveProb(dst []float64, theta, u *mat.Dense) []float64 {
	s, d := theta.Dims()
	nt, du := u.Dims()
	if d != du {
		panic(mat.ErrShape)
	}
	if dst == nil {
		dst = make([]float64, nt)
	} else if len(dst) != nt {
		panic(mat.ErrShape)
	}
	b := min(nt, max(minBlockRows, blockElems/s))
	buf := make([]float64, s*b)
	th, raw := theta.RawMatrix(), u.RawMatrix()
	for i0 := 0; i0 < nt; i0 += b {
		nr := min(b, nt-i0)
		ublk := blas64.General{Rows: nr, Cols: d, Stride: raw.Stride, Data: raw.Data[i0*raw.Stride:]}
		m := blas64.General{Rows: s, Cols: nr, Stride: nr, Data: buf[:s*nr]}
		gemm(blas.Trans, 1, th, ublk, 0, m)
		out := dst[i0 : i0+nr]
		for j := range out {
			out[j] = 0
		}
		for r := 0; r < s; r++ {
			cdfRowAdd(out, m.Data[r*nr:(r+1)*nr])
		}
		floats.Scale(1/float64(s), out)
	}
	return dst
}
