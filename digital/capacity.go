package digital

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
)

// Capacity selects the transmitter whose Shannon rate the digital link
// gets over the analog scheme's channel uses and energy. Under flat fading
// (H = I) all three give (n_r/2) log2(1 + SNR) bits per block.
type Capacity int

const (
	// ZeroForcing is the analog scheme's own transmitter: x = H^† t with
	// a Gaussian codeword t ~ N(0, σ² I_{m_r}) and the long-term power rule
	// E‖x‖² = σ² m_r g = P (g·I = E[(HHᵀ)^{-1}]), so every block is an AWGN
	// channel of per-use SNR σ²/N0 = SNR/g:
	//
	//	OMA:  (m_r/2) log2(1 + SNR/g) bits per block,
	//
	// times β_k inside the logarithm for a worker of large-scale gain β_k,
	// and the same with n_r = 2⌈m_r/2⌉ real dimensions and the complex g on
	// the complex channel. It needs channel state at the worker, as the
	// analog precoder does, and its rate does not depend on the draw of H.
	ZeroForcing Capacity = iota
	// Isotropic needs no channel state at the worker: x ~ N(0, (P/m_t) I)
	// in every block (power P per block), and the block carries
	//
	//	OMA:  ½ log2 det(I + (β_k P/(m_t N0)) H Hᵀ) bits
	//
	// for the H drawn in that block. Real channel only.
	Isotropic
	// WaterFilling is the capacity of the S drawn blocks with channel state
	// at the worker and the long-term constraint: the energy S·P is
	// water-filled over the S·m_r eigenmodes (gains β_k g_j, g_j the
	// eigenvalues of H_s H_sᵀ): p_j = max(0, ν − N0/(β_k g_j)), and the
	// blocks carry Σ_j ½ log2(1 + p_j β_k g_j/N0) bits. It bounds every coded
	// scheme on these channels. OMA and the real channel only: the sum
	// capacity of the fading MAC with channel state needs iterative
	// water-filling, which is not implemented.
	WaterFilling
)

func (c Capacity) String() string {
	switch c {
	case Isotropic:
		return "isotropic"
	case WaterFilling:
		return "waterfilling"
	}
	return "zf"
}

// ParseCapacity reads "zf", "isotropic" or "waterfilling".
func ParseCapacity(s string) (Capacity, error) {
	for _, c := range []Capacity{ZeroForcing, Isotropic, WaterFilling} {
		if strings.EqualFold(s, c.String()) {
			return c, nil
		}
	}
	return 0, fmt.Errorf("unknown digital capacity %q (want zf, isotropic or waterfilling)", s)
}

