package experiment

import (
	"fmt"
	"slices"

	"github.com/wcmc-project/wcmc/runner"
)

// Experiments beyond the paper (docs/BEYOND.md): the channel
// models of notes 12–15 and the ideal digital baseline of note 16, each
// swept on one of the paper's settings. They are labelled FigureBeyond:
// `wcmc reproduce`, which reproduces the paper's figures, does not run
// them.

// FigureBeyond is the Figure of the experiments beyond the paper.
const FigureBeyond = "Beyond"

func registerBeyond() {
	// Imperfect CSI on the Gaussian (Sec. VI-A, Fig. 3) and the probit
	// (Fig. 5) settings, both on Rayleigh fading (flat fading is known
	// exactly): two experiments rather than a model parameter, since the
	// two share no data parameters, reference or metric set.
	csi := "0,0.01,0.02,0.05,0.1,0.2"
	register(withDefaults(gaussSpec("csi-error-gauss", FigureBeyond,
		"err2 vs the variance of the workers' channel-estimate error (Ĥ = H + E), {subposteriors} Gaussian subposteriors, {fading} fading, {snr_db} dB, T = {T}",
		"csi_error", "CSI error variance σₑ² (relative to the channel's unit-power entries)", false, "heterogeneous", "2000", "20",
		map[string]string{"trials": "4", "csi_error": "0,0.05,0.2"}),
		map[string]string{"fading": "rayleigh", "csi_error": csi}))
	register(probitSpec(probitVariant{
		id: "csi-error-probit", fig: FigureBeyond, x: "csi_error",
		xlabel: "CSI error variance σₑ² (relative to the channel's unit-power entries)",
		desc:   "probit regression (d = {d}, N = {N}): err2 vs the variance of the workers' channel-estimate error, {fading} fading (l = {repetition}), {snr_db} dB, T = {T}, K = {K}",
		over:   map[string]string{"csi_error": csi, "snr_db": "20"},
		quick: map[string]string{"trials": "2", "csi_error": "0,0.1", "T": "200", "ref_samples": "2000",
			"N": "2000", "fresh_factor": "4"},
	}))

	// Block fading with the pilots charged (docs/MATH.md note 20) on the
	// probit setting of Fig. 5: the longer the channel holds, the fewer
	// pilot uses the samples lose; the CSI-aware WGCMC runs beside the
	// unaware one.
	register(probitSpec(probitVariant{
		id: "coherence", fig: FigureBeyond, x: "coherence", logx: true,
		xlabel: "coherence (sample blocks per channel realisation)",
		desc:   "probit regression (d = {d}, N = {N}): err2 vs the coherence T_c (sample blocks per channel realisation), pilots charged (L_p = m_t per worker and interval, at the data SNR), {fading} fading (l = {repetition}), {snr_db} dB, T = {T}, K = {K}",
		over:   map[string]string{"coherence": "1,2,5,10,20,50", "pilots": "true", "snr_db": "10"},
		quick: map[string]string{"trials": "2", "coherence": "1,10", "T": "200", "ref_samples": "2000",
			"N": "2000", "fresh_factor": "4"},
	}))

	// A multi-antenna server (docs/MATH.md note 21) on the probit setting
	// of Fig. 5 at a low SNR, where the array gain matters. Under perfect
	// CSI the equivalent model is exact in law and needs no per-block
	// beamformer design (the NOMA one costs tens of milliseconds a block).
	register(probitSpec(probitVariant{
		id: "rx-antennas", fig: FigureBeyond, x: "rx_antennas", logx: true,
		xlabel: "receive antennas per received dimension",
		desc:   "probit regression (d = {d}, N = {N}): err2 vs the server's receive antennas per received dimension N_r (receive beamforming, the workers zero-forcing through it), {fading} fading (l = {repetition}), {snr_db} dB per antenna, T = {T}, K = {K}",
		over:   map[string]string{"rx_antennas": "1,2,4,8", "snr_db": "-5", "physical": "false"},
		quick: map[string]string{"trials": "2", "rx_antennas": "1,2,8", "T": "200", "ref_samples": "2000",
			"N": "2000", "fresh_factor": "4"},
	}))

	// Unequal SNR at a fixed mean SNR in dB, on the Fig. 3 setting.
	register(withDefaults(gaussSpec("snr-spread", FigureBeyond,
		"err2 vs the spread Δ of the per-worker SNR (offsets evenly spaced over ±Δ/2 dB, randomly assigned per trial; mean {snr_db} dB), {subposteriors} Gaussian subposteriors, T = {T}",
		"snr_spread_db", "spread of the per-worker SNR (dB)", false, "heterogeneous", "2000", "10",
		map[string]string{"trials": "4", "snr_spread_db": "0,20"}),
		map[string]string{"snr_spread_db": "0,5,10,15,20,30"}))

	// Analog against the ideal digital baselines, vs SNR and vs the channel
	// uses per sample, on the Fig. 3 setting. The side information (each
	// worker's mean and covariance) is charged at digitalSideBits bits per
	// real: free, it would hand the server the Gaussian subposteriors'
	// sufficient statistics (docs/BEYOND.md note 16).
	digital := map[string]string{"digital": "true", "side_info_bits": digitalSideBits}
	register(withDefaults(gaussSpec("analog-vs-digital", FigureBeyond,
		"analog schemes vs the ideal digital baselines (side information charged): err2 vs SNR, {subposteriors} Gaussian subposteriors, T = {T}",
		"snr_db", "SNR (dB)", false, "heterogeneous", "2000", "-10,-5,0,5,10,15,20,25,30",
		map[string]string{"trials": "4", "snr_db": "0,10,25"}), digital))
	register(withDefaults(gaussSpec("analog-vs-digital-uses", FigureBeyond,
		"analog schemes vs the ideal digital baselines (side information charged): err2 vs real channel uses per sample and worker (repetition l, m_r = l·d), {snr_db} dB, {subposteriors} Gaussian subposteriors, T = {T}",
		"repetition", "real channel uses per sample and worker over d (repetition l)", false, "heterogeneous", "2000", "10",
		map[string]string{"trials": "4", "repetition": "1,4"}),
		merge(digital, map[string]string{"repetition": "1,2,3,4,6,8"})))

	// Matched analog against practical digital at equal channel uses, power
	// and sample budget, vs SNR, on the Fig. 3 setting: the analog workers
	// precode to their samples' principal directions (precoder=whiten,
	// docs/MATH.md note 22), paying for their second moments in blocks;
	// the digital ones pay an SNR gap (gap_db) and codewords of finite
	// length (blocklength, error_prob) besides their side information.
	register(withDefaults(gaussSpec("matched-vs-practical", FigureBeyond,
		"matched analog (whiten precoder, second moments charged) vs practical digital (SNR gap {gap_db} dB, codewords of {blocklength} uses at ε = {error_prob}, side information charged): err2 vs SNR, {subposteriors} Gaussian subposteriors, T = {T}",
		"snr_db", "SNR (dB)", false, "heterogeneous", "2000", "-10,-5,0,5,10,15,20,25,30",
		map[string]string{"trials": "4", "snr_db": "0,10,25"}),
		merge(digital, practicalDefaults)))

	// Power control under Rayleigh fading on the Fig. 3 setting: the
	// paper's rule is full channel inversion with the long-term power
	// constraint (peak_power = 0); truncated inversion skips the blocks
	// whose inversion would exceed the peak.
	register(withDefaults(gaussSpec("power-control", FigureBeyond,
		"the paper's full channel inversion (peak 0) vs truncated inversion with peak energy P_peak per block: err2, {subposteriors} Gaussian subposteriors, {fading} fading, {snr_db} dB, T = {T}",
		"peak_power", "peak energy per block over the mean power P (0: the paper's full inversion)", false, "heterogeneous", "2000", "10",
		map[string]string{"trials": "4", "peak_power": peakQuick}),
		map[string]string{"fading": "rayleigh", "peak_power": peakSweep}))
}

