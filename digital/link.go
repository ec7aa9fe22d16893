// Package digital is the ideal digital baseline of wireless CMC: each
// worker compresses its S samples and sends the bits over a
// capacity-achieving link that uses the same real channel uses and the
// same energy as the analog scheme it is compared with; the server decodes
// without error and combines the decoded samples.
//
// Budget. The analog scheme spends one block of m_r = l·d real channel
// uses and energy P per sample and worker (OMA), or one block shared by
// all K workers (NOMA). The digital link gets the Shannon rate of those
// blocks (Capacity: the zero-forcing transmitter, an isotropic one, or
// water-filling), R bits per sample; for the AWGN block
//
//	OMA:  R = (m_r/2) log2(1 + SNR),   NOMA:  R = (m_r/(2K)) log2(1 + K·SNR),
//
// SNR = P/(m_r N0) per real channel use (docs/MATH.md note 3). Under NOMA,
// R is the symmetric point C_sum/K of the K-user Gaussian multiple-access
// channel, which is also what each worker gets from 1/K of the uses with
// all of its energy (time sharing reaches the equal-power sum capacity);
// with unequal large-scale gains it is the largest common rate, set by the
// weakest workers.
//
// Compression. The bits are split over the principal directions of the
// worker's empirical covariance by reverse water-filling (Source.WaterFill)
// and spent by a Quantizer: TestChannel (the rate–distortion bound),
// AdditiveNoise (same rate, white unbiased error) or Uniform (a practical
// scalar quantiser). Each worker also sends its mean and covariance once
// (side information, d + d(d+1)/2 reals), free unless Link.SideInfoBits
// charges it.
//
// Practical options (practical.go). Link.GapDB, Link.BlockLength and
// Link.ErrorProb turn the ideal rate into that of a code an SNR gap from
// capacity with codewords of finite length (the normal approximation); the
// channel's imperfect CSI (free or from charged pilots, with ZeroForcing)
// turns the residual interference of zero-forcing on the estimate into
// noise, and charged pilots take their channel uses from the samples'.
// Their zero values are the ideal link, bit for bit.
//
// Combining. The decoded samples are noiseless-CMC input: GCMC applies
// Scott's weights to them. Budget.Received wraps them as a channel.Received
// for any consensus scheme; with AdditiveNoise it is an analog stream at a
// known noise level, on which WGCMC and WVCMC are defined.
//
// The derivations, the accounting choices and what "ideal" means are in
// docs/BEYOND.md (section "Ideal digital baseline").
package digital

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/consensus"
	"github.com/wcmc-project/wcmc/internal/seed"
)

// Link is a digital uplink over the channel of an analog scheme.
type Link struct {
	// Channel is the analog scheme's uplink: access, fading, m_r = l·d,
	// power P and SNR. Physical is ignored.
	Channel channel.Config
	// Capacity is the transmitter whose rate the link gets (zero value:
	// the analog scheme's zero-forcing precoder).
	Capacity Capacity
	// Quantizer compresses each worker's block; nil is an error.
	Quantizer Quantizer
	// SideInfoBits is the cost of one real number of side information
	// (each worker's mean and covariance, d + d(d+1)/2 reals, sent once):
	// 0 sends it free, as an ideal bound; b > 0 takes b·(d + d(d+1)/2)/S
	// bits from every sample's budget.
	SideInfoBits float64
	// GapDB is the SNR gap Γ of a practical code and modulation, in dB:
	// every rate is that of capacity at SNR/Γ, e.g. (n_r/2) log2(1 +
	// SNR_r/Γ) per AWGN block. 0: capacity.
	GapDB float64
	// BlockLength is n, the real channel uses of one codeword, and
	// ErrorProb its error probability ε: the rate per use is the normal
	// approximation (NormalApprox) at the blocks' SNR (over Γ); needs zf on
	// fading channels and n at most the uses of the block coded. 0: codes
	// of unbounded length (ErrorProb then 0).
	BlockLength int
	ErrorProb   float64
}

// Budget is the accounting of one Send.
type Budget struct {
	Access   channel.Access
	Capacity Capacity
	// Uses is the number of real channel uses per sample and worker: n_r
	// under OMA, n_r/K under NOMA, with n_r = m_r (2⌈m_r/2⌉ on the complex
	// channel).
	Uses float64
	// Gains are the workers' large-scale gains β_k (all 1 unless
	// Channel.Gains is set).
	Gains []float64
	// SideInfo is the number of reals of side information per worker.
	SideInfo int
	// Workers holds each worker's accounting.
	Workers []WorkerBudget
	// Pilots is how the charged pilots split the blocks' channel uses
	// (channel.Config.Pilots); the rates count only the uses left to the
	// samples. nil without charged pilots.
	Pilots *channel.PilotBudget
}

