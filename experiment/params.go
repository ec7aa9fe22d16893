package experiment

import "wcmc/runner"

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

func boolParam(name, def, doc string) runner.Param {
	return runner.Param{Name: name, Kind: runner.Bool, Default: def, Doc: doc}
}

// linkParams are the channel settings shared by the wireless experiments.
func linkParams(fading, repetition, snr string) []runner.Param {
	return []runner.Param{
		choiceParam("fading", fading, "channel matrices H_k: flat (H=I) or rayleigh (i.i.d. N(0,1), m_r×(m_r+extra_tx), redrawn per block)", "flat", "rayleigh"),
		intParam("repetition", repetition, "analog repetition factor l: E_k = √P_k (1_l ⊗ I_d), m_r = l·d", 1),
		intParam("extra_tx", "2", "m_t − m_r for rayleigh fading (paper: 2)", 2),
		positiveParam("power", "1", "transmit power budget P (eq: power constraint); sets the scale of y, hence of WVCMC's gradients"),
		floatParam("snr_db", snr, "SNR = P/(m_r N0) in dB"),
		boolParam("physical", "true", "simulate the physical chain (draw H, zero-force, transmit) rather than the equivalent y = Eθ + n"),
	}
}

// optimizerParams selects the WVCMC optimiser (consensus.SGD, LBFGS, Adam).
func optimizerParams(def string) []runner.Param {
	return append([]runner.Param{
		choiceParam("optimizer", def, "WVCMC optimiser: lbfgs (full batch, no step to tune), adam (minibatches, relative step adam_step), or sgd (the paper's fixed step eta_* for iters_* iterations)", "lbfgs", "adam", "sgd"),
		positiveParam("adam_step", "0.01", "Adam's step relative to the RMS entry of the start map (decays linearly to 0)"),
		intParam("lbfgs_iters", "1000", "maximum L-BFGS iterations (it stops earlier on a small gradient or a stalled objective)", 1),
		runner.Param{Name: "holdout", Kind: runner.Float, Default: "0.2", Doc: "fraction of the received signals held out to stop lbfgs/adam early on the held-out objective (0 = off; never used by sgd)", Min: 0, Max: 0.9, HasMin: true, HasMax: true},
	}, protocolParams()...)
}
