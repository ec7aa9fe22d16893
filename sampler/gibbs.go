package sampler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/model"
)

// smallDim is the dimension up to which Sweep uses plain loops rather than
// gonum's assembly dot/axpy kernels (measured faster for d = 5).
const smallDim = 8

// DefaultBurnIn is the paper's Gibbs burn-in: the first 100 samples are
// discarded (Appendix, "Gibbs Sampling from Posterior").
const DefaultBurnIn = 100

// GibbsKernel is the Albert–Chib data-augmentation Gibbs kernel for the
// probit posterior p(θ | Z) ∝ N(θ; 0, σ² I) Π_n Φ(s_n θᵀu_n)
// (eq: equivalent model). Each step (a sweep) draws
//
//	κ_n | θ ~ N(θᵀu_n, 1) truncated to κ_n > 0 (v_n = 1) or κ_n ≤ 0 (v_n = 0)
//	                                                  (eq: sample latent variable)
//	θ | κ   ~ N(C Uᵀκ, C),  C = (UᵀU + σ⁻² I)⁻¹       (eq: sample posterior)
//
// The θ-draw uses the Cholesky factor of the precision, computed once in
// NewGibbsKernel: P = C⁻¹ = RᵀR with R upper triangular. Then
//
//	θ = R⁻¹(R⁻ᵀ Uᵀκ + z),  z ~ N(0, I),
//
// has mean R⁻¹R⁻ᵀUᵀκ = C Uᵀκ and covariance R⁻¹R⁻ᵀ = C, at the cost of two
// triangular solves and without ever forming C.
//
// A GibbsKernel is read-only once built: chains with their own states may
// share it and step concurrently.
type GibbsKernel struct {
	u    blas64.General // N×d covariates (not copied)
	u32  []float32      // U rounded to float32, N×d row-major (NewGibbsKernelFloat32), or nil
	sign []float64      // s_n = 2v_n − 1
	r    []float64      // upper Cholesky factor R of the precision P, d×d row-major
	rt   []float64      // Rᵀ, d×d row-major
}

// GibbsState is the state of a Gibbs chain: θ and the latent κ, with the
// sweep's working space.
type GibbsState struct {
	theta  []float64      // current θ
	kappa  []float64      // current κ
	b      []float64      // Uᵀκ accumulator
	latent *latentScratch // DrawLatent's working space
}

// Position returns the current θ.
func (s *GibbsState) Position() []float64 { return s.theta }

// NewGibbsKernel prepares the Gibbs kernel for the probit posterior p (its
// data U are retained, not copied): it factors the precision UᵀU + σ⁻² I.
// It returns an error if the precision is not positive definite.
func NewGibbsKernel(p *model.Probit) (*GibbsKernel, error) {
	u := p.U()
	k := &GibbsKernel{u: u.RawMatrix(), sign: p.Signs()}
	if err := k.factor(u, p.PriorVar()); err != nil {
		return nil, err
	}
	return k, nil
}

// NewGibbsKernelFloat32 is NewGibbsKernel for large data: the sweeps read
// a float32 copy of U (N·d·4 bytes more memory, half the bytes of U read
// per sweep) and widen it to float64 as they go, with θ, the margins, Uᵀκ
// and the θ-draw in float64. The chain it drives is the Gibbs sampler of
// the posterior with the data rounded to float32, Ũ = fl32(U) (its
// precision ŨᵀŨ + σ⁻² I is factored too), bit for bit the chain of
// NewGibbsKernel on Ũ: a relative change of the data of at most 2⁻²⁴,
// whose effect on the posterior is far below Monte Carlo error, but the
// draws are not those of NewGibbsKernel on U. For d ≤ 8, where a sweep is
// bound by its random draws rather than by the data, it returns
// NewGibbsKernel(p).
func NewGibbsKernelFloat32(p *model.Probit) (*GibbsKernel, error) {
	u := p.U()
	n, d := u.Dims()
	if d <= smallDim {
		return NewGibbsKernel(p)
	}
	rounded := mat.NewDense(n, d, nil)
	rounded.Apply(func(_, _ int, x float64) float64 { return float64(float32(x)) }, u)
	u32 := make([]float32, n*d)
	for i := range n {
		for j, x := range rounded.RawRowView(i) {
			u32[i*d+j] = float32(x)
		}
	}
	k := &GibbsKernel{u: u.RawMatrix(), u32: u32, sign: p.Signs()}
	if err := k.factor(rounded, p.PriorVar()); err != nil {
		return nil, err
	}
	return k, nil
}

