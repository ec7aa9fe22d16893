package sampler

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
		"gonum.org/v1/gonum/mat"

	"wcmc/model"
)

// smallDim is the dimension up to which Sweep uses plain loops rather than
// gonum's assembly dot/axpy kernels (measured faster for d = 5).
const smallDim = 8

// DefaultBurnIn is the paper's Gibbs burn-in: the first 100 samples are
// discarded (Appendix, "Gibbs Sampling from Posterior").
const DefaultBurnIn = 100

// Gibbs is the state of the Albert–Chib data-augmentation Gibbs sampler for
// the probit posterior p(θ | Z) ∝ N(θ; 0, σ² I) Π_n Φ(s_n θᵀu_n)
// (eq: equivalent model). Each sweep draws
//
//	κ_n | θ ~ N(θᵀu_n, 1) truncated to κ_n > 0 (v_n = 1) or κ_n ≤ 0 (v_n = 0)
//	                                                  (eq: sample latent variable)
//	θ | κ   ~ N(C Uᵀκ, C),  C = (UᵀU + σ⁻² I)⁻¹       (eq: sample posterior)
//
// The θ-draw uses the Cholesky factor of the precision, computed once in
// NewGibbs: P = C⁻¹ = RᵀR with R upper triangular. Then
//
//	θ = R⁻¹(R⁻ᵀ Uᵀκ + z),  z ~ N(0, I),
//
// has mean R⁻¹R⁻ᵀUᵀκ = C Uᵀκ and covariance R⁻¹R⁻ᵀ = C, at the cost of two
// triangular solves and without ever forming C.
//
// A Gibbs value is not safe for concurrent use; distinct values share
// nothing mutable and may run in parallel (see SampleWorkers).
type Gibbs struct {
	u      blas64.General    // N×d covariates (not copied)
	sign   []float64         // s_n = 2v_n − 1
	r      blas64.Triangular // upper Cholesky factor of the precision P
	theta  []float64         // current θ
	kappa  []float64         // current κ
	theta0 []float64         // MAP start
	b      []float64         // Uᵀκ accumulator
}

// NewGibbs prepares a Gibbs sampler for the probit posterior with data U
// (N×d, retained, not copied), labels v_n ∈ {0, 1} and prior N(0, priorVar·I)
// (for a subposterior pass K·σ², DESIGN note 6). It factors the precision
// UᵀU + σ⁻² I once and starts the chain at the posterior mode
// (model.Probit.MAP; the paper's MLE need not exist for separable shards).
// Errors from the data checks of model.NewProbit and from the MAP search are
// returned.
func NewGibbs(u *mat.Dense, v []float64, priorVar float64) (*Gibbs, error) {
	p, err := model.NewProbit(u, v, priorVar)
	if err != nil {
		return nil, err
	}
	_, d := u.Dims()
	prec := mat.NewSymDense(d, nil)
	prec.SymOuterK(1, u.T())
	for i := 0; i < d; i++ {
		prec.SetSym(i, i, prec.At(i, i)+1/priorVar)
	}
	g := &Gibbs{
		u:     u.RawMatrix(),
		sign:  p.Signs(),
		kappa: make([]float64, p.NumData()),
		theta: make([]float64, d),
		b:     make([]float64, d),
	}
	var chol mat.Cholesky
	if ok := chol.Factorize(prec); !ok {
		return nil, errors.New("gibbs: precision UᵀU + σ⁻²I is not positive definite")
	}
	var tri mat.TriDense
	chol.UTo(&tri)
	g.r = tri.RawTriangular()
	g.theta0, err = p.MAP(nil)
	if err != nil {
		return nil, fmt.Errorf("gibbs: starting point: %w", err)
	}
	copy(g.theta, g.theta0)
	return g, nil
}

// Dim returns d, the dimension of θ.
func (g *Gibbs) Dim() int { return g.u.Cols }

// MAP returns the posterior mode the chain started from. It must not be
// modified.
func (g *Gibbs) MAP() []float64 { return g.theta0 }

// Theta returns the current θ. It must not be modified.
func (g *Gibbs) Theta() []float64 { return g.theta }

// Kappa returns the current latent variables κ. It must not be modified.
func (g *Gibbs) Kappa() []float64 { return g.kappa }

// Start sets the current θ to theta0 (nil: back to the MAP). It panics if
// len(theta0) != d.
func (g *Gibbs) Start(theta0 []float64) {
	if theta0 == nil {
		theta0 = g.theta0
	}
	if len(theta0) != g.u.Cols {
		panic(mat.ErrShape)
	}
	copy(g.theta, theta0)
}

// sweepBlockElems bounds the entries of U in one block of a sweep
// (16 KiB), so that a block read from memory in the margin pass is still
// in the L1 cache for the accumulation pass.
const sweepBlockElems = 2048

