package channel

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Mean-centred transmission (Config.Centre, docs/BEYOND.md note 17).
//
// Worker k sends the fluctuations θ_s − m_k of its samples about their mean
// m_k, so that its power scale P_k = P S'/(g l Σ_s ‖θ_s − m_k‖²) is set by
// the spread of its subposterior rather than by ‖m_k‖², and sends m_k itself
// digitally, in blocks of its own, before the samples:
//
//  1. precision: with v_k the smallest marginal variance of its samples
//     (unbiased, over all S rows), the step is Δ_k = 2^{e_k},
//     e_k = ⌊½ log2(12 ε v_k)⌋, ε = CentreMeanErr, so that the error variance
//     Δ_k²/12 lies in (ε v_k/4, ε v_k];
//  2. code: subtractive dither u ~ U(−Δ_k/2, Δ_k/2)^d shared with the
//     server, q_i = round((m_i + u_i)/Δ_k), decoded m̂_i = q_i Δ_k − u_i, so
//     m̂_k − m_k is uniform on [−Δ_k/2, Δ_k/2]^d whatever m_k; e_k and the
//     q_i are sent with the Elias gamma code of their zigzag index, which
//     needs no range known in advance: b_k bits in all;
//  3. rate: a block carries c_k = (n_r/2) log2(1 + β_k SNR_r/g) bits, the
//     Shannon rate of the worker's zero-forcing link (the digital
//     baselines' ZeroForcing capacity, docs/BEYOND.md eq. (16.3)), so the
//     mean takes n_k = ⌈b_k/c_k⌉ blocks, each with the samples' energy P;
//  4. budget: the means are sent one worker after the other (orthogonal
//     under NOMA too: the server needs each m̂_k) out of the blocks the S
//     samples had. Under OMA the K·S blocks of the frame lose Σ_k n_k and
//     every worker sends S' = S − ⌈Σ_k n_k/K⌉ samples (fewer than K blocks
//     idle); under NOMA S' = S − Σ_k n_k.
//
// The server adds the mean back (package consensus): the combined mean
// Σ_k A_k m̂_k with each scheme's consensus weights A_k.

// CentreMeanErr is ε: each worker sends its mean with an error variance per
// coordinate of at most ε times the smallest marginal variance of its
// samples. After combining, the global mean's error variance stays below ε
// times the global posterior's (each is about 1/K of the workers').
const CentreMeanErr = 0.01

// ErrMeanBudget is wrapped by the error of a centred transmission whose
// means take every block of the budget.
var ErrMeanBudget = errors.New("centring: the workers' means take every block of the budget")

// centred is the outcome of the means' transmission: the centres m_k, what
// the server decoded, and the blocks spent.
type centred struct {
	centre, mean [][]float64
	meanVar      []float64
	bits, blocks []int
	budget, sent int
}

// eliasGammaLen is the length 2⌊log2 n⌋ + 1 of the Elias gamma code of
// n ≥ 1.
func eliasGammaLen(n uint64) int { return 2*(bits.Len64(n)-1) + 1 }

// IntBits is the length of the code of a signed integer q: the Elias gamma
// code of its zigzag index z + 1, z = 2q for q ≥ 0 and −2q − 1 for q < 0.
func IntBits(q int64) int {
	z := uint64(q<<1) ^ uint64(q>>63)
	return eliasGammaLen(z + 1)
}

// QuantizeMean codes a worker's mean m (its samples' smallest marginal
// variance v) as steps 1–2 of the centring above, with its dither drawn from
// rng: it returns the decoded m̂, the step Δ = 2^e and the code's length in
// bits, IntBits(e) + Σ_i IntBits(q_i).
func QuantizeMean(rng *rand.Rand, m []float64, v float64) (mhat []float64, step float64, nbits int, err error) {
	if !(v > 0) || math.IsInf(v, 0) {
		return nil, 0, 0, fmt.Errorf("smallest marginal variance %v of the samples: must be positive and finite to set the mean's precision", v)
	}
	e := math.Floor(0.5 * math.Log2(12*CentreMeanErr*v))
	step = math.Exp2(e)
	nbits = IntBits(int64(e))
	mhat = make([]float64, len(m))
	for i, x := range m {
		u := (rng.Float64() - 0.5) * step
		q := math.Round((x + u) / step)
		if math.Abs(q) > 1<<52 {
			return nil, 0, 0, fmt.Errorf("mean %g is 2^52 steps of %g away from 0: too far for its precision", x, step)
		}
		mhat[i] = q*step - u
		nbits += IntBits(int64(q))
	}
	return mhat, step, nbits, nil
}