// WorkerBudget is one worker's accounting, per sample. Directions are the
// principal directions of its empirical covariance, by decreasing variance.
type WorkerBudget struct {
	// Capacity is the bits per sample its link carries.
	Capacity float64
	// Rate is what is left for the samples after side information.
	Rate float64
	// Variances are the λ_i coded.
	Variances []float64
	// Level is the reverse water-filling level γ at Rate.
	Level float64
	// Allocated are the water-filling bits b_i = ½ log2(λ_i/min(λ_i, γ)).
	Allocated []float64
	// Spent are the bits the quantiser spent on each direction.
	Spent []float64
	// Bound is D(Rate) = Σ_i min(λ_i, γ), the least mean squared error at
	// Rate for a Gaussian source with these variances.
	Bound float64
	// Distortion is the achieved (1/S) Σ_s ‖x_s − x̂_s‖².
	Distortion float64
	// White is the noise variance N of an AdditiveNoise stream (0 for
	// other quantisers).
	White float64
}

// Validate reports a link that cannot be used. The digital link models
// the paper's channel, the complex baseband channel (with ZeroForcing),
// per-worker large-scale gains, block fading and, with ZeroForcing, the
// channel estimates of imperfect CSI (free, or from charged pilots); it
// refuses the channel options it does not model rather than ignore them.
func (l Link) Validate() error {
	c := l.Channel
	if err := c.Validate(); err != nil {
		return fmt.Errorf("digital link: %w", err)
	}
	switch {
	case l.Quantizer == nil:
		return fmt.Errorf("digital link: no quantizer")
	case l.Capacity < ZeroForcing || l.Capacity > WaterFilling:
		return fmt.Errorf("digital link: unknown capacity %d", int(l.Capacity))
	case !(l.SideInfoBits >= 0) || math.IsInf(l.SideInfoBits, 0):
		return fmt.Errorf("digital link: side-information cost %v bits per real: must be finite and ≥ 0", l.SideInfoBits)
	case c.Fading == channel.Rician:
		return fmt.Errorf("digital link: rician fading is not modelled (zf has no scalar E[(HHᴴ)^{-1}] there)")
	case c.Control != channel.PowerControl{}:
		return fmt.Errorf("digital link: power control is not modelled (the capacity sets its own power law); leave it unset for the digital link")
	case c.Complex && c.Fading != channel.Flat && l.Capacity != ZeroForcing:
		return fmt.Errorf("digital link: %v capacity on the complex channel is not implemented; use zf", l.Capacity)
	case l.Capacity == WaterFilling && c.Access == channel.NOMA && c.Fading != channel.Flat:
		return fmt.Errorf("digital link: waterfilling under NOMA with fading is not implemented (the fading MAC's sum capacity with channel state); use zf or isotropic")
	}
	return l.validatePractical()
}

