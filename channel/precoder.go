package channel

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// The source-matched analog precoder (Config.Precoder, docs/MATH.md
// note 22).
//
// Worker k rotates its samples to the principal directions of their second
// moment M_k = (1/S) Σ_s θ_s θ_sᵀ = U_k diag(λ) U_kᵀ (of the fluctuations
// θ_s − m_k on a centred link) and scales direction i by f_i, sending the
// symbols u = F_k θ, F_k = diag(f) U_kᵀ, through the paper's chain
// E = √P_k B: the encoder is √P_k B F_k. The gains are those of the
// MSE-optimal linear encoder under the power constraint: each direction's
// received power q_i = P_k f_i² λ_i is reverse water-filled on √λ_i
// (MatchedAllocation), so a direction of small variance may get none.
//
// The server needs U_k and f: the worker sends M_k as side information,
// with the means' code of centring (QuantizeMean: a dithered uniform
// quantiser and an Elias gamma code, at an error variance per entry of at
// most CentreMeanErr·λ_min(M_k)²) at the zero-forcing link's rate
// (BlockBits), in blocks taken from the samples' budget as centring's
// means are (centre.go); worker and server both compute F_k from the
// decoded M̂_k. Under NOMA the workers share one F, computed by the server
// from the average of the decoded M̂_k and sent back to them without
// charge.

// Precoder is the workers' linear precoder before zero-forcing.
type Precoder int

const (
	// Identity is the paper's encoder E_k = √P_k B.
	Identity Precoder = iota
	// Whiten is the source-matched encoder √P_k B F_k (docs/MATH.md
	// note 22).
	Whiten
)

func (p Precoder) String() string {
	if p == Whiten {
		return "whiten"
	}
	return "identity"
}

// ParsePrecoder reads "identity" or "whiten".
func ParsePrecoder(s string) (Precoder, error) {
	switch strings.ToLower(s) {
	case "identity":
		return Identity, nil
	case "whiten":
		return Whiten, nil
	}
	return 0, fmt.Errorf("unknown precoder %q (want identity or whiten)", s)
}

// ErrMomentBudget is wrapped by the error of a link whose side
// information (the workers' second moments, and their means on a centred
// link) takes every block of the budget.
var ErrMomentBudget = errors.New("matched precoder: the workers' side information takes every block of the budget")

// MatchedAllocation returns the received power q_i per direction of the
// MSE-optimal linear encoder of a source whose second moment has
// eigenvalues lambda, over parallel Gaussian channels of noise variance
// noise with total received power budget (docs/MATH.md eq. (22.3)):
//
//	q_i = max(0, κ√λ_i − ν),  Σ_i q_i = Π,
//
// and the level κ. Directions with λ_i ≤ 0 get no power.
func MatchedAllocation(lambda []float64, budget, noise float64) (q []float64, level float64) {
	order := make([]int, 0, len(lambda))
	for i, l := range lambda {
		if l > 0 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return lambda[order[a]] > lambda[order[b]] })
	q = make([]float64, len(lambda))
	for m := len(order); m >= 1; m-- {
		var root float64
		for _, i := range order[:m] {
			root += math.Sqrt(lambda[i])
		}
		level = (budget + float64(m)*noise) / root
		if m > 1 && level*math.Sqrt(lambda[order[m-1]]) <= noise {
			continue
		}
		for _, i := range order[:m] {
			q[i] = math.Max(0, level*math.Sqrt(lambda[i])-noise)
		}
		return q, level
	}
	return q, 0
}

// MatchedMSE is the mean squared error of the linear MMSE estimate of the
// source from the channels of MatchedAllocation (docs/MATH.md eq. (22.4)):
// ν (Σ_{i∈A} √λ_i)²/(Π + |A| ν) + Σ_{i∉A} λ_i over the directions A that
// get power.
func MatchedMSE(lambda []float64, budget, noise float64) float64 {
	q, _ := MatchedAllocation(lambda, budget, noise)
	var root, off float64
	active := 0
	for i, l := range lambda {
		switch {
		case q[i] > 0:
			root += math.Sqrt(l)
			active++
		case l > 0:
			off += l
		}
	}
	if active == 0 {
		return off
	}
	return noise*root*root/(budget+float64(active)*noise) + off
}

