// Package channel simulates the uncoded (analog) uplink of wireless CMC
// (paper Sec. II-B and IV): each worker k precodes a sample θ_k as
// x_k = H_k^† E_k θ_k (zero-forcing times encoder, eq: tx signal), and the
// server receives
//
//	OMA:  y_k = H_k x_k + n_k            (eq: rev signal, one block per worker)
//	NOMA: y   = Σ_k H_k x_k + n          (eq: rev signal noma, one block for all)
//
// with n ~ N(0, N0 I_{m_r}). Encoders are E_k = √P_k B with B = 1_l ⊗ I_d
// (l = 1: scaled identity; l ≥ 2: analog repetition), and P_k enforces the
// long-term power constraint from the samples (eq: approx pc). The SNR is
// P/(m_r N0) (docs/MATH.md note 3).
//
// Beyond the paper (docs/BEYOND.md), Config also selects imperfect CSI
// (zero-forcing on an estimate Ĥ, leaving residual interference), per-worker
// large-scale gains β_k, a complex baseband Rayleigh or Rician channel
// carrying the real symbols on I and Q, truncated channel inversion with a
// peak power and outage, mean-centred transmission, block fading with the
// channel estimates' pilots charged to the budget, and a source-matched
// precoder. Their zero values give the paper's link, bit for bit.
package channel

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Access is the multiple-access scheme.
type Access int

const (
	// OMA gives each worker its own block and its own noise.
	OMA Access = iota
	// NOMA superposes all workers in one block with one noise ("over the air").
	NOMA
)

func (a Access) String() string {
	if a == NOMA {
		return "noma"
	}
	return "oma"
}

// ParseAccess reads "oma" or "noma".
func ParseAccess(s string) (Access, error) {
	switch strings.ToLower(s) {
	case "oma":
		return OMA, nil
	case "noma":
		return NOMA, nil
	}
	return 0, fmt.Errorf("unknown access %q (want oma or noma)", s)
}

// Fading is the family of channel matrices H_k.
type Fading int

const (
	// Flat is the frequency-flat channel H_k = I (m_t = m_r).
	Flat Fading = iota
	// Rayleigh draws H_k with i.i.d. N(0,1) entries, m_r×m_t, anew in every
	// block (CN(0,1) entries on the complex baseband channel).
	Rayleigh
	// Rician draws H_k = √(K/(K+1)) 1 1ᵀ + √(1/(K+1)) W with W i.i.d.
	// CN(0,1), anew in every block: a fixed line-of-sight part (broadside
	// arrays) plus scattering, K = Config.KFactor (docs/BEYOND.md note 14).
	// Complex baseband only.
	Rician
)

func (f Fading) String() string {
	switch f {
	case Rayleigh:
		return "rayleigh"
	case Rician:
		return "rician"
	}
	return "flat"
}

// ParseFading reads "flat", "rayleigh" or "rician".
func ParseFading(s string) (Fading, error) {
	switch strings.ToLower(s) {
	case "flat":
		return Flat, nil
	case "rayleigh":
		return Rayleigh, nil
	case "rician":
		return Rician, nil
	}
	return 0, fmt.Errorf("unknown fading %q (want flat, rayleigh or rician)", s)
}

// Limits of the models beyond the paper, checked by Config.Validate: far
// outside them the link does not fail cleanly. A K-factor above about 1e33
// leaves the scattered part below the resolution of the line-of-sight one,
// so every Rician draw of H is exactly rank one; SNR offsets, pilot SNRs or
// CSI errors of hundreds of orders of magnitude overflow the power scale P_k.
const (
	MaxKFactor  = 1e6   // Rician K-factor: 60 dB of line of sight over scattering
	MaxOffsetDB = 100.0 // |per-worker SNR offset| in dB, the span of the reference SNR
	MaxPilotDB  = 100.0 // |pilot SNR| in dB
	// MaxCSIError is the largest σ_e², that of a least-squares estimate
	// from one pilot at the lowest pilot SNR, −MaxPilotDB dB: an error
	// 10^10 times the channel's power.
	MaxCSIError = 1e10
)