// bitsPerSample returns, for each of k workers sending s samples of
// dimension d with large-scale gains β_k, the bits per sample its link
// carries: the bits of its s blocks divided by s. A block spans n_r real
// dimensions (m_r; 2⌈m_r/2⌉ on the complex channel) and worker k's
// per-dimension SNR is β_k·SNR_r, SNR_r = P/(n_r N0). Under NOMA the k
// workers share each block, a k-user Gaussian multiple-access channel,
// and each gets the largest common rate in its capacity region: for AWGN
// blocks (ZeroForcing) the tightest of its constraints on the n weakest
// workers,
//
//	R = min_n (n_r/(2n)) log2(1 + (SNR_r/g) Σ_{n weakest} β_k),
//
// which is C_sum/k for equal gains; Isotropic (equal gains only) gives
// C_sum/k with C_sum = ½ log2 det(I + (βP/(m_t N0)) Σ_k H_k H_kᵀ) per block.
//
// Channels are drawn from rng (Rayleigh fading with Isotropic or
// WaterFilling only): m_r×m_t matrices of N(0, 1) entries, worker by worker
// and block by block under OMA, block by block and worker by worker under
// NOMA, as channel.Transmit draws them; with block fading each is held for
// T_c blocks.
//
// The practical options prac (an SNR gap Γ, a finite block length) replace
// every AWGN block's (n_r/2) log2(1 + x) by n_r·NormalApprox(x/Γ, n, ε) and
// scale the noise of Isotropic and WaterFilling by Γ; under imperfect CSI
// (ZeroForcing only) β_k is the effective gain of effectiveGains.
func bitsPerSample(rng *rand.Rand, cfg channel.Config, mode Capacity, prac practical, gains []float64, k, s, d int) ([]float64, error) {
	mr, mt := cfg.Dims(d)
	n0 := cfg.N0(d)
	nr := realDims(cfg, d)
	snr := cfg.Power / (float64(nr) * n0)
	out := make([]float64, k)
	if cfg.Fading == channel.Flat || mode == ZeroForcing {
		// Every block is an AWGN channel of per-dimension SNR β_k SNR_r/g
		// (g = 1 for H = I, where the three transmitters coincide); under
		// imperfect CSI β_k becomes the effective gain with the residual
		// interference as noise.
		if eff := effectiveGains(cfg, gains, d); eff != nil {
			gains = eff
		}
		awgn := func(sumGain float64) float64 {
			if !prac.ideal() {
				return float64(nr) * prac.perUse(sumGain*snr/cfg.InvGramMean())
			}
			return float64(nr) / 2 * math.Log2(1+sumGain*snr/cfg.InvGramMean())
		}
		if cfg.Access == channel.OMA {
			for i, b := range gains {
				out[i] = awgn(b)
			}
			return out, nil
		}
		weakest := append([]float64(nil), gains...)
		sort.Float64s(weakest)
		r, sum := math.Inf(1), 0.0
		for n, b := range weakest {
			sum += b
			r = math.Min(r, awgn(sum)/float64(n+1))
		}
		for i := range out {
			out[i] = r
		}
		return out, nil
	}
	h := mat.NewDense(mr, mt, nil)
	draw := func() *mat.Dense {
		raw := h.RawMatrix().Data
		for i := range raw {
			raw[i] = rng.NormFloat64()
		}
		return h
	}
	// The gap Γ scales the noise; a channel holds for T_c blocks (block
	// fading), drawn at the first block of each interval.
	noise := n0 * prac.gap
	rho := cfg.Power / (float64(mt) * noise)
	tc := max(1, cfg.Coherence)
	switch {
	case mode == WaterFilling:
		ratios := make([]float64, 0, s*mr)
		var gram mat.SymDense
		var eig mat.EigenSym
		var vals []float64
		for w := range k {
			ratios = ratios[:0]
			for b := range s {
				if b%tc == 0 {
					gram.SymOuterK(1, draw())
					if !eig.Factorize(&gram, false) {
						return nil, fmt.Errorf("eigendecomposition of H Hᵀ failed")
					}
					vals = eig.Values(vals)
				}
				for _, g := range vals {
					if g > 0 {
						ratios = append(ratios, noise/(gains[w]*g))
					}
				}
			}
			out[w] = forwardWaterFill(ratios, float64(s)*cfg.Power) / float64(s)
		}
	case cfg.Access == channel.OMA:
		gram := mat.NewSymDense(mr, nil)
		for w := range k {
			var bits, held float64
			for b := range s {
				if b%tc == 0 {
					gram.SymOuterK(1, draw())
					var err error
					if held, err = logDetBits(gram, gains[w]*rho); err != nil {
						return nil, err
					}
				}
				bits += held
			}
			out[w] = bits / float64(s)
		}
	default: // Isotropic under NOMA, equal gains (Link.Validate)
		gram := mat.NewSymDense(mr, nil)
		ones := make([]mat.SymDense, k)
		var bits float64
		for b := range s {
			gram.Zero()
			for w := range k {
				if b%tc == 0 {
					ones[w].SymOuterK(1, draw())
				}
				gram.AddSym(gram, &ones[w])
			}
			b, err := logDetBits(gram, gains[0]*rho)
			if err != nil {
				return nil, err
			}
			bits += b
		}
		for i := range out {
			out[i] = bits / float64(s) / float64(k)
		}
	}
	return out, nil
}

// realDims is the number of real dimensions n_r of one block: m_r, or
// 2⌈m_r/2⌉ on the complex channel, whose ⌈m_r/2⌉ uses carry the m_r real
// symbols on I and Q (the zero pad of an odd m_r included).
func realDims(cfg channel.Config, d int) int {
	mr, _ := cfg.Dims(d)
	if cfg.Complex {
		return 2 * ((mr + 1) / 2)
	}
	return mr
}

// largeScale returns β_k of k workers: 1 each when cfg.Gains is unset,
// 10^{offset/10} for explicit offsets, and a draw of the distances from rng
// under the path-loss model (pass a realised list, channel.LargeScale.Realize,
// to share the analog link's geometry).
func largeScale(rng *rand.Rand, cfg channel.Config, k int) ([]float64, error) {
	g, err := cfg.Gains.Realize(rng, k)
	if err != nil {
		return nil, err
	}
	out := make([]float64, k)
	for i := range out {
		out[i] = 1
	}
	if g.OffsetDB == nil {
		return out, nil
	}
	if len(g.OffsetDB) != k {
		return nil, fmt.Errorf("per-worker SNR offsets: %d entries for K = %d workers", len(g.OffsetDB), k)
	}
	for i, o := range g.OffsetDB {
		out[i] = math.Pow(10, o/10)
	}
	return out, nil
}

// logDetBits is ½ log2 det(I + ρ G) for a Gram matrix G.
func logDetBits(gram *mat.SymDense, rho float64) (float64, error) {
	n := gram.SymmetricDim()
	a := mat.NewSymDense(n, nil)
	a.ScaleSym(rho, gram)
	for i := range n {
		a.SetSym(i, i, a.At(i, i)+1)
	}
	var chol mat.Cholesky
	if !chol.Factorize(a) {
		return 0, fmt.Errorf("I + ρ H Hᵀ is not positive definite (ρ = %g)", rho)
	}
	return chol.LogDet() / (2 * math.Ln2), nil
}
