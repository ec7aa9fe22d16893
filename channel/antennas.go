package channel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// A multi-antenna server (Config.RxAntennas, docs/MATH.md note 21).
//
// The server has n_r = N_r·m_r receive antennas, and worker k's channel
// H_k is n_r × m_t (flat fading: 1_{N_r} ⊗ I_{m_r}, every received
// dimension seen by N_r antennas at unit gain). The server combines its
// antennas with a beamformer F (m_r × n_r, F Fᵀ = I) that it computes from
// the channel estimates of the workers sharing a block, and each worker
// zero-forces its effective channel: x_k = (F Ĥ_k)^† t_k. The combined
// signal is F y = Σ_k F H_k x_k + F n, and F n ~ N(0, N0 I_{m_r}) whatever
// F: under perfect CSI the server receives the paper's y = E θ + n, and
// the antennas enter only through the inversion cost g of the effective
// channel (CombinedInvGram), hence through the power scales P_k.

// MaxRxAntennas is the largest N_r: the server's antennas, N_r·m_r, set
// the size of every channel draw and of the beamformer's design.
const MaxRxAntennas = 64

// rxAntennas returns N_r (0 is taken as 1, the paper's single antenna per
// received dimension).
func (c Config) rxAntennas() int { return max(1, c.RxAntennas) }

// validateAntennas checks RxAntennas against the rest of c: the combined
// channel's inversion cost is tabulated for the real Rayleigh and flat
// channels and the paper's inversion only.
func (c Config) validateAntennas() error {
	n := c.RxAntennas
	switch {
	case n < 0:
		return fmt.Errorf("receive antennas N_r = %d: must be ≥ 1 per received dimension (0 is read as 1, the paper's single antenna)", n)
	case n > MaxRxAntennas:
		return fmt.Errorf("receive antennas N_r = %d: at most %d per received dimension", n, MaxRxAntennas)
	case n <= 1:
		return nil
	case c.Complex:
		return fmt.Errorf("receive antennas N_r = %d on the complex channel: the multi-antenna server is built for the real channel (flat or rayleigh fading) only", n)
	case c.Control.PeakPower > 0:
		return fmt.Errorf("receive antennas N_r = %d with truncated inversion (peak power %v): the outage law of the combined channel has no closed form; use the paper's inversion", n, c.Control.PeakPower)
	}
	return nil
}

// CombinedInvGram returns g in E[(F H Hᵀ Fᵀ)^{-1}] = g·I for a unit-gain
// channel known exactly and the server's beamformer F for a block shared
// by workers workers (1 under OMA, K under NOMA), parameter dimension d
// (docs/MATH.md eq. (21.4)): InvGramMean with one antenna per received
// dimension, 1/N_r on flat fading, and on Rayleigh fading a Monte Carlo
// estimate (rxTable) computed once per setting and process.
func (c Config) CombinedInvGram(d, workers int) float64 {
	n := c.rxAntennas()
	if n == 1 {
		return c.InvGramMean()
	}
	if c.Fading == Flat {
		return 1 / float64(n)
	}
	mr, mt := c.Dims(d)
	return rxTable(mr, mt, n*mr, max(1, workers))[0]
}

// rxDraws is the number of draws of the Monte Carlo estimate of g for m_r
// received dimensions and w workers per block: 2^14/(m_r·w), at least 64
// (each draw averages m_r·w inverse gains).
func rxDraws(mr, w int) int { return max(64, (1<<14)/(mr*w)) }

type rxKey struct{ mr, mt, nr, workers int }

var rxCache sync.Map // rxKey → [2]float64