// Config describes the uplink. The zero values of Complex, KFactor, CSI,
// Gains, Control, Centre, Coherence, Pilots and Precoder give the paper's
// link (real channel, perfect CSI, equal SNR, channel inversion with the
// long-term power rule, a new channel every block, E_k = √P_k B);
// docs/BEYOND.md and docs/MATH.md notes 20 and 22 state the models the
// other values select.
type Config struct {
	Access Access
	Fading Fading
	// Repetition is l in B = 1_l ⊗ I_d, so m_r = l·d. 1 means E_k = √P_k I_d.
	Repetition int
	// ExtraTx is m_t − m_r for Rayleigh and Rician fading (the paper's
	// 2d×(2d+2) is 2), counted in complex dimensions when Complex is set.
	// E[(H Hᵀ)^{-1}] = I/(m_t − m_r − 1) exists only for ExtraTx ≥ 2 on the
	// real channel; on the complex one E[(H Hᴴ)^{-1}] = I/(m_t − m_r) needs
	// ExtraTx ≥ 1 (Rician: ≥ 2, see Validate).
	ExtraTx int
	// Power is P in E‖x_k‖² ≤ P (eq: power constraint).
	Power float64
	// SNRdB is 10 log10(P/(m_r N0)); with Gains it is the reference SNR
	// (docs/BEYOND.md note 13).
	SNRdB float64
	// Physical simulates the whole chain: draw H_k per block, precode with
	// the pseudo-inverse of the channel estimate, transmit, add noise.
	// Otherwise an equivalent model is used: y = E θ + n (identical in law
	// under perfect CSI, since H_k H_k^† = I; much cheaper for large m_r), or
	// under imperfect CSI or power control on Rayleigh fading the exact
	// equivalent in law of docs/BEYOND.md eq. (12.7). Rician fading with
	// imperfect CSI has no equivalent form and is always simulated
	// physically, and so is block fading (Coherence > 1) with imperfect CSI
	// or truncated inversion, whose blocks of one interval are dependent.
	// Flat fading is always equivalent.
	Physical bool
	// Complex sends the real symbols on I and Q of a complex baseband
	// channel: the l·d real symbols of a block fill ⌈l·d/2⌉ complex channel
	// uses (first half on I, second on Q, a zero pad when l·d is odd), H_k is
	// complex and the noise is CN(0, 2N0) per complex use, i.e. N0 per real
	// symbol as before (docs/BEYOND.md note 14).
	Complex bool
	// KFactor is the Rician K-factor (power of the line-of-sight part over
	// the scattered part), used only with Fading == Rician; K = 0 is
	// Rayleigh. At most MaxKFactor.
	KFactor float64
	// CSI is the channel knowledge of the workers; its zero value is perfect
	// CSI (docs/BEYOND.md note 12).
	CSI CSI
	// Gains are the per-worker large-scale gains; the zero value gives every
	// worker the SNR SNRdB (docs/BEYOND.md note 13).
	Gains LargeScale
	// Control is the power control; the zero value is the paper's channel
	// inversion with the long-term power rule (docs/BEYOND.md note 15).
	Control PowerControl
	// Centre sends each worker's fluctuations θ_s − m_k about the mean m_k
	// of its samples, with P_k set by them, and m_k digitally in blocks
	// taken from the samples' (centre.go, docs/BEYOND.md note 17); false is
	// the paper's link. It needs perfect CSI, no truncated inversion and
	// no Rician fading (the means' rate is that of the zero-forcing AWGN
	// blocks).
	Centre bool
	// Coherence is T_c, the sample blocks that share one channel
	// realisation (block fading, docs/MATH.md note 20): each worker's H_k
	// (and its estimate) is drawn at the first block of every interval of
	// T_c blocks and held over it, independently across intervals and
	// workers. 0 and 1: a new channel every block, the paper's.
	Coherence int
	// Pilots charges the workers' channel estimates to the budget; the
	// zero value is off (docs/MATH.md note 20).
	Pilots Pilots
	// RxAntennas is N_r, the server's receive antennas per received
	// dimension (docs/MATH.md note 21): N_r·m_r antennas, combined by a
	// beamformer through which the workers zero-force (antennas.go). 0 and
	// 1: the paper's single antenna. At most MaxRxAntennas; with N_r > 1 the
	// channel must be real and the inversion the paper's.
	RxAntennas int
	// Precoder is the workers' linear precoder before zero-forcing; the
	// zero value is the paper's E_k = √P_k B (precoder.go, docs/MATH.md
	// note 22). Whiten sends its side information as centring sends its
	// means, so it has centring's limits: perfect CSI, no truncated
	// inversion, no Rician fading.
	Precoder Precoder
}