// Float32 reports whether the kernel's sweeps read a float32 copy of U
// (NewGibbsKernelFloat32).
func (k *GibbsKernel) Float32() bool { return k.u32 != nil }

// factor sets R and Rᵀ from the Cholesky factorisation of the precision
// UᵀU + σ⁻² I of data u and prior variance priorVar.
func (k *GibbsKernel) factor(u *mat.Dense, priorVar float64) error {
	_, d := u.Dims()
	prec := mat.NewSymDense(d, nil)
	prec.SymOuterK(1, u.T())
	for i := 0; i < d; i++ {
		prec.SetSym(i, i, prec.At(i, i)+1/priorVar)
	}
	var chol mat.Cholesky
	if ok := chol.Factorize(prec); !ok {
		return errors.New("gibbs: precision UᵀU + σ⁻²I is not positive definite")
	}
	var tri mat.TriDense
	chol.UTo(&tri)
	k.r = make([]float64, d*d)
	k.rt = make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			k.r[i*d+j] = tri.At(i, j)
			k.rt[j*d+i] = tri.At(i, j)
		}
	}
	return nil
}

// Dim returns d, the dimension of θ.
func (k *GibbsKernel) Dim() int { return k.u.Cols }

// Init returns a state at θ = theta0 (copied). It panics if
// len(theta0) != d.
func (k *GibbsKernel) Init(theta0 []float64) *GibbsState {
	if len(theta0) != k.u.Cols {
		panic(mat.ErrShape)
	}
	return &GibbsState{
		theta:  append([]float64(nil), theta0...),
		kappa:  make([]float64, len(k.sign)),
		b:      make([]float64, k.u.Cols),
		latent: new(latentScratch),
	}
}

// Step performs one sweep (see Sweep). Every move is accepted; the info
// carries no log density (NaN) and no step size.
func (k *GibbsKernel) Step(rng *rand.Rand, s *GibbsState) Info {
	k.sweep(rng, s)
	return Info{AcceptProb: 1, Accepted: true, LogDensity: math.NaN()}
}

// Gibbs is a Gibbs chain: a GibbsKernel bound to its state, started at the
// posterior mode. A Gibbs value is not safe for concurrent use; distinct
// values share nothing mutable and may run in parallel (see RunChains).
type Gibbs struct {
	k      *GibbsKernel
	s      *GibbsState
	theta0 []float64 // MAP start
}

// NewGibbs prepares a Gibbs sampler for the probit posterior with data U
// (N×d, retained, not copied), labels v_n ∈ {0, 1} and prior N(0, priorVar·I)
// (for a subposterior pass K·σ², docs/MATH.md note 6). It factors the precision
// UᵀU + σ⁻² I once and starts the chain at the posterior mode
// (model.Probit.MAP; the paper's MLE need not exist for separable shards).
// Errors from the data checks of model.NewProbit and from the MAP search are
// returned.
func NewGibbs(u *mat.Dense, v []float64, priorVar float64) (*Gibbs, error) {
	return newGibbs(u, v, priorVar, NewGibbsKernel)
}

// NewGibbsFloat32 is NewGibbs with the kernel of NewGibbsKernelFloat32:
// sweeps that read a float32 copy of U, a chain of the posterior with the
// data rounded to float32 (started at the mode of the posterior with U).
func NewGibbsFloat32(u *mat.Dense, v []float64, priorVar float64) (*Gibbs, error) {
	return newGibbs(u, v, priorVar, NewGibbsKernelFloat32)
}