// rxTable returns g of CombinedInvGram and its standard error for m_r
// streams, m_t transmit and n_r receive antennas and w workers per block:
// the mean over rxDraws(m_r, w) draws of (1/(m_r w)) Σ_k tr((F Z_k Z_kᵀ Fᵀ)^{-1}),
// Z_k i.i.d. N(0, 1) entries and F their beamformer (docs/MATH.md
// (21.3)–(21.4)), from a generator seeded by the arguments: a deterministic
// function of them, computed once per process.
func rxTable(mr, mt, nr, w int) [2]float64 {
	key := rxKey{mr, mt, nr, w}
	if v, ok := rxCache.Load(key); ok {
		return v.([2]float64)
	}
	rng := rand.New(rand.NewPCG(uint64(mr)<<32|uint64(mt), uint64(nr)<<32|uint64(w)))
	n := rxDraws(mr, w)
	bf := newBeamformer(mr, nr, mt)
	z := make([]*mat.Dense, w)
	for k := range z {
		z[k] = mat.NewDense(nr, mt, nil)
	}
	vals := make([]float64, 0, n)
	for len(vals) < n {
		for _, zk := range z {
			raw := zk.RawMatrix().Data
			for i := range raw {
				raw[i] = rng.NormFloat64()
			}
		}
		f, ok := bf.design(z)
		if !ok {
			continue
		}
		if j := bf.cost(f, z); !math.IsInf(j, 0) {
			vals = append(vals, j/float64(mr*w))
		}
	}
	var g [2]float64
	g[0], g[1] = stat.MeanStdDev(vals, nil)
	g[1] /= math.Sqrt(float64(n))
	rxCache.Store(key, g)
	return g
}

// The beamformer's descent (docs/MATH.md (21.3)): at most beamIters
// iterations, stopped when one lowers the summed inversion cost J by less
// than beamTol of it; a step is accepted when it lowers J by at least
// beamArmijo of the decrease its slope promises.
const (
	beamIters  = 100
	beamTol    = 1e-4
	beamArmijo = 1e-4
)

// beamformer designs the server's receive combiner for the standardised
// channel estimates Z_k (n_r × m_t, i.i.d. N(0, 1) entries in law) of the
// workers sharing a block (docs/MATH.md (21.3)): F, m_r × n_r with
// orthonormal rows, minimises J(F) = Σ_k tr((F Z_k Z_kᵀ Fᵀ)^{-1}), the
// workers' summed inversion cost. For one worker the minimiser is the span
// of the m_r dominant left singular vectors of Z (Cauchy's interlacing
// theorem); for several, Riemannian gradient descent on the Grassmann
// manifold from the dominant m_r-dimensional eigenspace of Σ_k Z_k Z_kᵀ.
// It reuses its buffers and is not safe for concurrent use.
type beamformer struct {
	mr, nr, mt int
	a          []*mat.Dense    // F Z_k, m_r × m_t
	inv        []*mat.SymDense // (F Z_k Z_kᵀ Fᵀ)^{-1}
	eig        mat.EigenSym
}

func newBeamformer(mr, nr, mt int) *beamformer {
	return &beamformer{mr: mr, nr: nr, mt: mt}
}

// grow sizes the per-worker buffers for w workers.
func (b *beamformer) grow(w int) {
	for len(b.a) < w {
		b.a = append(b.a, mat.NewDense(b.mr, b.mt, nil))
		b.inv = append(b.inv, mat.NewSymDense(b.mr, nil))
	}
}

// design returns the beamformer of the estimates z, or false when its
// start is singular (probability zero for Gaussian estimates).
func (b *beamformer) design(z []*mat.Dense) (*mat.Dense, bool) {
	f, ok := b.start(z)
	if !ok {
		return nil, false
	}
	if len(z) == 1 {
		return f, true
	}
	return b.descend(f, z), true
}