// Sweep performs one Gibbs sweep: κ | θ then θ | κ. It makes one pass over
// the rows of U from memory, in blocks of ⌈2048/d⌉ rows: for each block,
// the margins m_n = u_nᵀθ, then the draws κ_n ~ N(m_n, 1) truncated by v_n
// (eq: sample latent variable), then Uᵀκ += Σ_n κ_n u_n while the block is
// still in cache. For d > 8 the dot products and updates are the row
// kernels dot and axpy (fixed FMA arithmetic, see kernel.go); for d ≤ 8
// plain loops, for which call overhead would dominate. It does not
// allocate.
func (g *Gibbs) Sweep(rng *rand.Rand) {
	d, stride := g.u.Cols, g.u.Stride
	data := g.u.Data
	theta, acc := g.theta[:d], g.b[:d]
	clear(acc)
	bs := max(1, sweepBlockElems/d)
	n := len(g.sign)
	for n0 := 0; n0 < n; n0 += bs {
		n1 := min(n, n0+bs)
		kap, sg := g.kappa[n0:n1], g.sign[n0:n1]
		blk := data[n0*stride:]
		if d > smallDim {
			for i := range kap {
				kap[i] = dot(blk[i*stride:i*stride+d], theta)
			}
		} else {
			for i := range kap {
				row := blk[i*stride : i*stride+d]
				var m float64
				for j, x := range row {
					m += x * theta[j]
				}
				kap[i] = m
			}
		}
		drawLatent(rng, kap, sg)
		if d > smallDim {
			for i, k := range kap {
				axpy(k, blk[i*stride:i*stride+d], acc)
			}
		} else {
			for i, k := range kap {
				row := blk[i*stride : i*stride+d]
				for j, x := range row {
					acc[j] += k * x
				}
			}
		}
	}
	g.drawTheta(rng, acc)
}

// drawLatent replaces each margin kap[i] = m by a draw of
// κ ~ N(m, 1) truncated to the side of s = sg[i]: κ = m + sX with
// X ~ N(0, 1) | X > −sm (StdNormalAbove). The common case −sm ≤ 0 — the
// point on the side its label predicts — tries one plain normal draw
// inline first, which is StdNormalAbove's own first step.
func drawLatent(rng *rand.Rand, kap, sg []float64) {
	sg = sg[:len(kap)]
	for i, m := range kap {
		s := sg[i]
		a := -s * m
		var x float64
		if a <= 0 {
			if x = rng.NormFloat64(); !(x > a) {
				x = StdNormalAbove(rng, a)
			}
		} else {
			x = StdNormalAbove(rng, a)
		}
		kap[i] = m + s*x
	}
}

// drawTheta sets θ = R⁻¹(R⁻ᵀ b + z), z ~ N(0, I), a draw from
// N(C b, C) (eq: sample posterior) with b = Uᵀκ. b is overwritten.
func (g *Gibbs) drawTheta(rng *rand.Rand, b []float64) {
	x := blas64.Vector{N: len(b), Inc: 1, Data: b}
	blas64.Trsv(blas.Trans, g.r, x)
	for i := range b {
		b[i] += rng.NormFloat64()
	}
	blas64.Trsv(blas.NoTrans, g.r, x)
	copy(g.theta, b)
}

// Sample runs burnin sweeps from the current state, then stores the θ of
// each of the next S sweeps in the S rows of dst (S×d). The chain continues
// from where it stopped on the next call. It returns an error if burnin is
// negative and panics if dst does not have d columns.
func (g *Gibbs) Sample(rng *rand.Rand, dst *mat.Dense, burnin int) error {
	if burnin < 0 {
		return fmt.Errorf("gibbs: negative burn-in %d", burnin)
	}
	s, d := dst.Dims()
	if d != g.u.Cols {
		panic(mat.ErrShape)
	}
	for i := 0; i < burnin; i++ {
		g.Sweep(rng)
	}
	for i := 0; i < s; i++ {
		g.Sweep(rng)
		copy(dst.RawRowView(i), g.theta)
	}
	return nil
}

// SampleWorkers runs chains[k].Sample(rngs[k], dst[k], burnin) for every k,
// in parallel on at most GOMAXPROCS goroutines. Chain k uses only rngs[k],
// so the result is bit-identical to the sequential loop whatever the
// scheduling; the caller must give each chain its own generator (seeded
// independently) or the chains will be identical. It returns an error if
// the slice lengths differ or burnin is negative, and panics (as Sample) on
// a column mismatch.
func SampleWorkers(rngs []*rand.Rand, chains []*Gibbs, dst []*mat.Dense, burnin int) error {
	if len(rngs) != len(chains) || len(dst) != len(chains) {
		return fmt.Errorf("gibbs: %d generators, %d chains and %d outputs", len(rngs), len(chains), len(dst))
	}
	if burnin < 0 {
		return fmt.Errorf("gibbs: negative burn-in %d", burnin)
	}
	for k := range chains {
		for j := 0; j < k; j++ {
			if rngs[j] == rngs[k] {
				return fmt.Errorf("gibbs: chains %d and %d share a generator", j, k)
			}
			if chains[j] == chains[k] {
				return fmt.Errorf("gibbs: chain %d is listed twice (also at %d)", k, j)
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(chains))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= len(chains) {
					return
				}
				// burnin ≥ 0 was checked, so Sample cannot fail.
				_ = chains[k].Sample(rngs[k], dst[k], burnin)
			}
		}()
	}
	wg.Wait()
	return nil
}
