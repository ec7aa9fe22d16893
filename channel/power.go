package channel

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// PowerControl selects the workers' power control (docs/BEYOND.md
// note 15). The zero value is the paper's: zero-forcing inverts every
// channel and P_k meets the long-term constraint (eq: approx pc), with an
// energy per block ‖x‖² that is unbounded (of infinite variance for
// m_t − m_r = 2 on the real channel).
type PowerControl struct {
	// PeakPower is P_peak > P: truncated channel inversion. A worker sends a
	// block only when inverting its channel is cheap enough (X ≥ c in
	// docs/BEYOND.md eq. (15.2)), with the cutoff c chosen so that no block it
	// sends exceeds ‖x‖² = P_peak, and P_k so that its mean energy over the
	// blocks, sent or not, is P. The blocks not sent are the outage
	// (Received.Outage). Needs Rayleigh fading. 0: off.
	PeakPower float64
}

func (p PowerControl) validate(c Config) error {
	switch {
	case p.PeakPower == 0:
		return nil
	case math.IsNaN(p.PeakPower) || math.IsInf(p.PeakPower, 0) || p.PeakPower < 0:
		return fmt.Errorf("peak power P_peak = %v: must be positive and finite (0: no power control)", p.PeakPower)
	case p.PeakPower <= c.Power:
		return fmt.Errorf("peak power P_peak = %v is not above the mean power P = %v: truncated inversion needs P_peak > P", p.PeakPower, c.Power)
	case c.Fading != Rayleigh:
		return fmt.Errorf("truncated channel inversion needs rayleigh fading (its outage law is closed-form there), got %v", c.Fading)
	}
	return nil
}

// costLaw returns the law Gamma(α, scale θ) of X = ‖t‖²/(v̂ ‖Ĥ^† t‖²), the
// inverse cost of zero-forcing a signal t on an estimate Ĥ with i.i.d.
// entries of variance v̂, whatever t (docs/BEYOND.md eq. (12.6)): on the real
// channel X ~ χ²_{m_t−m_r+1} (α = (m_t − m_r + 1)/2, θ = 2), on the complex
// one X ~ Gamma(m_t − m_r + 1, 1).
func (c Config) costLaw() (alpha, scale float64) {
	if c.Complex {
		return float64(c.ExtraTx + 1), 1
	}
	return float64(c.ExtraTx+1) / 2, 2
}

// OutageProb returns the probability P(X < c) = P(α, c/θ) (regularised
// lower incomplete gamma) that a worker with cutoff c does not send a
// block (docs/BEYOND.md eq. (15.3)).
func (c Config) OutageProb(cutoff float64) float64 {
	alpha, scale := c.costLaw()
	return mathext.GammaIncReg(alpha, cutoff/scale)
}

// meanInvCost returns E[1/X | X ≥ c] for X of docs/BEYOND.md eq. (12.6):
// 1/((α − 1)ϑ) = InvGramMean without a cutoff (c = 0), and
// Q(α − 1, c/ϑ)/((α − 1)ϑ (1 − P(α, c/ϑ))) with one (eq. (15.3), (15.4)).
// Rayleigh fading only.
func (c Config) meanInvCost(cutoff float64) float64 {
	if cutoff == 0 {
		return c.InvGramMean()
	}
	alpha, scale := c.costLaw()
	return mathext.GammaIncRegComp(alpha-1, cutoff/scale) / ((alpha - 1) * scale) / (1 - c.OutageProb(cutoff))
}

// blockEnergy returns ε = E‖x̃‖², x̃ = Ĥ^† t, the mean over the blocks
// sent of a worker with link w and encoder P_k sending the samples theta
// (its transmit energy times β_k): P_k m2 E[1/X | X ≥ c]/v̂ on Rayleigh
// fading (docs/BEYOND.md eq. (12.9)) and P_k Σ_s tr(E[(ĤĤᴴ)^{-1}] t_s t_sᴴ)/S
// on Rician fading (eq. (14.6)); with N_r > 1 receive antennas
// x̃ = (FĤ)^† t and E[1/X] is the combined channel's g (docs/MATH.md
// eq. (21.5)).
func (c Config) blockEnergy(theta *mat.Dense, pk float64, w workerLink) float64 {
	if c.Fading == Rician {
		s, _ := theta.Dims()
		return pk * c.ricianEnergy(theta, w) / float64(s)
	}
	m2, _ := sampleNorms(theta, c.Repetition)
	if w.rxGram > 0 {
		return pk * m2 * w.rxGram / w.vHat // docs/MATH.md eq. (21.5)
	}
	return pk * m2 * c.meanInvCost(w.cutoff) / w.vHat
}