// start returns the dominant m_r-dimensional eigenspace of Σ_k Z_k Z_kᵀ as
// the rows of F: from the eigenvectors v_i of ZᵀZ, Z = [Z_1 … Z_K], as
// Z v_i/√λ_i when K·m_t ≤ n_r (the smaller problem), otherwise from those
// of Σ_k Z_k Z_kᵀ itself.
func (b *beamformer) start(z []*mat.Dense) (*mat.Dense, bool) {
	cols := len(z) * b.mt
	f := mat.NewDense(b.mr, b.nr, nil)
	var vecs mat.Dense
	if cols <= b.nr {
		zc := mat.NewDense(b.nr, cols, nil)
		for k, zk := range z {
			zc.Slice(0, b.nr, k*b.mt, (k+1)*b.mt).(*mat.Dense).Copy(zk)
		}
		g := mat.NewSymDense(cols, nil)
		g.SymOuterK(1, zc.T())
		if !b.eig.Factorize(g, true) {
			return nil, false
		}
		vals := b.eig.Values(nil)
		b.eig.VectorsTo(&vecs)
		var col mat.VecDense
		for i := range b.mr {
			j := cols - 1 - i
			if !(vals[j] > 0) {
				return nil, false
			}
			col.MulVec(zc, vecs.ColView(j))
			col.ScaleVec(1/math.Sqrt(vals[j]), &col)
			f.SetRow(i, col.RawVector().Data)
		}
		return f, true
	}
	g := mat.NewSymDense(b.nr, nil)
	for _, zk := range z {
		g.SymRankK(g, 1, zk)
	}
	if !b.eig.Factorize(g, true) {
		return nil, false
	}
	b.eig.VectorsTo(&vecs)
	for i := range b.mr {
		f.SetRow(i, mat.Col(nil, b.nr-1-i, &vecs))
	}
	return f, true
}

// cost returns J(F) = Σ_k tr((F Z_k Z_kᵀ Fᵀ)^{-1}), +Inf when some
// F Z_k Z_kᵀ Fᵀ is singular; it leaves F Z_k and the inverses in b.a and
// b.inv.
func (b *beamformer) cost(f *mat.Dense, z []*mat.Dense) float64 {
	b.grow(len(z))
	var j float64
	for k, zk := range z {
		b.a[k].Mul(f, zk)
		if !invertGram(b.inv[k], b.a[k]) {
			return math.Inf(1)
		}
		j += mat.Trace(b.inv[k])
	}
	return j
}

// invertGram sets dst to (A Aᵀ)^{-1} by its Cholesky factor (LAPACK's
// Potrf and Potri, without the condition estimate of mat.Cholesky, which
// took most of the design's time), reporting false when A Aᵀ is not
// positive definite in floating point.
func invertGram(dst *mat.SymDense, a *mat.Dense) bool {
	dst.SymOuterK(1, a)
	t, ok := lapack64.Potrf(dst.RawSymmetric())
	if !ok {
		return false
	}
	_, ok = lapack64.Potri(t)
	return ok
}

// direction returns D = Σ_k M_k^{-2} F Z_k Z_kᵀ (I − FᵀF), M_k = F Z_k Z_kᵀ Fᵀ:
// −½ the Riemannian gradient of J at F, a descent direction tangent to the
// Grassmann manifold (F Dᵀ = 0), computed after cost(f, z).
func (b *beamformer) direction(f *mat.Dense, z []*mat.Dense) *mat.Dense {
	d := mat.NewDense(b.mr, b.nr, nil)
	var c1, c2, t mat.Dense
	for k, zk := range z {
		c1.Mul(b.inv[k], b.a[k])
		c2.Mul(b.inv[k], &c1)
		t.Mul(&c2, zk.T())
		d.Add(d, &t)
	}
	var dft, p mat.Dense
	dft.Mul(d, f.T())
	p.Mul(&dft, f)
	d.Sub(d, &p)
	return d
}