// matchedGains returns the precoder's gains f_i = √(q_i/λ_i) for the
// eigenvalues lambda of a second moment and the allocation of
// MatchedAllocation, scaled so that Σ_i f_i² λ_i = 1 (the power rule sets
// the scale).
func matchedGains(lambda []float64, budget, noise float64) []float64 {
	q, _ := MatchedAllocation(lambda, budget, noise)
	var total float64
	for _, v := range q {
		total += v
	}
	f := make([]float64, len(lambda))
	for i, v := range q {
		if v > 0 {
			f[i] = math.Sqrt(v / (lambda[i] * total))
		}
	}
	return f
}

// matched is the outcome of the moments' transmission: every worker's
// rotation U_k and gains f (one shared pair under NOMA), the bits and
// blocks of each moment's code, and the samples the budget leaves.
type matched struct {
	rot          []*mat.Dense
	gain         [][]float64
	bits, blocks []int
	sent         int
}

// secondMoment returns (1/S) Σ_s x_s x_sᵀ of the rows of x.
func secondMoment(x *mat.Dense) *mat.SymDense {
	s, d := x.Dims()
	m := mat.NewSymDense(d, nil)
	m.SymRankK(m, 1/float64(s), x.T())
	return m
}

// eigenBasis returns the eigenvalues of the symmetric a (negative ones set
// to 0) and its eigenvectors as columns.
func eigenBasis(a mat.Symmetric) ([]float64, *mat.Dense, error) {
	var eig mat.EigenSym
	if !eig.Factorize(a, true) {
		return nil, nil, fmt.Errorf("eigendecomposition of the second moment failed")
	}
	vals := eig.Values(nil)
	for i, v := range vals {
		vals[i] = math.Max(v, 0)
	}
	u := mat.NewDense(a.SymmetricDim(), a.SymmetricDim(), nil)
	eig.VectorsTo(u)
	return vals, u, nil
}

// matchedPrecoders sends every worker's second moment over its budget of
// s rows (the samples, or their fluctuations on a centred link) with a
// dither drawn from a stream seeded from rng, and computes the precoders
// from the decoded moments (the package comment's steps). gains are the
// β_k (nil: all 1); meanBlocks are the blocks centring's means already
// took (nil without centring), which share the budget.
func (c Config) matchedPrecoders(rng *rand.Rand, rows []*mat.Dense, gains []float64, meanBlocks []int) (*matched, error) {
	k := len(rows)
	s, d := rows[0].Dims()
	dither := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
	out := &matched{rot: make([]*mat.Dense, k), gain: make([][]float64, k), bits: make([]int, k), blocks: make([]int, k)}
	gain := func(w int) float64 {
		if gains == nil {
			return 1
		}
		return gains[w]
	}
	// ν = N0/l on the combined signal and Π = β P/(g l): only their ratio
	// matters.
	nu := c.N0(d) / float64(c.Repetition)
	unit := c.Power / (c.InvGramMean() * float64(c.Repetition))
	decoded := make([]*mat.SymDense, k)
	total := 0
	for w, x := range rows {
		m := secondMoment(x)
		vals, _, err := eigenBasis(m)
		if err != nil {
			return nil, fmt.Errorf("worker %d: %w", w+1, err)
		}
		if low := slices.Min(vals); !(low > 0) || math.IsInf(slices.Max(vals), 0) {
			return nil, fmt.Errorf("worker %d: the second moment of its %d samples is singular or not finite (smallest eigenvalue %g): the matched precoder needs it positive definite (S > d samples not on a subspace)", w+1, s, low)
		}
		entries := make([]float64, 0, d*(d+1)/2)
		for i := range d {
			for j := i; j < d; j++ {
				entries = append(entries, m.At(i, j))
			}
		}
		low := slices.Min(vals)
		mhat, _, nbits, err := QuantizeMean(dither, entries, low*low)
		if err != nil {
			return nil, fmt.Errorf("worker %d: second moment: %w", w+1, err)
		}
		dec := mat.NewSymDense(d, nil)
		n := 0
		for i := range d {
			for j := i; j < d; j++ {
				dec.SetSym(i, j, mhat[n])
				n++
			}
		}
		decoded[w] = dec
		out.bits[w] = nbits
		out.blocks[w] = int(math.Ceil(float64(nbits) / c.BlockBits(d, gain(w))))
		total += out.blocks[w]
		if meanBlocks != nil {
			total += meanBlocks[w]
		}
	}
	if c.Access == NOMA {
		// One precoder for all: the average decoded moment, water-filled
		// for the sum of K workers aligned on the weakest (eq. (22.6)).
		avg := mat.NewSymDense(d, nil)
		weakest := math.Inf(1)
		for w, m := range decoded {
			avg.AddSym(avg, m)
			weakest = math.Min(weakest, gain(w))
		}
		avg.ScaleSym(1/float64(k), avg)
		vals, u, err := eigenBasis(avg)
		if err != nil {
			return nil, err
		}
		f := matchedGains(vals, float64(k)*weakest*unit, nu)
		for w := range k {
			out.rot[w], out.gain[w] = u, f
		}
	} else {
		for w, m := range decoded {
			vals, u, err := eigenBasis(m)
			if err != nil {
				return nil, fmt.Errorf("worker %d: %w", w+1, err)
			}
			out.rot[w], out.gain[w] = u, matchedGains(vals, gain(w)*unit, nu)
		}
	}
	if c.Access == OMA {
		out.sent = s - (total+k-1)/k
	} else {
		out.sent = s - total
	}
	if out.sent < 1 {
		budget := fmt.Sprintf("the K·S = %d·%d blocks of the OMA frame", k, s)
		if c.Access == NOMA {
			budget = fmt.Sprintf("the S = %d blocks of the NOMA link", s)
		}
		return nil, fmt.Errorf("%w: %d blocks for the side information (moments of %v bits, %.3g bits per block at %v dB and unit gain) out of %s",
			ErrMomentBudget, total, out.bits, c.BlockBits(d, 1), c.SNRdB, budget)
	}
	return out, nil
}