// practicalDefaults are matched-vs-practical's settings beyond
// analog-vs-digital's: the whiten precoder on the analog side, and on the
// digital side the 1.53 dB gap of uniform constellations (the granular
// gap of a scalar quantiser: ½ log2(πe/6) = 0.254 bits per real dimension
// at high rate) and codewords of 1000 real uses, a worker's whole OMA
// budget at T = 2000 (200 blocks of d = 5 uses), at ε = 10⁻³.
var practicalDefaults = map[string]string{"precoder": "whiten", "gap_db": "1.53", "blocklength": "1000", "error_prob": "1e-3"}

// digitalSideBits is the default cost of side information in the
// analog-vs-digital experiments, in bits per real: far finer than the
// sampling error of a mean or covariance estimated from S ≈ 200 samples
// (about 7%), so the decoder's exact side information is not an
// approximation that favours digital.
const digitalSideBits = "8"

// The peak powers of the power-control experiment (P = 1), from the
// paper's inversion (0) up. Truncated inversion needs a peak of about
// 3.4 times the largest-to-mean ‖θ‖² of a worker's block
// (channel.Config.MinPeakPower): 15–31 on the blocks of one trial of this
// setting; a trial whose samples need more is a skip at that point.
const (
	peakSweep = "0,40,60,100,200"
	peakQuick = "0,100"
)

// withDefaults returns s with the defaults of the parameters in over
// replaced; it panics on a name that is not a parameter (a mistake in a
// registration).
func withDefaults(s runner.Spec, over map[string]string) runner.Spec {
	s.Params = slices.Clone(s.Params)
	for name, def := range over {
		i := slices.IndexFunc(s.Params, func(p runner.Param) bool { return p.Name == name })
		if i < 0 {
			panic(fmt.Sprintf("experiment %s: no parameter %q", s.ID, name))
		}
		s.Params[i].Default = def
	}
	return s
}

// merge returns the union of maps, later ones winning.
func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