// newGibbs is NewGibbs with the kernel built by newKernel.
func newGibbs(u *mat.Dense, v []float64, priorVar float64, newKernel func(*model.Probit) (*GibbsKernel, error)) (*Gibbs, error) {
	p, err := model.NewProbit(u, v, priorVar)
	if err != nil {
		return nil, err
	}
	k, err := newKernel(p)
	if err != nil {
		return nil, err
	}
	mode, err := p.MAP(nil)
	if err != nil {
		return nil, fmt.Errorf("gibbs: starting point: %w", err)
	}
	return &Gibbs{k: k, s: k.Init(mode), theta0: mode}, nil
}

// Dim returns d, the dimension of θ.
func (g *Gibbs) Dim() int { return g.k.u.Cols }

// MAP returns the posterior mode the chain started from. It must not be
// modified.
func (g *Gibbs) MAP() []float64 { return g.theta0 }

// Theta returns the current θ. It must not be modified.
func (g *Gibbs) Theta() []float64 { return g.s.theta }

// Position returns the current θ (as Theta).
func (g *Gibbs) Position() []float64 { return g.s.theta }

// Kappa returns the current latent variables κ. It must not be modified.
func (g *Gibbs) Kappa() []float64 { return g.s.kappa }

// Kernel returns the chain's kernel.
func (g *Gibbs) Kernel() *GibbsKernel { return g.k }

// Start sets the current θ to theta0 (nil: back to the MAP). It panics if
// len(theta0) != d.
func (g *Gibbs) Start(theta0 []float64) {
	if theta0 == nil {
		theta0 = g.theta0
	}
	if len(theta0) != g.k.u.Cols {
		panic(mat.ErrShape)
	}
	copy(g.s.theta, theta0)
}

// sweepBlockElems bounds the entries of U in one block of a sweep with
// d > smallDim (16 KiB), so that a block read from memory in the margin
// pass is still in the L1 cache for the accumulation pass.
const sweepBlockElems = 2048

// Sweep performs one Gibbs sweep: κ | θ then θ | κ. It makes one pass over
// the rows of U from memory, in blocks (about 16 KiB of U for d > 8, 1024
// rows for d ≤ 8): for each block, the margins m_n = u_nᵀθ, then the draws
// κ_n ~ N(m_n, 1) truncated by v_n (eq: sample latent variable, see
// DrawLatent), then Uᵀκ += Σ_n κ_n u_n while the block is still in cache;
// then θ | κ (eq: sample posterior). It does not allocate.
func (g *Gibbs) Sweep(rng *rand.Rand) { g.k.sweep(rng, g.s) }

// sweep is Sweep on state s.
func (k *GibbsKernel) sweep(rng *rand.Rand, s *GibbsState) {
	switch {
	case k.u32 != nil:
		k.sweepRows32(rng, s)
	case k.u.Cols > smallDim:
		k.sweepRows(rng, s)
	default:
		k.sweepCols(rng, s)
	}
	k.drawTheta(rng, s, s.b)
}

// sweepRows is Sweep's pass for d > smallDim: the dot products and
// updates use the row kernels (kernel.go: fixed FMA arithmetic, AVX on
// amd64), four rows at a time, and the next block is prefetched while the
// latent variables are drawn.
func (k *GibbsKernel) sweepRows(rng *rand.Rand, s *GibbsState) {
	d, stride := k.u.Cols, k.u.Stride
	data := k.u.Data
	theta, acc := s.theta[:d], s.b[:d]
	clear(acc)
	bs := max(4, sweepBlockElems/d&^3)
	n := len(k.sign)
	for n0 := 0; n0 < n; n0 += bs {
		n1 := min(n, n0+bs)
		kap, sg := s.kappa[n0:n1], k.sign[n0:n1]
		blk := data[n0*stride:]
		nr := len(kap)
		i := 0
		for ; i+4 <= nr; i += 4 {
			dot4((*[4]float64)(kap[i:i+4]), blk[i*stride:], stride, theta)
		}
		for ; i < nr; i++ {
			kap[i] = dot(blk[i*stride:i*stride+d], theta)
		}
		if n1 < n {
			// The next block streams in while this one is processed.
			prefetch(data[n1*stride : min(n, n1+bs)*stride])
		}
		s.latent.draw(rng, kap, sg, nil, 0, nil)
		i = 0
		for ; i+4 <= nr; i += 4 {
			axpy4((*[4]float64)(kap[i:i+4]), blk[i*stride:], stride, acc)
		}
		for ; i < nr; i++ {
			axpy(kap[i], blk[i*stride:i*stride+d], acc)
		}
	}
}