// precode returns the first n rows of every worker's samples in its
// precoder's coordinates, u_s = diag(f) Uᵀ θ_s.
func precode(samples []*mat.Dense, rot []*mat.Dense, gain [][]float64, n int) []*mat.Dense {
	out := make([]*mat.Dense, len(samples))
	for w, x := range samples {
		_, d := x.Dims()
		u := mat.NewDense(n, d, nil)
		u.Mul(x.Slice(0, n, 0, d), rot[w])
		for i := range n {
			row := u.RawRowView(i)
			for j := range row {
				row[j] *= gain[w][j]
			}
		}
		out[w] = u
	}
	return out
}

// Precoder returns F_k = diag(f) U_kᵀ of stream k (d×d), I on a link
// without the matched precoder.
func (r *Received) Precoder(k int) *mat.Dense {
	if r.Rotation == nil {
		return eye(r.D)
	}
	f := mat.NewDense(r.D, r.D, nil)
	f.Mul(mat.NewDiagDense(r.D, r.DirGain[k]), r.Rotation[k].T())
	return f
}

// Decoder returns E_k^† (d×m_r), the pseudo-inverse of stream k's encoder:
// Bᵀ/(l√P_k), or U_k diag(f⁺) Bᵀ/(l√P_k) with the matched precoder, f⁺_i
// = 1/f_i where f_i > 0 and 0 on the directions sent without power.
func (r *Received) Decoder(k int) *mat.Dense {
	c := 1 / (float64(r.L) * math.Sqrt(r.Pk[k]))
	dec := mat.NewDense(r.D, r.Mr, nil)
	if r.Rotation == nil {
		dec.Scale(c, r.Basis().T())
		return dec
	}
	inv := make([]float64, r.D)
	for i, f := range r.DirGain[k] {
		if f > 0 {
			inv[i] = c / f
		}
	}
	var ud mat.Dense
	ud.Mul(r.Rotation[k], mat.NewDiagDense(r.D, inv))
	dec.Mul(&ud, r.Basis().T())
	return dec
}

// DecodedNoise returns the covariance of E_k^† n_k, the noise of the
// decoded signals of stream k: (N0/(l P_k)) I, or
// (N0/(l P_k)) U_k diag(f⁺)² U_kᵀ with the matched precoder.
func (r *Received) DecodedNoise(k int) *mat.SymDense {
	c := r.N0 / (float64(r.L) * r.Pk[k])
	out := mat.NewSymDense(r.D, nil)
	if r.Rotation == nil {
		for i := range r.D {
			out.SetSym(i, i, c)
		}
		return out
	}
	for i, f := range r.DirGain[k] {
		if f > 0 {
			out.SymRankOne(out, c/(f*f), mat.NewVecDense(r.D, mat.Col(nil, i, r.Rotation[k])))
		}
	}
	return out
}

// FullRank reports whether every stream's encoder has rank d: false when
// the matched precoder sends some direction without power.
func (r *Received) FullRank() bool {
	for _, f := range r.DirGain {
		for _, v := range f {
			if !(v > 0) {
				return false
			}
		}
	}
	return true
}

func eye(d int) *mat.Dense {
	m := mat.NewDense(d, d, nil)
	for i := range d {
		m.Set(i, i, 1)
	}
	return m
}
