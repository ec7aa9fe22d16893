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
	// block.
	Rayleigh
)

func (f Fading) String() string {
	if f == Rayleigh {
		return "rayleigh"
	}
	return "flat"
}

// ParseFading reads "flat" or "rayleigh".
func ParseFading(s string) (Fading, error) {
	switch strings.ToLower(s) {
	case "flat":
		return Flat, nil
	case "rayleigh":
		return Rayleigh, nil
	}
	return 0, fmt.Errorf("unknown fading %q (want flat or rayleigh)", s)
}

// Config describes the uplink.
type Config struct {
	Access Access
	Fading Fading
	// Repetition is l in B = 1_l ⊗ I_d, so m_r = l·d. 1 means E_k = √P_k I_d.
	Repetition int
	// ExtraTx is m_t − m_r for Rayleigh fading (the paper's 2d×(2d+2) is 2).
	// E[(H Hᵀ)^{-1}] = I/(m_t − m_r − 1) exists only for ExtraTx ≥ 2.
	ExtraTx int
	// Power is P in E‖x_k‖² ≤ P (eq: power constraint).
	Power float64
	// SNRdB is 10 log10(P/(m_r N0)).
	SNRdB float64
	// Physical simulates the whole chain: draw H_k per block, precode with
	// its pseudo-inverse, transmit, add noise. Otherwise the equivalent
	// model y = E θ + n is used (identical in law under perfect CSI, since
	// H_k H_k^† = I; much cheaper for large m_r). Flat fading is always
	// equivalent.
	Physical bool
}

// Validate reports a configuration that cannot be simulated.
func (c Config) Validate() error {
	switch {
	case c.Repetition < 1:
		return fmt.Errorf("repetition l = %d: must be ≥ 1", c.Repetition)
	case c.Fading == Rayleigh && c.ExtraTx < 2:
		return fmt.Errorf("extra transmit dimensions m_t−m_r = %d: must be ≥ 2 for Rayleigh fading (E[(HHᵀ)^{-1}] is infinite otherwise)", c.ExtraTx)
	case !(c.Power > 0) || math.IsInf(c.Power, 0):
		return fmt.Errorf("power P = %v: must be positive and finite", c.Power)
	case math.IsNaN(c.SNRdB) || math.IsInf(c.SNRdB, 0):
		return fmt.Errorf("SNR = %v dB: must be finite", c.SNRdB)
	}
	return nil
}

// Dims returns m_r and m_t for parameter dimension d.
func (c Config) Dims(d int) (mr, mt int) {
	mr = c.Repetition * d
	mt = mr
	if c.Fading == Rayleigh {
		mt = mr + c.ExtraTx
	}
	return mr, mt
}

// N0 is the noise variance per received symbol, P/(m_r · 10^{SNR/10}).
func (c Config) N0(d int) float64 {
	mr, _ := c.Dims(d)
	return c.Power / (float64(mr) * math.Pow(10, c.SNRdB/10))
}

// InvGramMean is g in E[(H Hᵀ)^{-1}] = g·I: 1 for flat fading, and
// 1/(m_t − m_r − 1) for i.i.d. N(0,1) entries (mean of an inverse Wishart).
func (c Config) InvGramMean() float64 {
	if c.Fading == Rayleigh {
		return 1 / float64(c.ExtraTx-1)
	}
	return 1
}

// PowerScale returns P_k = P S / Σ_s tr(E[(HHᵀ)^{-1}] B θ_s θ_sᵀ Bᵀ)
// = P S / (g · l · Σ_s ‖θ_s‖²) for worker samples theta (S×d), so that
// E_k = √P_k B meets eq: approx pc with equality.
func (c Config) PowerScale(theta *mat.Dense) float64 {
	s, _ := theta.Dims()
	var sum float64
	for i := 0; i < s; i++ {
		r := theta.RawRowView(i)
		for _, v := range r {
			sum += v * v
		}
	}
	return c.Power * float64(s) / (c.InvGramMean() * float64(c.Repetition) * sum)
}