// sweepRows32 is sweepRows on the float32 copy of U (same blocks, same
// order; the float32 kernels).
func (k *GibbsKernel) sweepRows32(rng *rand.Rand, s *GibbsState) {
	d := k.u.Cols
	data := k.u32
	theta, acc := s.theta[:d], s.b[:d]
	clear(acc)
	bs := max(4, sweepBlockElems/d&^3)
	n := len(k.sign)
	for n0 := 0; n0 < n; n0 += bs {
		n1 := min(n, n0+bs)
		kap, sg := s.kappa[n0:n1], k.sign[n0:n1]
		blk := data[n0*d:]
		nr := len(kap)
		i := 0
		for ; i+4 <= nr; i += 4 {
			dot4F32((*[4]float64)(kap[i:i+4]), blk[i*d:], d, theta)
		}
		for ; i < nr; i++ {
			kap[i] = dotF32Generic(blk[i*d:i*d+d], theta)
		}
		if n1 < n {
			prefetch32(data[n1*d : min(n, n1+bs)*d])
		}
		s.latent.draw(rng, kap, sg, nil, 0, nil)
		i = 0
		for ; i+4 <= nr; i += 4 {
			axpy4F32((*[4]float64)(kap[i:i+4]), blk[i*d:], d, acc)
		}
		for ; i < nr; i++ {
			axpyF32Generic(kap[i], blk[i*d:i*d+d], acc)
		}
	}
}

// sweepCols is Sweep's pass for d ≤ smallDim, where calls per row would
// dominate: blocks of 1024 rows (in L1 or L2 at these d); the margins
// (…((u_n0θ_0 + u_n1θ_1) + u_n2θ_2) …) are computed inside the first round
// of the latent draws, and Uᵀκ column by column, each block adding the
// partial sums s_r over its rows i ≡ r (mod 4) as (s₀+s₁)+(s₂+s₃), so that
// the rows' sums are independent and pipeline.
func (k *GibbsKernel) sweepCols(rng *rand.Rand, s *GibbsState) {
	d, stride := k.u.Cols, k.u.Stride
	data := k.u.Data
	theta, acc := s.theta[:d], s.b[:d]
	clear(acc)
	sc := s.latent
	n := len(k.sign)
	for n0 := 0; n0 < n; n0 += latentChunk {
		n1 := min(n, n0+latentChunk)
		kap, sg := s.kappa[n0:n1], k.sign[n0:n1]
		blk := data[n0*stride:]
		sc.draw(rng, kap, sg, blk, stride, theta)
		nr := len(kap)
		for j := range acc {
			col := blk[j:]
			var s0, s1, s2, s3 float64
			i := 0
			for ; i+4 <= nr; i += 4 {
				s0 += kap[i] * col[i*stride]
				s1 += kap[i+1] * col[(i+1)*stride]
				s2 += kap[i+2] * col[(i+2)*stride]
				s3 += kap[i+3] * col[(i+3)*stride]
			}
			for ; i < nr; i++ {
				s0 += kap[i] * col[i*stride]
			}
			acc[j] += (s0 + s1) + (s2 + s3)
		}
	}
}

// latentChunk is the number of entries DrawLatent processes at a time
// (its scratch lives on the stack), and roundMin the number of pending
// entries below which the rest are finished one by one.
const (
	latentChunk = 1024
	roundMin    = 8
)

