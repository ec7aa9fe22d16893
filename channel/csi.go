package channel

import (
	"fmt"
	"math"
)

// CSI is what a worker knows of its channel when it precodes: an estimate
// Ĥ of H (docs/BEYOND.md note 12). The zero value is perfect CSI, Ĥ = H.
// The server believes Ĥ as well: it treats the received signals as if
// zero-forcing on Ĥ had cancelled the channel (y_k = E_k θ_k + n_k), so every
// scheme runs unchanged and the residual interference is a mismatch it does
// not see (Received.Residual records it for analysis only).
type CSI struct {
	// ErrorVar is σ_e² of the additive-error model Ĥ = H + E, where E has
	// i.i.d. N(0, σ_e²) entries (CN(0, σ_e²) on the complex channel),
	// independent of H; H's entries have unit power, so σ_e² is the error
	// relative to the channel. This is the least-squares estimate from pilots
	// with L_p ρ_p = 1/σ_e², used as is by the precoder. The same for every
	// worker whatever its large-scale gain. At most MaxCSIError.
	ErrorVar float64
	// PilotLen is L_p, the length of the orthogonal pilot sequences from
	// which each worker estimates its channel by MMSE; it must be at least
	// the m_t transmit dimensions (complex uses on the complex channel).
	// 0 means no pilots (perfect CSI unless ErrorVar is set).
	PilotLen int
	// PilotSNRdB is ρ_p, the SNR of one pilot symbol at unit large-scale
	// gain, in dB: worker k observes each channel entry with least-squares
	// error variance σ_k² = 1/(β_k L_p ρ_p), and its MMSE estimate has error
	// variance v σ_k²/(v + σ_k²), v the variance of H's scattered part
	// (1 for Rayleigh). Used only with PilotLen; within ±MaxPilotDB.
	PilotSNRdB float64
}

// imperfect reports whether the workers' channel estimates have errors.
func (c CSI) imperfect() bool { return c.ErrorVar > 0 || c.PilotLen > 0 }

func (c CSI) validate(f Fading) error {
	switch {
	case !(c.ErrorVar >= 0 && c.ErrorVar <= MaxCSIError):
		return fmt.Errorf("CSI error variance σ_e² = %v: must be in [0, %g] (relative to the channel's unit power; %g is one pilot at %g dB, and far above it the power scale P_k overflows)", c.ErrorVar, float64(MaxCSIError), float64(MaxCSIError), -MaxPilotDB)
	case c.PilotLen < 0:
		return fmt.Errorf("pilot length L_p = %d: must be ≥ 0 (0: no pilots)", c.PilotLen)
	case !(math.Abs(c.PilotSNRdB) <= MaxPilotDB):
		return fmt.Errorf("pilot SNR = %v dB: must be in [%g, %g] dB (far outside it the channel estimate's error overflows the power scale P_k)", c.PilotSNRdB, -MaxPilotDB, MaxPilotDB)
	case c.PilotLen == 0 && c.PilotSNRdB != 0:
		return fmt.Errorf("pilot SNR %v dB given without a pilot length: set the pilot length L_p too", c.PilotSNRdB)
	case c.PilotLen > 0 && c.ErrorVar > 0:
		return fmt.Errorf("CSI error variance σ_e² = %v and pilots (L_p = %d) both given: choose one (σ_e² is the additive-error model, pilots the MMSE estimate)", c.ErrorVar, c.PilotLen)
	case c.imperfect() && f == Flat:
		return fmt.Errorf("imperfect CSI with flat fading: H = I is known, choose rayleigh or rician fading")
	}
	return nil
}

