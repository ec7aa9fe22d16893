package digital

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/wcmc-project/wcmc/channel"
)

// A practical digital link (docs/BEYOND.md, "A practical digital
// baseline"): a code and modulation an SNR gap Γ from capacity, codewords
// of finite length n at a stated error probability ε (the normal
// approximation), and the workers' channel estimates of imperfect CSI,
// from pilots charged to the budget. Their zero values are the ideal link.

// log2e is log2(e), which turns nats into bits.
var log2e = math.Log2E

// Dispersion is the channel dispersion of the real AWGN channel at SNR x
// per real use, in bits² (Polyanskiy, Poor and Verdú 2010):
//
//	V(x) = x (x + 2) / (2 (x + 1)²) · log2²(e),
//
// the variance of the information density of an equal-power input.
func Dispersion(x float64) float64 {
	return x * (x + 2) / (2 * (x + 1) * (x + 1)) * log2e * log2e
}

// NormalApprox is the normal approximation of the largest rate, in bits
// per real channel use, of a code of n uses with codeword error
// probability ε on the real AWGN channel at SNR x:
//
//	R ≈ C(x) − √(V(x)/n) Q⁻¹(ε) + log2(n)/(2n),  C(x) = ½ log2(1 + x),
//
// clamped to [0, C(x)] (at low SNR the log term alone would exceed
// capacity). n = 0 means n → ∞: C(x).
func NormalApprox(x float64, n int, eps float64) float64 {
	c := 0.5 * math.Log2(1+x)
	if n == 0 {
		return c
	}
	nf := float64(n)
	q := distuv.UnitNormal.Quantile(1 - eps)
	r := c - math.Sqrt(Dispersion(x)/nf)*q + math.Log2(nf)/(2*nf)
	return math.Max(0, math.Min(c, r))
}

// practical holds the options of a Link that take it away from the ideal
// one: the SNR gap Γ (linear), the codeword length n (0: ∞) and its error
// probability ε.
type practical struct {
	gap float64
	n   int
	eps float64
}

func (l Link) practical() practical {
	return practical{gap: math.Pow(10, l.GapDB/10), n: l.BlockLength, eps: l.ErrorProb}
}

// ideal reports whether p is the ideal link: capacity, no gap.
func (p practical) ideal() bool { return p.gap == 1 && p.n == 0 }

// perUse returns the bits per real channel use at SNR x per use:
// NormalApprox(x/Γ, n, ε).
func (p practical) perUse(x float64) float64 {
	return NormalApprox(x/p.gap, p.n, p.eps)
}

// validatePractical checks the practical options of l against its channel
// and capacity.
func (l Link) validatePractical() error {
	c := l.Channel
	imperfect := c.CSI != channel.CSI{} || c.Pilots.On
	switch {
	case !(l.GapDB >= 0) || math.IsInf(l.GapDB, 0):
		return fmt.Errorf("digital link: SNR gap %v dB: must be finite and ≥ 0 (0: capacity)", l.GapDB)
	case l.BlockLength < 0:
		return fmt.Errorf("digital link: block length %d: must be ≥ 0 (0: codes of unbounded length)", l.BlockLength)
	case l.BlockLength == 0 && l.ErrorProb != 0:
		return fmt.Errorf("digital link: error probability %v given without a block length", l.ErrorProb)
	case l.BlockLength > 0 && !(l.ErrorProb > 0 && l.ErrorProb < 0.5):
		return fmt.Errorf("digital link: error probability ε = %v with block length %d: must be in (0, 0.5)", l.ErrorProb, l.BlockLength)
	case l.BlockLength > 0 && c.Fading != channel.Flat && l.Capacity != ZeroForcing:
		return fmt.Errorf("digital link: finite block length with %v capacity on a fading channel is not modelled (the normal approximation is that of the AWGN blocks of zf); use zf", l.Capacity)
	case imperfect && l.Capacity != ZeroForcing:
		return fmt.Errorf("digital link: imperfect CSI with %v capacity is not modelled (the rate under a channel estimate is that of zero-forcing on it); use zf", l.Capacity)
	}
	return nil
}

// effectiveGains returns, under imperfect CSI, each worker's gain in the
// zero-forcing rate with the residual interference treated as noise
// (docs/BEYOND.md eq. (16.9)): a_k² v̂_k β_k / (1 + I), the interference
// I = Σ s_j² β_j P/(κ N0) of worker k alone under OMA and of all workers
// under NOMA; nil under perfect CSI.
func effectiveGains(cfg channel.Config, gains []float64, d int) []float64 {
	cfg = cfg.ResolvePilots(d)
	if cfg.CSI == (channel.CSI{}) {
		return nil
	}
	kappa := 1.0
	if cfg.Complex {
		kappa = 2
	}
	n0 := cfg.N0(d)
	sig := make([]float64, len(gains))
	inr := make([]float64, len(gains))
	var total float64
	for k, b := range gains {
		a, s2, vHat := cfg.CSILaw(b)
		sig[k] = a * a * vHat * b
		inr[k] = s2 * b * cfg.Power / (kappa * n0)
		total += inr[k]
	}
	for k := range sig {
		if cfg.Access == channel.NOMA {
			sig[k] /= 1 + total
		} else {
			sig[k] /= 1 + inr[k]
		}
	}
	return sig
}