// DrawLatent replaces each margin kappa[i] = m_i by a draw of the latent
// variable of eq: sample latent variable,
//
//	κ_i ~ N(m_i, 1) truncated to κ_i > 0 if sign[i] = +1, κ_i ≤ 0 if −1,
//
// that is κ_i = m_i + s_i X_i with X_i ~ N(0, 1) | X_i > a_i, a_i = −s_i m_i.
// Each X_i is an exact rejection-sampling draw, but the entries are
// processed in rounds rather than one at a time: every round makes one
// proposal for each pending entry, keeps it if accepted and carries the
// others to the next round. The first round proposes Z (a_i ≤ 0) or |Z|
// (a_i > 0), Z ~ N(0, 1), for all entries (most are accepted: the points
// on the side their label predicts); the rejected ones continue with the
// plain normal (a_i ≤ 0), half-normal (0 < a_i < 0.257) or Robert's
// exponential proposal (see StdNormalAbove), and the last few (fewer than
// 8 of a kind) are finished by StdNormalAbove itself. A round has no
// data-dependent branches, which on this kernel matters more than the
// proposals spent. It works in chunks of 1024 entries with 28 KiB of
// scratch on the stack (so it suits batches of hundreds or more), panics
// if len(sign) < len(kappa) and does not allocate.
func DrawLatent(rng *rand.Rand, kappa, sign []float64) {
	var sc latentScratch
	sign = sign[:len(kappa)]
	for c0 := 0; c0 < len(kappa); c0 += latentChunk {
		kap := kappa[c0:min(len(kappa), c0+latentChunk)]
		sc.draw(rng, kap, sign[c0:c0+len(kap)], nil, 0, nil)
	}
}

// latentScratch is DrawLatent's working space for one chunk.
type latentScratch struct {
	zbuf, ebuf [latentChunk]float64
	idx        [latentChunk]int32
	bnd        [latentChunk]float64
}

// draw does DrawLatent for one chunk (len(kap) ≤ latentChunk). If rows is
// not nil, the margins are not read from kap but computed in the first
// round as m_i = (…((u_i0θ_0 + u_i1θ_1) + u_i2θ_2) …) from the rows
// u_i = rows[i*stride:i*stride+len(theta)].
func (sc *latentScratch) draw(rng *rand.Rand, kap, sg []float64, rows []float64, stride int, theta []float64) {
	z := sc.zbuf[:len(kap)]
	sg = sg[:len(kap)]
	fillNormal(rng, z)
	np := 0
	idx, bnd := &sc.idx, &sc.bnd
	for i := range kap {
		var m float64
		if rows == nil {
			m = kap[i]
		} else {
			for j, x := range rows[i*stride : i*stride+len(theta)] {
				m += x * theta[j]
			}
		}
		s := sg[i]
		a := -s * m
		// |Z| when a ≥ +0 (sign bit of a clear), Z otherwise.
		x := math.Float64frombits(math.Float64bits(z[i]) &^ (^math.Float64bits(a) & (1 << 63)))
		kap[i] = m + s*x
		idx[np], bnd[np] = int32(i), a
		if !(x > a) {
			np++
		}
	}
	if np > 0 {
		latentRounds(rng, kap, sg, idx[:np], bnd[:np], &sc.zbuf, &sc.ebuf)
	}
}

// latentRounds finishes DrawLatent for the entries idx (bounds bnd) of kap
// whose first proposal was rejected. Each class of bound gets rounds of
// StdNormalAbove's proposal for it — a ≤ 0: Z; 0 < a < halfNormalMax: |Z|;
// otherwise Robert's exponential proposal — while at least roundMin
// entries of the class are pending; StdNormalAbove finishes the rest. The
// margin is m = −s·a exactly (s = ±1). An entry with a NaN bound (a NaN
// margin) is set to NaN.
func latentRounds(rng *rand.Rand, kap, sg []float64, idx []int32, bnd []float64, zbuf, ebuf *[latentChunk]float64) {
	// Partition: the normal and half-normal classes first, then Robert's.
	lo, hi := 0, len(idx)
	for lo < hi {
		switch a := bnd[lo]; {
		case math.IsNaN(a):
			kap[idx[lo]] = a
			hi--
			idx[lo], bnd[lo] = idx[hi], bnd[hi]
			idx, bnd = idx[:hi], bnd[:hi]
		case a >= halfNormalMax:
			hi--
			idx[lo], idx[hi] = idx[hi], idx[lo]
			bnd[lo], bnd[hi] = bnd[hi], bnd[lo]
		default:
			lo++
		}
	}
	pi, pb := idx[:lo], bnd[:lo]
	for len(pi) >= roundMin {
		z := zbuf[:len(pi)]
		fillNormal(rng, z)
		np := 0
		for r, i := range pi {
			a := pb[r]
			s := sg[i]
			x := math.Float64frombits(math.Float64bits(z[r]) &^ (^math.Float64bits(a) & (1 << 63)))
			kap[i] = s*x - s*a // m + s·x
			pi[np], pb[np] = i, a
			if !(x > a) {
				np++
			}
		}
		pi, pb = pi[:np], pb[:np]
	}
	finishLatent(rng, kap, sg, pi, pb)
	pi, pb = idx[lo:], bnd[lo:]
	for len(pi) >= roundMin {
		e1, e2 := zbuf[:len(pi)], ebuf[:len(pi)]
		fillExp(rng, e1)
		fillExp(rng, e2)
		np := 0
		for r, i := range pi {
			a := pb[r]
			s := sg[i]
			alpha := 0.5 * (a + math.Sqrt(a*a+4))
			x := a + e1[r]/alpha
			d := x - alpha
			kap[i] = s*x - s*a
			pi[np], pb[np] = i, a
			if !(e2[r] >= 0.5*d*d) {
				np++
			}
		}
		pi, pb = pi[:np], pb[:np]
	}
	finishLatent(rng, kap, sg, pi, pb)
}