// workerLink holds what the chain needs to know about one worker's link
// (docs/BEYOND.md notes 12–13). The channel of the worker is √β H with H
// normalised: entries μ + √v w, w i.i.d. N(0,1) (CN(0,1) when complex).
type workerLink struct {
	gain  float64 // β_k, large-scale power gain
	mean  float64 // μ, line-of-sight amplitude of every entry (Rician)
	scat  float64 // v, variance of the scattered part
	lsVar float64 // σ², variance of the error E in H + E (0: perfect CSI)
	// shrink is c in Ĥ = μ + c (H + E − μ): 1 for the additive-error
	// model, v/(v + σ²) for the MMSE estimate.
	shrink float64
	vHat   float64 // variance of Ĥ's scattered part
	// a and s2 give the law of H given Ĥ: H = μ + a (Ĥ − μ) + Ẽ with Ẽ
	// i.i.d. of variance s2, independent of Ĥ.
	a, s2 float64
	// cutoff is c of truncated inversion: the worker does not send a block
	// whose channel has X < c (docs/BEYOND.md eq. (15.2)); 0 without.
	cutoff float64
	// rxGram is g of the combined channel with N_r > 1 receive antennas
	// (Config.CombinedInvGram); 0 with one.
	rxGram float64
}

// workerLink returns the link of a worker with large-scale gain β. It
// panics on charged pilots not yet resolved (Config.ResolvePilots), whose
// CSI depends on the parameter dimension.
func (c Config) workerLink(gain float64) workerLink {
	if c.Pilots.On {
		panic("channel: the CSI of charged pilots needs the parameter dimension: call ResolvePilots first")
	}
	w := workerLink{gain: gain, scat: 1, shrink: 1, a: 1}
	if c.Fading == Rician {
		w.mean = math.Sqrt(c.KFactor / (c.KFactor + 1))
		w.scat = 1 / (c.KFactor + 1)
	}
	v := w.scat
	switch {
	case c.CSI.ErrorVar > 0:
		// Ĥ = H + E: H − μ given Ĥ is a(Ĥ − μ) + Ẽ with a = v/(v+σ²),
		// var Ẽ = vσ²/(v+σ²) (Gaussian conditioning).
		s := c.CSI.ErrorVar
		w.lsVar = s
		w.vHat = v + s
		w.a = v / (v + s)
		w.s2 = v * s / (v + s)
	case c.CSI.PilotLen > 0:
		// MMSE: Ĥ = μ + v/(v+σ²)(H + E − μ), H = Ĥ + Ẽ, var Ẽ = vσ²/(v+σ²).
		s := 1 / (gain * float64(c.CSI.PilotLen) * math.Pow(10, c.CSI.PilotSNRdB/10))
		w.lsVar = s
		w.shrink = v / (v + s)
		w.vHat = v * w.shrink
		w.s2 = v * s / (v + s)
	default:
		w.vHat = v
	}
	return w
}

// CSILaw returns a, s² and v̂ of docs/BEYOND.md eq. (12.3) for a worker
// with large-scale gain β: given its estimate Ĥ, H = μ + a(Ĥ − μ) + Ẽ with Ẽ
// i.i.d. of variance s², and Ĥ's scattered part has variance v̂ (perfect
// CSI: a = 1, s² = 0). With them, eq. (12.8) and (12.9) give the residual
// power and the second moment of the received signals. With charged
// pilots, call it on ResolvePilots(d).
func (c Config) CSILaw(gain float64) (a, s2, vHat float64) {
	w := c.workerLink(gain)
	return w.a, w.s2, w.vHat
}

// checkPilots reports pilots too short for the m_t transmit dimensions
// (complex uses on the complex channel) of parameter dimension d.
func (c Config) checkPilots(d int) error {
	if c.CSI.PilotLen == 0 {
		return nil
	}
	mr, mt := c.Dims(d)
	what := "real"
	if c.Complex {
		_, mt = c.complexDims(mr)
		what = "complex"
	}
	if c.CSI.PilotLen < mt {
		return fmt.Errorf("pilot length L_p = %d shorter than the m_t = %d %s transmit dimensions: orthogonal pilots need L_p ≥ m_t", c.CSI.PilotLen, mt, what)
	}
	return nil
}