// BlockBits is c_k = (n_r/2) log2(1 + β SNR_r/g), the bits per block that
// a worker of large-scale gain β sends digitally over its zero-forcing link
// with parameter dimension d: n_r real dimensions per block (m_r, or
// 2⌈m_r/2⌉ on the complex channel), SNR_r = P/(n_r N0), g = InvGramMean
// (with N_r > 1 receive antennas, the combined channel's g for a worker
// alone in its block, CombinedInvGram).
func (c Config) BlockBits(d int, gain float64) float64 {
	mr, _ := c.Dims(d)
	nr := mr
	if c.Complex {
		mc, _ := c.complexDims(mr)
		nr = 2 * mc
	}
	snr := c.Power / (float64(nr) * c.N0(d))
	return float64(nr) / 2 * math.Log2(1+gain*snr/c.CombinedInvGram(d, 1))
}

// centre computes each worker's centre m_k (the mean of its rows) and
// sends it as the package comment's steps 1–4, with the dither drawn from
// a stream seeded from rng and gains β_k (nil: all 1).
func (c Config) centre(rng *rand.Rand, samples []*mat.Dense, gains []float64) (*centred, error) {
	k := len(samples)
	s, d := samples[0].Dims()
	if s < 2 {
		return nil, fmt.Errorf("centring needs S ≥ 2 samples per worker to set the mean's precision, got %d", s)
	}
	dither := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
	out := &centred{budget: s, centre: make([][]float64, k), mean: make([][]float64, k),
		meanVar: make([]float64, k), bits: make([]int, k), blocks: make([]int, k)}
	total := 0
	for w, x := range samples {
		m, v := meanMinVar(x)
		mhat, step, nbits, err := QuantizeMean(dither, m, v)
		if err != nil {
			return nil, fmt.Errorf("worker %d: %w", w+1, err)
		}
		gain := 1.0
		if gains != nil {
			gain = gains[w]
		}
		out.centre[w], out.mean[w], out.meanVar[w], out.bits[w] = m, mhat, step*step/12, nbits
		out.blocks[w] = int(math.Ceil(float64(nbits) / c.BlockBits(d, gain)))
		total += out.blocks[w]
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
		return nil, fmt.Errorf("%w: %d blocks for the means (%v bits, %.3g bits per block at %v dB and unit gain) out of %s",
			ErrMeanBudget, total, out.bits, c.BlockBits(d, 1), c.SNRdB, budget)
	}
	return out, nil
}

// meanMinVar returns the mean of the rows of x and the smallest unbiased
// variance of its columns.
func meanMinVar(x *mat.Dense) (mean []float64, v float64) {
	s, d := x.Dims()
	mean = make([]float64, d)
	for i := range s {
		for j, y := range x.RawRowView(i) {
			mean[j] += y
		}
	}
	for j := range mean {
		mean[j] /= float64(s)
	}
	v = math.Inf(1)
	for j := range d {
		var ss float64
		for i := range s {
			t := x.At(i, j) - mean[j]
			ss += t * t
		}
		v = math.Min(v, ss/float64(s-1))
	}
	return mean, v
}

// fluctuations returns the first n rows of each worker's samples minus its
// centre.
func fluctuations(samples []*mat.Dense, centre [][]float64, n int) []*mat.Dense {
	out := make([]*mat.Dense, len(samples))
	for w, x := range samples {
		_, d := x.Dims()
		f := mat.NewDense(n, d, nil)
		for i := range n {
			dst := f.RawRowView(i)
			for j, y := range x.RawRowView(i) {
				dst[j] = y - centre[w][j]
			}
		}
		out[w] = f
	}
	return out
}

// MeanUses returns the blocks spent on the means, Σ_k MeanBlocks[k], and
// those left idle by OMA's equal split of the rest (0 under NOMA and
// without centring): the budget's blocks are the samples' plus these,
// K·Budget = K·S + used + idle under OMA, Budget = S + used under NOMA.
func (r *Received) MeanUses() (used, idle int) {
	for _, n := range r.MeanBlocks {
		used += n
	}
	_, idle = r.SideUses()
	return used, idle
}

// SideUses returns the blocks spent on side information, the means'
// (centring) and the second moments' (the matched precoder), and those
// left idle by OMA's equal split of the rest (0 under NOMA and without
// side information): K·Budget = K·S + used + idle under OMA,
// Budget = S + used under NOMA.
func (r *Received) SideUses() (used, idle int) {
	for _, n := range r.MeanBlocks {
		used += n
	}
	for _, n := range r.MomentBlocks {
		used += n
	}
	if r.Access == OMA && (r.MeanBlocks != nil || r.MomentBlocks != nil) {
		idle = r.K*r.Budget - r.K*r.S - used
	}
	return used, idle
}