// retract returns the point of the Grassmann manifold reached from F along
// D with step s: the polar factor (X Xᵀ)^{-1/2} X of X = F + s D, whose
// rows are orthonormal; false when X X ᵀ is not positive definite.
func (b *beamformer) retract(f, d *mat.Dense, s float64) (*mat.Dense, bool) {
	var x mat.Dense
	x.Scale(s, d)
	x.Add(f, &x)
	g := mat.NewSymDense(b.mr, nil)
	g.SymOuterK(1, &x)
	if !b.eig.Factorize(g, true) {
		return nil, false
	}
	vals := b.eig.Values(nil)
	var v mat.Dense
	b.eig.VectorsTo(&v)
	for i, l := range vals {
		if !(l > 0) {
			return nil, false
		}
		col := v.ColView(i).(*mat.VecDense)
		col.ScaleVec(1/math.Sqrt(math.Sqrt(l)), col)
	}
	var root, out mat.Dense
	root.Mul(&v, v.T()) // (X Xᵀ)^{-1/2}
	out.Mul(&root, &x)
	return &out, true
}

// descend runs the Riemannian gradient descent of J from f: steps along
// direction with the polar retraction and Armijo backtracking (the step
// doubled after each accepted one), until an accepted step lowers J by
// less than beamTol of it, no step is accepted, or beamIters iterations.
func (b *beamformer) descend(f *mat.Dense, z []*mat.Dense) *mat.Dense {
	j := b.cost(f, z)
	if math.IsInf(j, 0) {
		return f
	}
	step := 1.0
	for range beamIters {
		d := b.direction(f, z)
		dn := mat.Norm(d, 2)
		if !(dn > 0) || math.IsInf(dn, 0) {
			break
		}
		moved := false
		var rel float64
		for range 60 {
			cand, ok := b.retract(f, d, step/dn)
			if ok {
				if jc := b.cost(cand, z); jc <= j-beamArmijo*2*step*dn {
					rel = (j - jc) / j
					f, j, moved = cand, jc, true
					break
				}
			}
			step /= 2
		}
		if !moved {
			break
		}
		step *= 2 // the buffers hold the accepted point, for direction
		if rel < beamTol {
			break
		}
	}
	return f
}

// haarRotate replaces f by Q f, Q a Haar-distributed orthogonal m_r × m_r
// matrix drawn from rng (the Q factor of a Gaussian matrix, its columns'
// signs set by R's diagonal): the streams reach the beams in a uniformly
// random rotation, so that E[(F H Hᵀ Fᵀ)^{-1}] is a multiple of I
// (docs/MATH.md (21.3)).
func haarRotate(rng *rand.Rand, f *mat.Dense) {
	m, _ := f.Dims()
	g := mat.NewDense(m, m, nil)
	raw := g.RawMatrix().Data
	for i := range raw {
		raw[i] = rng.NormFloat64()
	}
	var qr mat.QR
	qr.Factorize(g)
	var q, r mat.Dense
	qr.QTo(&q)
	qr.RTo(&r)
	for j := range m {
		if r.At(j, j) < 0 {
			for i := range m {
				q.Set(i, j, -q.At(i, j))
			}
		}
	}
	var out mat.Dense
	out.Mul(&q, f)
	f.Copy(&out)
}

// arrayLink simulates the physical chain of a multi-antenna server
// (docs/MATH.md (21.1)–(21.3)), reusing its buffers: per worker the
// channel H_k and its estimate Ĥ_k (n_r × m_t), per stream the beamformer
// F of the workers that share it (OMA: one per worker, NOMA: one), and
// per worker its effective channels F H_k and F Ĥ_k, zero-forced by a
// zfLink.
type arrayLink struct {
	nr, mt       int
	flat         bool
	imperfect    bool
	h, hhat, z   []*mat.Dense // per worker, n_r × m_t; hhat is h under perfect CSI, z is Ĥ_k/√v̂_k
	eff          []*zfLink    // per worker: h = F H_k, hhat = F Ĥ_k
	f            []*mat.Dense // per stream
	bf           *beamformer
	noise, combo *mat.VecDense
}

