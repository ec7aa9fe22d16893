package experiment

import (
	"fmt"

	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

// Parameter constructors keep the specs readable.

func intParam(name, def, doc string, min float64) runner.Param {
	return runner.Param{Name: name, Kind: runner.Int, Default: def, Doc: doc, Min: min, HasMin: true}
}

func floatParam(name, def, doc string) runner.Param {
	return runner.Param{Name: name, Kind: runner.Float, Default: def, Doc: doc}
}

func positiveParam(name, def, doc string) runner.Param {
	return runner.Param{Name: name, Kind: runner.Float, Default: def, Doc: doc, Positive: true}
}

func choiceParam(name, def, doc string, choices ...string) runner.Param {
	return runner.Param{Name: name, Kind: runner.String, Default: def, Doc: doc, Choices: choices}
}

func stringParam(name, def, doc string) runner.Param {
	return runner.Param{Name: name, Kind: runner.String, Default: def, Doc: doc}
}

func nonNegParam(name, def, doc string) runner.Param {
	return runner.Param{Name: name, Kind: runner.Float, Default: def, Doc: doc, Min: 0, HasMin: true}
}

func boolParam(name, def, doc string) runner.Param {
	return runner.Param{Name: name, Kind: runner.Bool, Default: def, Doc: doc}
}

// linkParams are the channel settings shared by the wireless experiments:
// the paper's link, the channel models beyond it (docs/BEYOND.md notes
// 12–15; each off at its default, which is the paper's link bit for bit)
// and the ideal digital baselines (note 16; off unless digital=true).
func linkParams(fading, repetition, snr string) []runner.Param {
	ps := []runner.Param{
		choiceParam("fading", fading, "channel matrices H_k: flat (H=I), rayleigh (i.i.d. N(0,1), m_r×(m_r+extra_tx), redrawn per block; CN(0,1) with complex) or rician (line of sight plus CN(0,1) scattering, K-factor k_factor; needs complex)", "flat", "rayleigh", "rician"),
		intParam("repetition", repetition, "analog repetition factor l: E_k = √P_k (1_l ⊗ I_d), m_r = l·d", 1),
		intParam("extra_tx", "2", "m_t − m_r for rayleigh or rician fading (paper: 2; counted in complex dimensions with complex)", 1),
		positiveParam("power", "1", "transmit power budget P (eq: power constraint); sets the scale of y, hence of WVCMC's gradients"),
		floatParam("snr_db", snr, "SNR = P/(m_r N0) in dB (with per-worker gains: the reference SNR, the mean per-worker SNR in dB)"),
		boolParam("physical", "true", "simulate the physical chain (draw H, zero-force, transmit) rather than the equivalent y = Eθ + n (or its exact equivalent in law under imperfect CSI or peak power, docs/BEYOND.md (12.7))"),
	}
	return append(append(ps, beyondParams()...), digitalParams()...)
}

// beyondParams are the channel models beyond the paper (docs/BEYOND.md
// notes 12–15 and 17, docs/MATH.md note 20), all off at their defaults.
func beyondParams() []runner.Param {
	return added(beyond(
		nonNegParam("csi_error", "0", "imperfect CSI: variance σ_e² of the error of the workers' channel estimate Ĥ = H + E, relative to H's unit-power entries (docs/BEYOND.md (12.1)), at most 1e10 (one pilot at −100 dB); 0 = perfect CSI; needs rayleigh or rician fading"),
		intParam("pilot_len", "0", "imperfect CSI from pilots: length L_p ≥ m_t of the orthogonal pilots of the MMSE channel estimate (docs/BEYOND.md (12.2)); 0 = no pilots (with pilots=true: L_p = m_t, the fewest)", 0),
		floatParam("pilot_snr_db", "0", "SNR ρ_p of one pilot symbol at unit large-scale gain, in dB within ±100 (with pilot_len, pilots=false: the free pilots)"),
		stringParam("snr_offsets_db", "", "per-worker SNR offsets in dB relative to snr_db, a comma list with one entry per worker, each within ±100 dB (docs/BEYOND.md (13.3)); empty = equal SNR"),
		nonNegParam("snr_spread_db", "0", "per-worker SNR offsets evenly spaced over [−Δ/2, Δ/2] dB (Δ this value, at most 200), assigned to the workers in a random order drawn per trial: the mean per-worker SNR in dB stays snr_db; 0 = equal SNR"),
		nonNegParam("d_min", "0", "path loss (docs/BEYOND.md (13.4)): smallest worker distance d_min > 0 (distances uniform in [d_min, d_max], drawn per trial); 0 = off"),
		nonNegParam("d_max", "0", "path loss: largest worker distance d_max ≥ d_min"),
		nonNegParam("path_exponent", "0", "path loss: exponent α of β_k = (d_k/d_ref)^−α, d_ref chosen so that the mean per-worker SNR in dB is snr_db"),
		boolParam("complex", "false", "complex baseband channel: the real symbols on I and Q, ⌈m_r/2⌉ complex uses per block (docs/BEYOND.md note 14)"),
		nonNegParam("k_factor", "0", "Rician K-factor, line-of-sight over scattered power, at most 1e6 (60 dB) (fading=rician only)"),
		nonNegParam("peak_power", "0", "truncated channel inversion: peak energy per block P_peak > P; a worker skips the blocks whose inversion would exceed it (outage, docs/BEYOND.md note 15); 0 = the paper's full inversion; needs rayleigh fading"),
		intParam("coherence", "1", "block fading: sample blocks T_c that share one channel realisation, drawn anew (independently) at the next interval (docs/MATH.md note 20); 1 = a new channel every block, the paper's; needs rayleigh or rician fading", 1),
		boolParam("pilots", "false", "charged pilots (docs/MATH.md note 20): each worker estimates its channel once per coherence interval by MMSE from L_p orthogonal pilot uses (pilot_len, default m_t) at the data SNR plus pilot_boost_db, and the pilot uses come out of the samples' channel uses (per worker under OMA, K·L_p per interval under NOMA); needs rayleigh or rician fading, excludes csi_error, pilot_snr_db and centre"),
		floatParam("pilot_boost_db", "0", "with pilots=true: the pilot SNR over the data SNR snr_db, in dB (0 = pilots at the data SNR; snr_db + pilot_boost_db within ±100)"),
		boolParam("centre", "false", "mean-centred transmission (docs/BEYOND.md note 17): each worker sends its samples minus their mean m_k, with P_k set by the fluctuations, and m_k digitally (error variance ≤ 1% of its smallest marginal variance) in blocks taken from the samples' budget; the server adds back the combined mean; needs perfect CSI, no peak_power, no rician fading"),
		intParam("rx_antennas", "1", "receive antennas N_r per received dimension (docs/MATH.md note 21): the server combines its N_r·m_r antennas with a beamformer (OMA: each worker's dominant channel subspace; NOMA: the AirComp beamformer of the K workers) through which the workers zero-force; 1 = the paper's single antenna; at most 64, real channel (flat or rayleigh), no peak_power, no digital baselines", 1),
		choiceParam("precoder", "identity", "analog precoder (docs/MATH.md note 22): identity (the paper's E_k = √P_k B) or whiten (each worker rotates to the principal directions of its samples' second moment and reverse water-fills the power on √λ, the MSE-optimal linear encoder; its second moment goes first as side information, coded as centre's means, in blocks taken from the samples' budget; needs perfect CSI, no peak_power, no rician fading)", "identity", "whiten"),
	)...)
}

// digitalParams select the ideal digital baselines (docs/BEYOND.md
// note 16).
func digitalParams() []runner.Param {
	return added(beyond(
		boolParam("digital", "false", "also run the ideal digital baselines "+fmt.Sprint(scheme.Digital)+": samples quantised and sent at the Shannon rate of the analog scheme's channel uses and energy"),
		choiceParam("digital_capacity", "zf", "rate of the digital link: zf (the analog scheme's zero-forcing transmitter, (16.3)), isotropic (no channel state, (16.4)) or waterfilling (channel state and long-term power, (16.5))", "zf", "isotropic", "waterfilling"),
		choiceParam("digital_quantizer", digitalTestChannel, "quantiser of digital-gcmc: "+digitalTestChannel+" (the rate–distortion bound, MMSE reconstruction), "+digitalPosterior+" (a draw from p(x | code) instead of its mean), "+digitalAdditive+" (x + white noise at the same rate), "+digitalUniform+" or "+digitalDither+" (scalar uniform quantisers); the digital-wgcmc schemes always use "+digitalAdditive,
			digitalTestChannel, digitalPosterior, digitalAdditive, digitalUniform, digitalDither),
		nonNegParam("side_info_bits", "0", "bits charged per real of side information (each worker's mean and covariance, d + d(d+1)/2 reals) against the digital link's rate; 0 = free"),
		nonNegParam("gap_db", "0", "practical digital link: SNR gap Γ in dB of its code, modulation and quantisation, the rate being capacity at SNR/Γ (docs/BEYOND.md (16.10); 1.53 = the shaping gap of uniform constellations, the granular gap of a scalar quantiser); 0 = capacity"),
		intParam("blocklength", "0", "practical digital link: real channel uses n of one codeword, the rate being the normal approximation at error probability error_prob (docs/BEYOND.md (16.10)); 0 = unbounded", 0),
		runner.Param{Name: "error_prob", Kind: runner.Float, Default: "1e-3", Doc: "codeword error probability ε of the normal approximation (used with blocklength > 0)", Min: 1e-12, Max: 0.49, HasMin: true, HasMax: true},
	)...)
}

// added marks parameters added to the paper's experiments after results
// of them were stored: their defaults run the experiments as before
// (runner.Param.Added), so those results still load.
func added(ps ...runner.Param) []runner.Param {
	for i := range ps {
		ps[i].Added = true
	}
	return ps
}

// beyond marks parameters of models or baselines beyond the paper
// (runner.Param.Beyond).
func beyond(ps ...runner.Param) []runner.Param {
	for i := range ps {
		ps[i].Beyond = true
	}
	return ps
}

// optimizerParams selects the WVCMC optimiser (consensus.SGD, LBFGS, Adam)
// and the protocols (protocolParams, with the converged protocol's
// default tolerance convergedTol).
func optimizerParams(def, convergedTol string) []runner.Param {
	return append([]runner.Param{
		choiceParam("optimizer", def, "WVCMC optimiser: lbfgs (full batch, no step to tune), adam (minibatches, relative step adam_step), or sgd (the paper's fixed step eta_* for iters_* iterations)", "lbfgs", "adam", "sgd"),
		positiveParam("adam_step", "0.01", "Adam's step relative to the RMS entry of the start map (decays linearly to 0)"),
		intParam("lbfgs_iters", "1000", "maximum L-BFGS iterations (it stops earlier on a small gradient or a stalled objective)", 1),
		runner.Param{Name: "holdout", Kind: runner.Float, Default: "0.2", Doc: "fraction of the received signals held out to stop lbfgs/adam early on the held-out objective (0 = off; never used by sgd)", Min: 0, Max: 0.9, HasMin: true, HasMax: true},
	}, protocolParams(convergedTol)...)
}