// Send compresses every worker's samples (K matrices S×d), sends them over
// the link and returns what the server decodes, one S×d matrix per worker
// under OMA and NOMA alike (the server decodes every worker's bits). The
// channel draws and the quantisers' randomness come from two streams split
// off rng, so that the quantisation noise does not depend on Capacity.
func (l Link) Send(rng *rand.Rand, samples []*mat.Dense) ([]*mat.Dense, Budget, error) {
	if err := l.Validate(); err != nil {
		return nil, Budget{}, err
	}
	k := len(samples)
	if k == 0 {
		return nil, Budget{}, fmt.Errorf("digital link: no workers")
	}
	s, d := samples[0].Dims()
	for i, m := range samples {
		if r, c := m.Dims(); r != s || c != d {
			return nil, Budget{}, fmt.Errorf("digital link: worker %d sent %d×%d samples, worker 1 sent %d×%d", i+1, r, c, s, d)
		}
	}
	if n0 := l.Channel.N0(d); !(n0 > 0) || math.IsInf(n0, 0) {
		return nil, Budget{}, fmt.Errorf("digital link: SNR = %v dB with P = %v gives N0 = %v, outside floating point", l.Channel.SNRdB, l.Channel.Power, n0)
	}
	chanRng, quantRng := seed.Split(rng), seed.Split(rng)
	gains, err := largeScale(chanRng, l.Channel, k)
	if err != nil {
		return nil, Budget{}, fmt.Errorf("digital link: %w", err)
	}
	if l.Capacity == Isotropic && l.Channel.Access == channel.NOMA && l.Channel.Fading != channel.Flat && slices.Min(gains) != slices.Max(gains) {
		return nil, Budget{}, fmt.Errorf("digital link: isotropic capacity under NOMA with unequal large-scale gains is not implemented (its common rate needs every subset of workers); use zf")
	}
	b := Budget{Access: l.Channel.Access, Capacity: l.Capacity, Uses: float64(realDims(l.Channel, d)), Gains: gains, SideInfo: d + d*(d+1)/2, Workers: make([]WorkerBudget, k)}
	if l.Channel.Pilots.On {
		pb, err := l.Channel.SplitBudget(k, s, d)
		if err != nil {
			return nil, Budget{}, fmt.Errorf("digital link: %w", err)
		}
		b.Pilots = &pb
	}
	if n := l.BlockLength; n > 0 {
		blocks := s
		if b.Pilots != nil {
			blocks = b.Pilots.Samples
		}
		if uses := blocks * realDims(l.Channel, d); n > uses {
			return nil, Budget{}, fmt.Errorf("digital link: block length n = %d exceeds the %d real channel uses of the %d blocks coded", n, uses, blocks)
		}
	}
	caps, err := bitsPerSample(chanRng, l.Channel, l.Capacity, l.practical(), gains, k, s, d)
	if err != nil {
		return nil, Budget{}, fmt.Errorf("digital link: %w", err)
	}
	if b.Pilots != nil {
		// The pilots leave S' of the S blocks to the samples' bits.
		for i := range caps {
			caps[i] *= float64(b.Pilots.Samples) / float64(s)
		}
	}
	if b.Access == channel.NOMA {
		b.Uses /= float64(k)
	}
	side := l.SideInfoBits * float64(b.SideInfo) / float64(s)
	decoded := make([]*mat.Dense, k)
	for w, x := range samples {
		src, err := NewSource(x)
		if err != nil {
			return nil, Budget{}, fmt.Errorf("digital link: worker %d: %w", w+1, err)
		}
		rate := caps[w] - side
		if rate < 0 {
			return nil, Budget{}, fmt.Errorf("digital link: worker %d: side information costs %.3g bits per sample, more than the %.3g the link carries (fewer bits per real or more samples)", w+1, side, caps[w])
		}
		q, err := l.Quantizer.Quantize(quantRng, src, rate)
		if err != nil {
			return nil, Budget{}, fmt.Errorf("digital link: worker %d: %w", w+1, err)
		}
		alloc := src.WaterFill(rate)
		decoded[w] = q.X
		b.Workers[w] = WorkerBudget{
			Capacity: caps[w], Rate: rate, Variances: src.Var,
			Level: alloc.Level, Allocated: alloc.Bits, Spent: q.Bits, Bound: alloc.Bound(),
			Distortion: meanSquaredError(x, q.X), White: q.White,
		}
	}
	return decoded, b, nil
}

// Received wraps decoded samples as what a consensus scheme takes (OMA,
// one stream per worker, m_r = d, l = 1). When every worker's stream is
// x̂_k = x_k + N(0, N_k I) (AdditiveNoise), it is the analog stream
// y_k = √P_k x_k + n_k with P_k = 1/N_k and N0 = 1, y_k = x̂_k/√N_k, on
// which WGCMC and WVCMC are defined; otherwise it is the noiseless
// reception of the decoded samples (channel.Ideal), for GCMC. Power is 0:
// the stream is not a transmission.
func (b Budget) Received(decoded []*mat.Dense) (*channel.Received, error) {
	if len(decoded) != len(b.Workers) {
		return nil, fmt.Errorf("%d decoded blocks for a budget of %d workers", len(decoded), len(b.Workers))
	}
	rx := channel.Ideal(decoded)
	for _, w := range b.Workers {
		if !(w.White > 0) {
			return rx, nil
		}
	}
	rx.N0 = 1
	for k, w := range b.Workers {
		rx.Pk[k] = 1 / w.White
		rx.Y[k].Scale(math.Sqrt(rx.Pk[k]), rx.Y[k])
	}
	return rx, nil
}

// GCMC is digital GCMC: Scott's weights (eq: w GCMC) estimated from the
// decoded samples and applied to them, as classical CMC does with exact
// samples (consensus.Noiseless).
func GCMC(decoded []*mat.Dense) (*mat.Dense, error) {
	return consensus.Noiseless(decoded)
}

// meanSquaredError is (1/S) Σ_s ‖x_s − y_s‖².
func meanSquaredError(x, y *mat.Dense) float64 {
	var diff mat.Dense
	diff.Sub(x, y)
	s, _ := x.Dims()
	n := mat.Norm(&diff, 2)
	return n * n / float64(s)
}