// newArrayLink prepares the chain of c for m_r received dimensions, k
// workers and the given number of streams.
func newArrayLink(c Config, mr, k, streams int) *arrayLink {
	nr := c.rxAntennas() * mr
	mt := mr
	if c.Fading != Flat {
		mt = mr + c.ExtraTx
	}
	a := &arrayLink{nr: nr, mt: mt, flat: c.Fading == Flat, imperfect: c.CSI.imperfect(),
		bf: newBeamformer(mr, nr, mt), noise: mat.NewVecDense(nr, nil), combo: mat.NewVecDense(mr, nil)}
	eff := Config{ExtraTx: mt - mr, CSI: c.CSI}
	for range k {
		h := mat.NewDense(nr, mt, nil)
		if a.flat {
			for i := range nr {
				h.Set(i, i%mr, 1) // 1_{N_r} ⊗ I_{m_r}
			}
		}
		hhat, z := h, h
		if a.imperfect {
			hhat, z = mat.NewDense(nr, mt, nil), mat.NewDense(nr, mt, nil)
		}
		a.h, a.hhat, a.z = append(a.h, h), append(a.hhat, hhat), append(a.z, z)
		a.eff = append(a.eff, newZFLink(eff, mr))
	}
	a.f = make([]*mat.Dense, streams)
	return a
}

// draw draws the channels and estimates of the workers ws (the channel
// model of zfLink.drawReal on n_r × m_t; flat fading is fixed), the
// beamformer of stream s from their standardised estimates, rotated by
// haarRotate, and their effective channels, redrawing up to maxRedraws
// times while some F Ĥ_k Ĥ_kᵀ Fᵀ is singular.
func (a *arrayLink) draw(rng *rand.Rand, ws []int, links []workerLink, s int) error {
	zs := make([]*mat.Dense, len(ws))
	for range maxRedraws {
		for i, k := range ws {
			a.drawWorker(rng, k, links[k])
			zs[i] = a.z[k]
		}
		f, ok := a.bf.design(zs)
		if !ok {
			continue
		}
		haarRotate(rng, f)
		a.f[s] = f
		for _, k := range ws {
			e := a.eff[k]
			e.h.Mul(f, a.h[k])
			if a.imperfect {
				e.hhat.Mul(f, a.hhat[k])
			}
			if ok = e.factor(); !ok {
				break
			}
		}
		if ok {
			return nil
		}
	}
	return errSingular
}

// drawWorker draws worker k's Rayleigh channel H (i.i.d. N(0, 1)) and,
// under imperfect CSI, its estimate Ĥ = c (H + E), E i.i.d. N(0, σ²), with
// the standardised estimate Ĥ/√v̂ (docs/BEYOND.md (12.1)–(12.2)).
func (a *arrayLink) drawWorker(rng *rand.Rand, k int, w workerLink) {
	if a.flat {
		return
	}
	raw := a.h[k].RawMatrix().Data
	for i := range raw {
		raw[i] = rng.NormFloat64()
	}
	if !a.imperfect {
		return
	}
	sd := math.Sqrt(w.lsVar)
	hat := a.hhat[k].RawMatrix().Data
	z := a.z[k].RawMatrix().Data
	scale := 1 / math.Sqrt(w.vHat)
	for i, v := range raw {
		hat[i] = w.shrink * (v + sd*rng.NormFloat64())
		z[i] = hat[i] * scale
	}
}

// addNoise adds F_s n to dst, n ~ N(0, σ² I) on the n_r antennas; nothing
// before stream s has a beamformer (its first draw failed).
func (a *arrayLink) addNoise(rng *rand.Rand, dst []float64, s int, sigma float64) {
	if a.f[s] == nil {
		return
	}
	raw := a.noise.RawVector().Data
	for i := range raw {
		raw[i] = sigma * rng.NormFloat64()
	}
	a.combo.MulVec(a.f[s], a.noise)
	for i, v := range a.combo.RawVector().Data {
		dst[i] += v
	}
}
