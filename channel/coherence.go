package channel

import (
	"errors"
	"fmt"
	"math"
)

// Block fading and charged pilots (Config.Coherence, Config.Pilots,
// docs/MATH.md note 20).
//
// With coherence T_c, worker k's channel H_k holds for T_c consecutive
// sample blocks, then is drawn anew, independently of the previous one and
// of the other workers'. With pilots, each worker estimates its channel
// once per coherence interval by MMSE from L_p orthogonal pilot uses (the
// CSI model of docs/BEYOND.md eq. (12.2)), and those uses come out of the
// channel uses its samples had.

// Pilots charges the workers' channel estimates to the link: before each
// coherence interval every worker sends L_p orthogonal pilot symbols of
// SNR ρ_p (at unit large-scale gain), from which its channel is estimated
// by MMSE (docs/BEYOND.md eq. (12.2): σ_k² = 1/(β_k L_p ρ_p)). The pilot
// uses are taken from the samples' budget (Config.SplitBudget). The zero
// value is off: CSI is then Config.CSI, free of charge.
type Pilots struct {
	// On turns the charged pilots on.
	On bool
	// Len is L_p, the pilot uses per worker and interval: at least the m_t
	// transmit dimensions (complex ones on the complex channel), one
	// orthogonal sequence per column of H. 0: m_t, the fewest.
	Len int
	// BoostDB is ρ_p over the data SNR in dB: ρ_p = SNR·10^{BoostDB/10}, so
	// 0 sends the pilots at the data SNR. SNRdB + BoostDB must lie within
	// ±MaxPilotDB.
	BoostDB float64
}

// ErrPilotBudget is wrapped by the error of a link whose charged pilots
// leave no block for the samples.
var ErrPilotBudget = errors.New("pilots: the pilots take every sample block of the budget")

// coherence returns T_c, the sample blocks per channel realisation (0 is
// taken as 1, a new channel every block).
func (c Config) coherence() int { return max(1, c.Coherence) }

// validateFading checks Coherence and Pilots against the rest of c.
func (c Config) validateFading() error {
	p := c.Pilots
	switch {
	case c.Coherence < 0:
		return fmt.Errorf("coherence T_c = %d: must be ≥ 1 sample blocks per channel realisation (0 is read as 1, a new channel every block)", c.Coherence)
	case c.Coherence > 1 && c.Fading == Flat:
		return fmt.Errorf("coherence T_c = %d with flat fading: H = I never changes; choose rayleigh or rician fading", c.Coherence)
	case !p.On && (p.Len != 0 || p.BoostDB != 0):
		return fmt.Errorf("pilot length %d or boost %v dB given with the pilots off: turn the pilots on", p.Len, p.BoostDB)
	case !p.On:
		return nil
	case p.Len < 0:
		return fmt.Errorf("pilot length L_p = %d: must be ≥ 0 (0: m_t, the fewest)", p.Len)
	case math.IsNaN(p.BoostDB) || !(math.Abs(c.SNRdB+p.BoostDB) <= MaxPilotDB):
		return fmt.Errorf("pilot SNR = SNR + boost = %v + %v dB: must be in [%g, %g] dB (far outside it the channel estimate's error overflows the power scale P_k)", c.SNRdB, p.BoostDB, -MaxPilotDB, MaxPilotDB)
	case c.Fading == Flat:
		return fmt.Errorf("pilots with flat fading: H = I is known, choose rayleigh or rician fading")
	case c.CSI != CSI{}:
		return fmt.Errorf("charged pilots and the free CSI model %+v both given: choose one (the pilots set the MMSE estimate's error themselves)", c.CSI)
	case c.Centre:
		return fmt.Errorf("centring with pilots: the means' digital rate assumes the zero-forcing link of perfect CSI")
	}
	return nil
}

// pilotDims returns the m_t transmit dimensions the pilots must cover for
// parameter dimension d (complex ones on the complex channel) and the
// channel uses of a block in the same unit: m_r real, or ⌈m_r/2⌉ complex.
func (c Config) pilotDims(d int) (mt, blockUses int) {
	mr, mt := c.Dims(d)
	if c.Complex {
		mc, mtc := c.complexDims(mr)
		return mtc, mc
	}
	return mt, mr
}