// sampleNorms returns m2 = (1/S) Σ_s ‖Bθ_s‖² and M = max_s ‖Bθ_s‖² of the
// samples theta (S×d) with repetition l.
func sampleNorms(theta *mat.Dense, l int) (m2, mx float64) {
	s, _ := theta.Dims()
	for i := range s {
		var n float64
		for _, v := range theta.RawRowView(i) {
			n += v * v
		}
		m2 += n
		mx = math.Max(mx, n)
	}
	return float64(l) * m2 / float64(s), float64(l) * mx
}

// cutoffFor is the smallest cutoff c that keeps every block of samples
// with largest ‖Bθ‖² = mx within P_peak under the encoder P_k:
// P_k mx/(w c) = P_peak, w = β v̂ (docs/BEYOND.md eq. (15.2)).
func (c Config) cutoffFor(pk, mx float64, w workerLink) float64 {
	return pk * mx / (w.gain * w.vHat * c.Control.PeakPower)
}

// truncatedShape returns, for samples theta, the ratio M/m2 of their
// largest to their mean ‖Bθ‖², and z* and h(z*), the peak of
// h(z) = z Q(α − 1, z) (docs/BEYOND.md eq. (15.5)); h is unimodal, its
// slope h' = Q(α − 1, z) − z f(z) with f the Gamma(α − 1, 1) density.
func (c Config) truncatedShape(theta *mat.Dense) (ratio, zmax, hmax float64) {
	alpha, _ := c.costLaw()
	m2, mx := sampleNorms(theta, c.Repetition)
	dens := distuv.Gamma{Alpha: alpha - 1, Beta: 1}
	slope := func(z float64) float64 { return mathext.GammaIncRegComp(alpha-1, z) - z*dens.Prob(z) }
	hi := 1.0
	for slope(hi) > 0 {
		hi *= 2
	}
	zmax = bisect(slope, 0, hi, true)
	return mx / m2, zmax, zmax * mathext.GammaIncRegComp(alpha-1, zmax)
}

// MinPeakPower returns the smallest peak power with which truncated
// inversion meets the mean power P on the samples theta (S×d):
// (α − 1) P (M/m2) / max_z h(z) (docs/BEYOND.md eq. (15.5)). It needs
// Rayleigh fading (the law of docs/BEYOND.md eq. (12.6)).
func (c Config) MinPeakPower(theta *mat.Dense) float64 {
	alpha, _ := c.costLaw()
	ratio, _, hmax := c.truncatedShape(theta)
	return (alpha - 1) * c.Power * ratio / hmax
}

// truncatedScale solves for the encoder P_k of truncated inversion on
// samples theta: with z = c/θ and P_k = z θ w P_peak/M, the mean energy
// (P_peak m2/M) h(z)/(α − 1), h(z) = z Q(α − 1, z), equals P
// (docs/BEYOND.md eq. (15.5)); of the two roots the smaller is taken (the
// least outage). It fails when P_peak is below MinPeakPower.
func (c Config) truncatedScale(theta *mat.Dense, w workerLink) (float64, error) {
	alpha, scale := c.costLaw()
	_, mx := sampleNorms(theta, c.Repetition)
	ratio, zmax, hmax := c.truncatedShape(theta)
	pp := c.Control.PeakPower
	target := (alpha - 1) * c.Power * ratio / pp
	if hmax < target {
		return 0, fmt.Errorf("peak power P_peak = %v too small for mean power P = %v with these samples (largest ‖Bθ‖² is %.3g times the mean): truncated inversion needs P_peak ≥ %.4g", pp, c.Power, ratio, (alpha-1)*c.Power*ratio/hmax)
	}
	h := func(z float64) float64 { return z*mathext.GammaIncRegComp(alpha-1, z) - target }
	z := bisect(h, 0, zmax, false)
	return z * scale * w.gain * w.vHat * pp / mx, nil
}

// bisect returns the root of f in [lo, hi], where f changes sign once;
// decreasing says f goes from positive to negative.
func bisect(f func(float64) float64, lo, hi float64, decreasing bool) float64 {
	for range 200 {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if (f(mid) > 0) == decreasing {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