// finishLatent draws the pending entries idx of kap one by one.
func finishLatent(rng *rand.Rand, kap, sg []float64, idx []int32, bnd []float64) {
	for r, i := range idx {
		a, s := bnd[r], sg[i]
		kap[i] = s*StdNormalAbove(rng, a) - s*a
	}
}

// drawTheta sets θ = R⁻¹(R⁻ᵀ b + z), z ~ N(0, I), a draw from
// N(C b, C) (eq: sample posterior) with b = Uᵀκ. b is overwritten. The two
// triangular solves are substitutions whose inner products over rows of
// Rᵀ and R use the row kernel dot (contiguous, FMA), which for d in the
// hundreds is several times faster than a general triangular solve.
func (k *GibbsKernel) drawTheta(rng *rand.Rand, s *GibbsState, b []float64) {
	d := len(b)
	r, rt := k.r[:d*d], k.rt[:d*d]
	// Rᵀ y = b, forward: y_i = (b_i − Σ_{j<i} Rᵀ_ij y_j) / R_ii.
	for i := 0; i < d; i++ {
		b[i] = (b[i] - dot(rt[i*d:i*d+i], b[:i])) / rt[i*d+i]
	}
	for i := range b {
		b[i] += stdNormal(rng)
	}
	// R x = y + z, backward: x_i = (c_i − Σ_{j>i} R_ij x_j) / R_ii.
	for i := d - 1; i >= 0; i-- {
		b[i] = (b[i] - dot(r[i*d+i+1:i*d+d], b[i+1:])) / r[i*d+i]
	}
	copy(s.theta, b)
}

// Sample runs burnin sweeps from the current state, then stores the θ of
// each of the next S sweeps in the S rows of dst (S×d): shorthand for
// g.Run(context.Background(), rng, dst, nil, burnin, 1, nil). The chain
// continues from where it stopped on the next call. It returns an error if
// burnin is negative and panics if dst does not have d columns.
func (g *Gibbs) Sample(rng *rand.Rand, dst *mat.Dense, burnin int) error {
	_, err := g.Run(context.Background(), rng, dst, nil, burnin, 1, nil)
	return err
}

// Run drives the chain with the generic driver Run: burnin sweeps, then
// thin sweeps per row of dst, the info of each row's sweep in infos (if
// not nil), its advance to progress (if not nil), stopping once ctx is
// done; it returns the statistics after burn-in.
func (g *Gibbs) Run(ctx context.Context, rng *rand.Rand, dst *mat.Dense, infos []Info, burnin, thin int, progress Progress) (Stats, error) {
	st, err := Run(rng, g.k, g.s, Schedule{BurnIn: burnin, Thin: thin, Infos: infos, Progress: progress, Ctx: ctx}, dst)
	if err != nil {
		return st, fmt.Errorf("gibbs: %w", err)
	}
	return st, nil
}