// Validate reports a configuration that cannot be simulated.
func (c Config) Validate() error {
	switch {
	case c.Repetition < 1:
		return fmt.Errorf("repetition l = %d: must be ≥ 1", c.Repetition)
	case c.Fading == Rician && !c.Complex:
		return fmt.Errorf("rician fading is defined on the complex baseband channel: set complex")
	case c.Fading == Rician && c.ExtraTx < 2:
		return fmt.Errorf("extra transmit dimensions m_t−m_r = %d: must be ≥ 2 for Rician fading (the worker's E[(HHᴴ)^{-1}] is computed by Monte Carlo, which needs its variance finite)", c.ExtraTx)
	case c.Fading == Rayleigh && c.Complex && c.ExtraTx < 1:
		return fmt.Errorf("extra transmit dimensions m_t−m_r = %d: must be ≥ 1 for complex Rayleigh fading (E[(HHᴴ)^{-1}] is infinite otherwise)", c.ExtraTx)
	case c.Fading == Rayleigh && !c.Complex && c.ExtraTx < 2:
		return fmt.Errorf("extra transmit dimensions m_t−m_r = %d: must be ≥ 2 for Rayleigh fading (E[(HHᵀ)^{-1}] is infinite otherwise)", c.ExtraTx)
	case !(c.Power > 0) || math.IsInf(c.Power, 0):
		return fmt.Errorf("power P = %v: must be positive and finite", c.Power)
	case math.IsNaN(c.SNRdB) || math.IsInf(c.SNRdB, 0):
		return fmt.Errorf("SNR = %v dB: must be finite", c.SNRdB)
	case !(c.KFactor >= 0 && c.KFactor <= MaxKFactor):
		return fmt.Errorf("rician K-factor = %v: must be in [0, %g] (%g dB of line of sight over scattering; far above it every draw of H is rank one)", c.KFactor, float64(MaxKFactor), 10*math.Log10(MaxKFactor))
	case c.KFactor != 0 && c.Fading != Rician:
		return fmt.Errorf("rician K-factor = %v given with %v fading: it is used only by rician fading", c.KFactor, c.Fading)
	}
	if err := c.CSI.validate(c.Fading); err != nil {
		return err
	}
	if err := c.validateFading(); err != nil {
		return err
	}
	if err := c.validateAntennas(); err != nil {
		return err
	}
	if err := c.Gains.validate(); err != nil {
		return err
	}
	if err := c.Control.validate(c); err != nil {
		return err
	}
	switch {
	case c.Centre && c.CSI.imperfect():
		return fmt.Errorf("centring with imperfect CSI: the means' digital rate assumes the zero-forcing link of perfect CSI")
	case c.Centre && c.Control.PeakPower > 0:
		return fmt.Errorf("centring with truncated inversion (peak power %v): the means' digital rate assumes full channel inversion", c.Control.PeakPower)
	case c.Centre && c.Fading == Rician:
		return fmt.Errorf("centring with rician fading: the means' digital rate needs E[(HHᴴ)^{-1}] = g·I, which Rician fading does not have")
	}
	return c.validatePrecoder()
}

// validatePrecoder checks the precoder against the rest of c: the matched
// precoder's side information has the rate of the zero-forcing link of
// perfect CSI, as centring's means.
func (c Config) validatePrecoder() error {
	switch {
	case c.Precoder != Identity && c.Precoder != Whiten:
		return fmt.Errorf("unknown precoder %d", int(c.Precoder))
	case c.Precoder == Identity:
		return nil
	case c.CSI.imperfect() || c.Pilots.On:
		return fmt.Errorf("the whiten precoder with imperfect CSI: its side information's digital rate assumes the zero-forcing link of perfect CSI")
	case c.Control.PeakPower > 0:
		return fmt.Errorf("the whiten precoder with truncated inversion (peak power %v): its side information's digital rate assumes full channel inversion", c.Control.PeakPower)
	case c.Fading == Rician:
		return fmt.Errorf("the whiten precoder with rician fading: its power allocation and side information's rate need E[(HHᴴ)^{-1}] = g·I, which Rician fading does not have")
	case c.rxAntennas() > 1:
		return fmt.Errorf("the whiten precoder with %d receive antennas: its power allocation and side information's rate are those of the single antenna's link (not modelled with a beamformer)", c.RxAntennas)
	}
	return nil
}