// ResolvePilots returns the link whose workers have the CSI of the charged
// pilots for parameter dimension d, CSI = {PilotLen: L_p, PilotSNRdB: ρ_p}
// with Pilots off: the same link in law but for the pilots' channel uses,
// which Transmit charges. It returns c itself when the pilots are off. Use
// it for the CSI statistics of a link with pilots (CSILaw).
func (c Config) ResolvePilots(d int) Config {
	if !c.Pilots.On {
		return c
	}
	l := c.Pilots.Len
	if l == 0 {
		l, _ = c.pilotDims(d)
	}
	c.CSI = CSI{PilotLen: l, PilotSNRdB: c.SNRdB + c.Pilots.BoostDB}
	c.Pilots = Pilots{}
	return c
}

// PilotBudget is how charged pilots split the channel uses of a budget of
// sample blocks (docs/MATH.md eq. (20.3)): per worker under OMA, where each
// worker sends its pilots in its own blocks, and for the shared blocks
// under NOMA, where the K workers' pilots are orthogonal to each other.
//
//	Budget·BlockUses = Samples·BlockUses + Intervals·IntervalUses + Idle
type PilotBudget struct {
	Budget    int `json:"budget"`     // sample blocks before the pilots
	BlockUses int `json:"block_uses"` // channel uses of a block: m_r real, ⌈m_r/2⌉ complex
	Len       int `json:"len"`        // L_p, each worker's pilot uses per interval
	// IntervalUses is the pilot uses per coherence interval: L_p under OMA,
	// K·L_p under NOMA.
	IntervalUses int `json:"interval_uses"`
	Coherence    int `json:"coherence"` // T_c, sample blocks per interval
	Intervals    int `json:"intervals"` // coherence intervals, ⌈Samples/T_c⌉
	Samples      int `json:"samples"`   // S', the sample blocks left
	Idle         int `json:"idle"`      // channel uses left unused
}

// Uses returns the pilot channel uses in all, Intervals·IntervalUses.
func (b PilotBudget) Uses() int { return b.Intervals * b.IntervalUses }

// SplitBudget returns how the pilots of k workers split a budget of s
// sample blocks of parameter dimension d under c.Access: S' is the largest
// number of samples with S'·n_u + ⌈S'/T_c⌉·L ≤ s·n_u, n_u the block's
// channel uses and L the pilot uses per interval. It wraps ErrPilotBudget
// when S' = 0, and needs the pilots on.
func (c Config) SplitBudget(k, s, d int) (PilotBudget, error) {
	if !c.Pilots.On {
		return PilotBudget{}, fmt.Errorf("pilot budget of a link without pilots")
	}
	r := c.ResolvePilots(d)
	b := PilotBudget{Budget: s, Len: r.CSI.PilotLen, Coherence: c.coherence()}
	_, b.BlockUses = c.pilotDims(d)
	b.IntervalUses = b.Len
	if c.Access == NOMA {
		b.IntervalUses = k * b.Len
	}
	total := s * b.BlockUses
	full := total / (b.Coherence*b.BlockUses + b.IntervalUses)
	rest := total - full*(b.Coherence*b.BlockUses+b.IntervalUses)
	b.Samples = full * b.Coherence
	b.Intervals = full
	if extra := (rest - b.IntervalUses) / b.BlockUses; rest > b.IntervalUses && extra > 0 {
		b.Samples += extra
		b.Intervals++
	}
	b.Idle = total - b.Samples*b.BlockUses - b.Uses()
	if b.Samples < 1 {
		what := fmt.Sprintf("the %d blocks of a worker under OMA", s)
		if c.Access == NOMA {
			what = fmt.Sprintf("the %d shared blocks under NOMA, whose K = %d workers send orthogonal pilots", s, k)
		}
		return b, fmt.Errorf("%w: %d pilot uses per interval plus one sample block of %d uses exceed %s (%d uses); raise the budget or shorten the pilots",
			ErrPilotBudget, b.IntervalUses, b.BlockUses, what, total)
	}
	return b, nil
}