// Dims returns m_r and m_t for parameter dimension d, counted in real
// symbols: on the complex channel m_t = 2(⌈m_r/2⌉ + ExtraTx).
func (c Config) Dims(d int) (mr, mt int) {
	mr = c.Repetition * d
	mt = mr
	if c.Fading == Flat {
		return mr, mt
	}
	if c.Complex {
		_, mtc := c.complexDims(mr)
		return mr, 2 * mtc
	}
	return mr, mr + c.ExtraTx
}

// complexDims returns the complex channel uses per block, ⌈m_r/2⌉, and the
// complex transmit dimensions ⌈m_r/2⌉ + ExtraTx.
func (c Config) complexDims(mr int) (mc, mtc int) {
	mc = (mr + 1) / 2
	return mc, mc + c.ExtraTx
}

// N0 is the noise variance per received symbol, P/(m_r · 10^{SNR/10}).
func (c Config) N0(d int) float64 {
	mr, _ := c.Dims(d)
	return c.Power / (float64(mr) * math.Pow(10, c.SNRdB/10))
}

// InvGramMean is g in E[(H Hᵀ)^{-1}] = g·I for a unit-gain channel known
// exactly: 1 for flat fading, 1/(m_t − m_r − 1) for i.i.d. N(0,1) entries
// (mean of an inverse Wishart) and 1/(m_t − m_r) for i.i.d. CN(0,1) entries
// (complex inverse Wishart). Rician fading has no scalar g (see
// docs/BEYOND.md eq. (14.6)); InvGramMean panics for it.
func (c Config) InvGramMean() float64 {
	switch {
	case c.Fading == Rician:
		panic("channel: InvGramMean of Rician fading, whose E[(HHᴴ)^{-1}] is not a multiple of I")
	case c.Fading == Rayleigh && c.Complex:
		return 1 / float64(c.ExtraTx)
	case c.Fading == Rayleigh:
		return 1 / float64(c.ExtraTx-1)
	}
	return 1
}

// PowerScale returns P_k = P S / Σ_s tr(E[(ĤĤᵀ)^{-1}] B θ_s θ_sᵀ Bᵀ) for
// worker samples theta (S×d), so that E_k = √P_k B meets eq: approx pc with
// equality for a worker of unit large-scale gain under the paper's power
// rule (Control off). With perfect CSI and Flat or Rayleigh fading this is
// P S / (g · l · Σ_s ‖θ_s‖²); Ĥ is the worker's channel estimate (CSI).
// With N_r > 1 receive antennas g is that of the combined channel of a
// worker alone in its block (CombinedInvGram, OMA).
func (c Config) PowerScale(theta *mat.Dense) float64 {
	_, d := theta.Dims()
	c = c.ResolvePilots(d)
	w := c.workerLink(1)
	if c.rxAntennas() > 1 {
		w.rxGram = c.CombinedInvGram(d, 1)
	}
	return c.powerScale(theta, w)
}

// powerScale is PowerScale for a worker with link parameters w: P_k is
// β_k times the unit-gain rule on the estimate Ĥ (docs/BEYOND.md eq. (13.2)).
func (c Config) powerScale(theta *mat.Dense, w workerLink) float64 {
	s, _ := theta.Dims()
	if c.Fading == Rician {
		return w.gain * c.Power * float64(s) / c.ricianEnergy(theta, w)
	}
	var sum float64
	for i := 0; i < s; i++ {
		r := theta.RawRowView(i)
		for _, v := range r {
			sum += v * v
		}
	}
	g := c.gramMean(w) / w.vHat
	return w.gain * (c.Power * float64(s) / (g * float64(c.Repetition) * sum))
}

// gramMean is g of worker link w without truncation: that of its combined
// channel with N_r > 1 receive antennas (docs/MATH.md eq. (21.4)),
// InvGramMean otherwise.
func (c Config) gramMean(w workerLink) float64 {
	if w.rxGram > 0 {
		return w.rxGram
	}
	return c.InvGramMean()
}
