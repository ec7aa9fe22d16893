package claims

import (
	"fmt"
	"math"

	"github.com/wcmc-project/wcmc/scheme"
)

// Scheme groups of the paper's figures. cmc-noiseless is this project's
// reference (the Monte Carlo floor of an ideal channel), not a scheme of
// the paper, so "all the other schemes" never includes it.
var (
	wvcmc        = []string{scheme.WVCMCOMA, scheme.WVCMCNOMA}
	wgcmcAndGCMC = []string{scheme.GCMC, scheme.WGCMCOMA, scheme.WGCMCNOMA}
	wireless     = []string{scheme.GCMC, scheme.WGCMCOMA, scheme.WGCMCNOMA, scheme.WVCMCOMA, scheme.WVCMCNOMA}
	// probitOthers: the non-WVCMC schemes of the probit and MNIST figures,
	// which include the best single worker.
	probitOthers = []string{scheme.GCMC, scheme.WGCMCOMA, scheme.WGCMCNOMA, scheme.BestSingle}
)

// Metric pairs: the paper's metric first, then its fresh-signal twin
// (issue 8: in-sample err2 can vanish without the map having learned).
var (
	err2Pair = []string{"err2", "err2_fresh"}
	klPair   = []string{"kl", "kl_fresh"}
	err2Only = []string{"err2"}
)

// def is a claim before it is bound to a metric.
type def struct {
	id, exp, fig, sec, quote, source, threshold string
	// reading says how the quote's quantifier is read ("at every SNR").
	reading  string
	addition bool // not a statement of the paper (Claim.Addition)
	metrics  []string
	check    func(t *Trials) *node
	other    *otherDef
}

// otherDef is a second reading of a def's words (Claim.Other).
type otherDef struct {
	reading, threshold string
	check              func(t *Trials) *node
}

var registry = build(append(paperDefs, beyondDefs()...))

// paperDefs are the claims of the paper (and the project's additions beside
// them), in figure order.
var paperDefs = []def{
	// ---- Fig. 2: gauss-blocks (Sec. VI-A, Error vs number of communication blocks)
	{
		id: "fig2-wvcmc-noma-fastest", exp: "gauss-blocks", fig: "Fig. 2",
		sec:    "Sec. VI-A, Error vs number of communication blocks",
		quote:  "WVCMC with NOMA is seen to be the most communication-efficient approach",
		source: "paper; issue 2",
		threshold: "At the swept T nearest to 7 (which must be ≤ 10): wvcmc-noma's mean below that of every other scheme of the paper present there " +
			"(OMA schemes need S = T/K ≥ 2 and are absent at such T), beyond the 99% Monte Carlo margin.",
		reading: "at the swept T nearest to 7",
		metrics: err2Pair,
		check: func(t *Trials) *node {
			p, ok := nearT7(t)
			if !ok {
				return missing("wvcmc-noma has no value at a swept T ≤ 10")
			}
			return atPoints(t, pairsWith(scheme.WVCMCNOMA, []string{scheme.GCMC, scheme.WGCMCOMA, scheme.WGCMCNOMA, scheme.WVCMCOMA}),
				func(x float64) bool { return x == t.x[p] }, false, "at "+t.at(p))
		},
	},
	{
		id: "fig2-wvcmc-noma-vanishes", exp: "gauss-blocks", fig: "Fig. 2",
		sec:    "Sec. VI-A, Error vs number of communication blocks",
		quote:  "its test error vanishes for a number of blocks T≃7",
		source: "paper; issue 2",
		threshold: fmt.Sprintf("At the swept T nearest to 7 (which must be ≤ 10): at least %g%% of the trials of wvcmc-noma have an error below %g "+
			"(exact one-sided binomial test of the trials at or above it, at the 0.5%% level; an absolute statement, decided even where every trial "+
			"sits at the err2 floor).", 100*VanishShare, VanishLevel),
		reading: "absolutely: the error is negligible in most trials",
		metrics: err2Pair,
		check: func(t *Trials) *node {
			p, ok := nearT7(t)
			if !ok {
				return missing("wvcmc-noma has no value at a swept T ≤ 10")
			}
			return vanishesAt(t, p, scheme.WVCMCNOMA)
		},
		other: &otherDef{
			reading: "relatively: nothing is left to gain from more blocks",
			threshold: fmt.Sprintf("wvcmc-noma's mean at the swept T nearest to 7 is below %g× its mean at the largest swept T, "+
				"beyond the 99%% Monte Carlo margin.", NearFactor),
			check: func(t *Trials) *node {
				p0, ok := nearT7(t)
				ps := t.points(scheme.WVCMCNOMA)
				if !ok || ps[len(ps)-1] == p0 {
					return missing("wvcmc-noma needs values at a swept T ≤ 10 and at a larger T")
				}
				p1 := ps[len(ps)-1]
				return ratioLeaf(t, t.at(p0)+" vs "+t.at(p1), fmt.Sprintf("wvcmc-noma(%s) < %g×wvcmc-noma(%s)", t.at(p0), NearFactor, t.at(p1)),
					ref{scheme.WVCMCNOMA, p0}, 1, ref{scheme.WVCMCNOMA, p1}, NearFactor)
			},
		},
	},
	{
		id: "fig2-others-need-many-blocks", exp: "gauss-blocks", fig: "Fig. 2",
		sec:    "Sec. VI-A, Error vs number of communication blocks",
		quote:  "while the other schemes require a large number of communication blocks.",
		source: "paper",
		threshold: fmt.Sprintf("The OMA schemes cannot run below T = 2K (S = T/K ≥ 2). WGCMC-NOMA, the other scheme of the paper at the swept T nearest to 7: "+
			"its mean there is above %g× its mean at the largest swept T (it still has much to gain from more blocks), beyond the 99%% Monte Carlo margin.", NearFactor),
		reading: "at the swept T nearest to 7, every other scheme that runs there",
		metrics: err2Pair,
		check: func(t *Trials) *node {
			p0, ok := nearT7(t)
			ps := t.points(scheme.WGCMCNOMA)
			if !ok || len(ps) == 0 || !t.has(scheme.WGCMCNOMA, p0) || ps[len(ps)-1] == p0 {
				return missing("wgcmc-noma needs values at the swept T nearest to 7 and at a larger T")
			}
			p1 := ps[len(ps)-1]
			return ratioLeaf(t, t.at(p1)+" vs "+t.at(p0), fmt.Sprintf("%g×wgcmc-noma(%s) < wgcmc-noma(%s)", NearFactor, t.at(p1), t.at(p0)),
				ref{scheme.WGCMCNOMA, p1}, NearFactor, ref{scheme.WGCMCNOMA, p0}, 1)
		},
	},
	{
		id: "fig2-wgcmc-optimal", exp: "gauss-blocks", fig: "Fig. 2",
		sec:    "Sec. VI-A, Error vs number of communication blocks",
		quote:  "WGCMC, under both OMA and NOMA, is observed to attain optimality as the number of communication blocks, and hence of samples, increases.",
		source: "paper; issue 2",
		threshold: fmt.Sprintf("For wgcmc-oma and wgcmc-noma: the mean at the largest T is below the mean at the smallest T, and at the largest T "+
			"with cmc-noiseless (the Monte Carlo floor of S exact samples; NOMA has K× more samples than that floor) "+
			"it is below %g× the floor; each beyond the 99%% Monte Carlo margin.", NearFactor),
		reading: "from the smallest to the largest T, and at the largest",
		metrics: err2Pair,
		check: func(t *Trials) *node {
			var cs []*node
			for _, s := range []string{scheme.WGCMCOMA, scheme.WGCMCNOMA} {
				p0, p1, ok := endpoints(t, s)
				if !ok {
					return missing("%s needs values at two T", s)
				}
				cs = append(cs, ratioLeaf(t, t.at(p0)+" → "+t.at(p1), fmt.Sprintf("%s(%s) < %s(%s)", s, t.at(p1), s, t.at(p0)),
					ref{s, p1}, 1, ref{s, p0}, 1))
				ps := t.points(s, scheme.Noiseless)
				if len(ps) == 0 {
					return missing("no T has both %s and cmc-noiseless", s)
				}
				p := ps[len(ps)-1]
				cs = append(cs, ratioLeaf(t, t.at(p), factorTest(1, s, NearFactor, scheme.Noiseless), ref{s, p}, 1, ref{scheme.Noiseless, p}, NearFactor))
			}
			return allNode(cs...)
		},
	},
	{
		id: "fig2-gcmc-not-optimal", exp: "gauss-blocks", fig: "Fig. 2",
		sec:    "Sec. VI-A, Error vs number of communication blocks",
		quote:  "the conventional GCMC scheme is not asymptotically optimal with a large number of communication blocks.",
		source: "paper; issue 2",
		threshold: fmt.Sprintf("At the largest T with both: gcmc's mean above %g× cmc-noiseless's (the Monte Carlo floor at the same S; "+
			"the same factor within which WGCMC counts as optimal), beyond the 99%% Monte Carlo margin.", NearFactor),
		reading: "at the largest T",
		metrics: err2Pair,
		check: func(t *Trials) *node {
			ps := t.points(scheme.GCMC, scheme.Noiseless)
			if len(ps) == 0 {
				return missing("no T has both gcmc and cmc-noiseless")
			}
			p := ps[len(ps)-1]
			return ratioLeaf(t, t.at(p), factorTest(NearFactor, scheme.Noiseless, 1, scheme.GCMC), ref{scheme.Noiseless, p}, NearFactor, ref{scheme.GCMC, p}, 1)
		},
	},

	// ---- Fig. 3: gauss-snr (Sec. VI-A, Error vs SNR)
	{
		id: "fig3-wvcmc-best", exp: "gauss-snr", fig: "Fig. 3", sec: "Sec. VI-A, Error vs SNR",
		quote:     "WVCMC is seen to successfully adapt to different SNR levels, outperforming all the other schemes.",
		source:    "paper; issue 2",
		threshold: "At every SNR: the better of wvcmc-oma and wvcmc-noma below each of gcmc, wgcmc-oma, wgcmc-noma, beyond the 99% Monte Carlo margin.",
		reading:   "at every SNR",
		metrics:   err2Pair,
		check:     func(t *Trials) *node { return bestBeats(t, wvcmc, wgcmcAndGCMC, 1) },
	},
	{
		id: "fig3-wvcmc-flat", exp: "gauss-snr", fig: "Fig. 3", sec: "Sec. VI-A, Error vs SNR",
		quote:  "In fact, the error of WVCMC is essentially unaffected by the SNR level in the considered range.",
		source: "paper; issue 2",
		threshold: fmt.Sprintf("For wvcmc-oma and wvcmc-noma: the largest mean over the swept SNRs below %g× the smallest, "+
			"beyond the 99%% Monte Carlo margin (checked on every pair of swept SNRs, so that the largest and smallest are not picked "+
			"after seeing the data); or, for a curve at the err2 floor whose ratios are 1 by construction, the error vanished at every SNR "+
			"(at least %g%% of the trials below %g, exact binomial test), Holm-corrected over the two readings.", NearFactor, 100*VanishShare, VanishLevel),
		reading: "over the whole swept range",
		metrics: err2Pair,
		check:   func(t *Trials) *node { return flatOrVanished(t, wvcmc, NearFactor) },
	},
	{
		id: "fig3-wgcmc-oma-beats-gcmc", exp: "gauss-snr", fig: "Fig. 3", sec: "Sec. VI-A, Error vs SNR",
		quote:     "WGCMC under OMA is confirmed to be advantageous over conventional GCMC",
		source:    "paper; issues 2, 9",
		threshold: "At every swept SNR ≤ 10 dB: wgcmc-oma below gcmc, beyond the 99% Monte Carlo margin (above 10 dB the two are claimed to converge).",
		reading:   "at every SNR ≤ 10 dB",
		metrics:   err2Pair,
		check: func(t *Trials) *node {
			return atPoints(t, [][2]string{{scheme.WGCMCOMA, scheme.GCMC}}, func(x float64) bool { return x <= 10 }, false, "with SNR ≤ 10 dB")
		},
	},
	{
		id: "fig3-wgcmc-oma-meets-gcmc", exp: "gauss-snr", fig: "Fig. 3", sec: "Sec. VI-A, Error vs SNR",
		quote:  "with the performance of two schemes converging at high SNR.",
		source: "paper; issues 2, 9",
		threshold: fmt.Sprintf("At the highest swept SNR (which must be ≥ 20 dB): wgcmc-oma and gcmc within a factor %g of each other "+
			"(each below %g× the other beyond the 99%% Monte Carlo margin).", NearFactor, NearFactor),
		reading: "at the highest SNR",
		metrics: err2Pair,
		check:   func(t *Trials) *node { return nearAtTop(t, scheme.WGCMCOMA, scheme.GCMC, 20, NearFactor) },
	},
	{
		id: "fig3-wgcmc-noma-worse", exp: "gauss-snr", fig: "Fig. 3", sec: "Sec. VI-A, Error vs SNR",
		quote:     "WGCMC under NOMA is seen to be worse than that of OMA, due to the performance loss counted by the heterogeneity of the subposteriors",
		source:    "paper; issue 2",
		threshold: "At every SNR: wgcmc-oma below wgcmc-noma, beyond the 99% Monte Carlo margin.",
		reading:   "at every SNR",
		metrics:   err2Pair,
		check: func(t *Trials) *node {
			return atPoints(t, [][2]string{{scheme.WGCMCOMA, scheme.WGCMCNOMA}}, everywhere, false, "")
		},
		other: averageReading("SNRs", [][2]string{{scheme.WGCMCOMA, scheme.WGCMCNOMA}}),
	},
	{
		id: "fig3-wvcmc-noma-ahead", exp: "gauss-snr", fig: "Fig. 3", sec: "Sec. VI-A, Error vs SNR",
		quote:     "this is unlike the proposed WVCMC NOMA scheme, which remains advantageous over OMA.",
		source:    "paper; issue 2",
		threshold: "At every SNR: wvcmc-noma below wvcmc-oma, beyond the 99% Monte Carlo margin.",
		reading:   "at every SNR",
		metrics:   err2Pair,
		check: func(t *Trials) *node {
			return atPoints(t, [][2]string{{scheme.WVCMCNOMA, scheme.WVCMCOMA}}, everywhere, false, "")
		},
	},

	// ---- Fig. 4: probit-gradients (Sec. VI-B, Computational Efficiency at the Server)
	{
		id: "fig4-wvcmc-beats-sgld", exp: "probit-gradients", fig: "Fig. 4",
		sec:    "Sec. VI-B, Computational Efficiency at the Server",
		quote:  "by leveraging the computing power of K parallel workers, WVCMC can vastly outperform SGLD for the same number of computed gradients at the server.",
		source: "paper; issue 3",
		threshold: fmt.Sprintf("At some gradient budget where SGLD has samples (\"can\"): %g× the better WVCMC mean below SGLD's, "+
			"beyond the 99%% Monte Carlo margin, Holm-corrected over the budgets.", VastFactor),
		reading: "at some budget",
		metrics: err2Only,
		check:   func(t *Trials) *node { return bestBeatsSome(t, wvcmc, []string{scheme.SGLD}, VastFactor) },
		other:   everyBudgetReading(),
	},
	{
		id: "fig4-wvcmc-noma-best-late", exp: "probit-gradients", fig: "Fig. 4",
		sec:       "Sec. VI-B, Computational Efficiency at the Server",
		quote:     "WVCMC with NOMA is seen to achieve the best accuracy when the number of computed gradients are larger than 5×10^6",
		source:    "paper; issue 3",
		threshold: "At every swept budget > 5e6 gradients: wvcmc-noma below wvcmc-oma and below sgld, beyond the 99% Monte Carlo margin.",
		reading:   "at every budget above 5×10^6",
		metrics:   err2Only,
		check: func(t *Trials) *node {
			return atPoints(t, [][2]string{{scheme.WVCMCNOMA, scheme.WVCMCOMA}, {scheme.WVCMCNOMA, scheme.SGLD}},
				func(x float64) bool { return x > 5e6 }, false, "beyond 5e6 gradients")
		},
	},
	{
		id: "fig4-wvcmc-noma-least-spread", exp: "probit-gradients", fig: "Fig. 4",
		sec:    "Sec. VI-B, Computational Efficiency at the Server",
		quote:  "such a performance is attainable with least variance among all the schemes. The performance of WVCMC with OMA has a larger variance",
		source: "paper",
		threshold: "At every swept budget > 5e6 gradients: the trial-to-trial spread of wvcmc-noma (mean absolute deviation from its median, " +
			"Brown–Forsythe's measure) below that of wvcmc-oma and of sgld, beyond the 99% Monte Carlo margin (paired bootstrap).",
		reading: "at every budget above 5×10^6",
		metrics: err2Only,
		check: func(t *Trials) *node {
			return atPoints(t, [][2]string{{scheme.WVCMCNOMA, scheme.WVCMCOMA}, {scheme.WVCMCNOMA, scheme.SGLD}},
				func(x float64) bool { return x > 5e6 }, true, "beyond 5e6 gradients")
		},
	},

	// ---- Fig. 5: probit-snr (Sec. VI-B, Error vs SNR)
	{
		id: "fig5-wvcmc-best", exp: "probit-snr", fig: "Fig. 5", sec: "Sec. VI-B, Error vs SNR",
		quote:     "WVCMC is again confirmed to outperform all the other schemes.",
		source:    "paper; issue 3",
		threshold: "At every SNR: the better of wvcmc-oma and wvcmc-noma below each of gcmc, wgcmc-oma, wgcmc-noma, best-single, beyond the 99% Monte Carlo margin.",
		reading:   "at every SNR",
		metrics:   err2Pair,
		check:     func(t *Trials) *node { return bestBeats(t, wvcmc, probitOthers, 1) },
	},
	{
		id: "fig5-wvcmc-slight-low-snr", exp: "probit-snr", fig: "Fig. 5", sec: "Sec. VI-B, Error vs SNR",
		quote:  "for the non-Gaussian subposteriors considered here, the performance degrades slightly in the low-SNR regime.",
		source: "paper; issue 3 (\"degrades only slightly at low SNR\")",
		threshold: fmt.Sprintf("For wvcmc-oma and wvcmc-noma: the mean at the lowest swept SNR above the mean at the highest (it degrades) "+
			"and below %g× it (slightly), each beyond the 99%% Monte Carlo margin.", SlightFactor),
		reading: "degrades, and by at most a factor 2, from the highest to the lowest SNR",
		metrics: err2Pair,
		check:   func(t *Trials) *node { return degrades(t, true) },
		other: &otherDef{
			reading: "degrades at most slightly (an improvement also counts)",
			threshold: fmt.Sprintf("For wvcmc-oma and wvcmc-noma: the mean at the lowest swept SNR below %g× the mean at the highest, "+
				"beyond the 99%% Monte Carlo margin.", SlightFactor),
			check: func(t *Trials) *node { return degrades(t, false) },
		},
	},
	{
		id: "fig5-wgcmc-hurt", exp: "probit-snr", fig: "Fig. 5", sec: "Sec. VI-B, Error vs SNR",
		quote:  "Unlike WVCMC, the performance of WGCMC schemes is significantly decreased by the non-Gaussianity of the subposteriors.",
		source: "paper; issue 3",
		threshold: fmt.Sprintf("At every SNR: %g× the better WVCMC mean below each of wgcmc-oma and wgcmc-noma, "+
			"beyond the 99%% Monte Carlo margin.", VastFactor),
		reading: "at every SNR",
		metrics: err2Pair,
		check: func(t *Trials) *node {
			return bestBeats(t, wvcmc, []string{scheme.WGCMCOMA, scheme.WGCMCNOMA}, VastFactor)
		},
	},

	// ---- Fig. 6: probit-workers (Sec. VI-B, Error vs Number of workers)
	{
		id: "fig6-error-grows-with-k", exp: "probit-workers", fig: "Fig. 6", sec: "Sec. VI-B, Error vs Number of workers",
		quote:     "increasing the number of workers has a negative effect on all the schemes.",
		source:    "paper; issues 3, 9",
		threshold: "For each of gcmc, wgcmc-oma, wgcmc-noma, wvcmc-oma, wvcmc-noma: the mean at the smallest swept K below the mean at the largest, beyond the 99% Monte Carlo margin.",
		reading:   "from the smallest to the largest K, for every scheme",
		metrics:   err2Pair,
		check:     func(t *Trials) *node { return grows(t, wireless) },
	},
	{
		id: "fig6-oma-degrades-beyond-20", exp: "probit-workers", fig: "Fig. 6", sec: "Sec. VI-B, Error vs Number of workers",
		quote:  "For OMA, increasing K has the addition drawback of reducing the number of received samples for, which is seen to further degrade its performance for K≥20.",
		source: "paper; issue 3",
		threshold: "From the smallest swept K ≥ 20 to the largest K: the error of wvcmc-oma grows by a larger ratio than that of wvcmc-noma, " +
			"and wgcmc-oma's more than wgcmc-noma's (ratio of the growth ratios beyond its 99% Monte Carlo margin).",
		reading: "from the smallest K ≥ 20 to the largest",
		metrics: err2Pair,
		check: func(t *Trials) *node {
			return growsMore(t, [][2]string{{scheme.WVCMCOMA, scheme.WVCMCNOMA}, {scheme.WGCMCOMA, scheme.WGCMCNOMA}}, fromAtLeast(20), "K ≥ 20")
		},
	},

	// ---- Fig. 7: probit-heterogeneity (Sec. VI-B, Data Heterogeneity)
	{
		id: "fig7-heterogeneity-hurts", exp: "probit-heterogeneity", fig: "Fig. 7", sec: "Sec. VI-B, Data Heterogeneity",
		quote:     "increasing the heterogeneity of local data sets generally affects negatively to all schemes.",
		source:    "paper; issue 3",
		threshold: "For each of gcmc, wgcmc-oma, wgcmc-noma, wvcmc-oma, wvcmc-noma: the mean at the smallest swept ζ below the mean at the largest, beyond the 99% Monte Carlo margin.",
		reading:   "\"generally\": from the smallest to the largest ζ (not at every step), for every scheme",
		metrics:   err2Pair,
		check:     func(t *Trials) *node { return grows(t, wireless) },
	},
	{
		id: "fig7-noma-hurt-more", exp: "probit-heterogeneity", fig: "Fig. 7", sec: "Sec. VI-B, Data Heterogeneity",
		quote:  "the heterogeneity of local data sets has a stronger impact for NOMA than for OMA",
		source: "paper; issue 3",
		threshold: "From the smallest to the largest swept ζ: the error of wvcmc-noma grows by a larger ratio than that of wvcmc-oma, and " +
			"wgcmc-noma's more than wgcmc-oma's (ratio of the growth ratios beyond its 99% Monte Carlo margin).",
		reading: "from the smallest to the largest ζ",
		metrics: err2Pair,
		check: func(t *Trials) *node {
			return growsMore(t, [][2]string{{scheme.WVCMCNOMA, scheme.WVCMCOMA}, {scheme.WGCMCNOMA, scheme.WGCMCOMA}}, fromFirst, "the smallest ζ")
		},
	},

	// ---- Fig. 8: probit-highdim (Sec. VI-B, Higher-Dimensional Data)
	{
		id: "fig8-wvcmc-best", exp: "probit-highdim", fig: "Fig. 8", sec: "Sec. VI-B, Higher-Dimensional Data",
		quote:  "WVCMC is seen to significantly outperform all the other schemes.",
		source: "paper; issue 3",
		threshold: fmt.Sprintf("At every SNR: %g× the better WVCMC mean below each of gcmc, wgcmc-oma, wgcmc-noma, best-single, "+
			"beyond the 99%% Monte Carlo margin.", VastFactor),
		reading: "at every SNR",
		metrics: err2Pair,
		check:   func(t *Trials) *node { return bestBeats(t, wvcmc, probitOthers, VastFactor) },
	},
	{
		id: "fig8-oma-ahead", exp: "probit-highdim", fig: "Fig. 8", sec: "Sec. VI-B, Higher-Dimensional Data",
		quote:  "as compared to the case of lower-dimensional data, OMA is seen to be generally advantageous with respect to NOMA",
		source: "paper; issue 3",
		threshold: "On average over the swept SNRs (\"generally\"): wvcmc-oma below wvcmc-noma and wgcmc-oma below wgcmc-noma, the mean over the SNRs " +
			"of the log ratio of their means beyond its 99% Monte Carlo margin (on the figure's log axis, one curve lies below the other on average).",
		reading: "\"generally\": on average over the SNRs",
		metrics: err2Pair,
		check: func(t *Trials) *node {
			return onAverage(t, [][2]string{{scheme.WVCMCOMA, scheme.WVCMCNOMA}, {scheme.WGCMCOMA, scheme.WGCMCNOMA}}, everywhere, "")
		},
		other: &otherDef{
			reading:   "at every SNR",
			threshold: "At every SNR: wvcmc-oma below wvcmc-noma and wgcmc-oma below wgcmc-noma, beyond the 99% Monte Carlo margin.",
			check: func(t *Trials) *node {
				return atPoints(t, [][2]string{{scheme.WVCMCOMA, scheme.WVCMCNOMA}, {scheme.WGCMCOMA, scheme.WGCMCNOMA}}, everywhere, false, "")
			},
		},
	},

	// ---- Fig. 9: mnist-gradients (Sec. VI-C, Computational Efficiency at the Server)
	{
		id: "fig9-wvcmc-beats-sgld", exp: "mnist-gradients", fig: "Fig. 9",
		sec:    "Sec. VI-C, Computational Efficiency at the Server",
		quote:  "Confirming the results in Fig. 4, WVCMC can vastly outperform SGLD for the same number of computed gradients at the server.",
		source: "paper; issue 4",
		threshold: fmt.Sprintf("At some gradient budget where SGLD has samples (\"can\"): %g× the better WVCMC mean below SGLD's, "+
			"beyond the 99%% Monte Carlo margin, Holm-corrected over the budgets.", VastFactor),
		reading: "at some budget",
		metrics: err2Only,
		check:   func(t *Trials) *node { return bestBeatsSome(t, wvcmc, []string{scheme.SGLD}, VastFactor) },
		other:   everyBudgetReading(),
	},
	{
		id: "fig9-wvcmc-oma-best", exp: "mnist-gradients", fig: "Fig. 9",
		sec:    "Sec. VI-C, Computational Efficiency at the Server",
		quote:  "for MNIST, WVCMC with OMA is seen to achieve the best accuracy in terms of mean and variance performance.",
		source: "paper; issue 4",
		threshold: "At the largest swept budget: wvcmc-oma's mean below wvcmc-noma's and sgld's (99% Monte Carlo margin), and its spread " +
			"(mean absolute deviation from its median) below theirs, each beyond the 99% Monte Carlo margin.",
		reading: "at the largest budget",
		metrics: err2Only,
		check: func(t *Trials) *node {
			pairs := [][2]string{{scheme.WVCMCOMA, scheme.WVCMCNOMA}, {scheme.WVCMCOMA, scheme.SGLD}}
			keep := lastPointOnly(t, scheme.WVCMCOMA, scheme.WVCMCNOMA, scheme.SGLD)
			return merge(atPoints(t, pairs, keep, false, "with all three schemes"), atPoints(t, pairs, keep, true, "with all three schemes"))
		},
	},

	// ---- Fig. 10: mnist-snr (Sec. VI-C, Error vs SNR)
	{
		id: "fig10-wvcmc-best", exp: "mnist-snr", fig: "Fig. 10", sec: "Sec. VI-C, Error vs SNR",
		quote:     "WVCMC is confirmed to outperform all the other schemes",
		source:    "paper; issue 4",
		threshold: "At every SNR: the better of wvcmc-oma and wvcmc-noma below each of gcmc, wgcmc-oma, wgcmc-noma, best-single, beyond the 99% Monte Carlo margin.",
		reading:   "at every SNR",
		metrics:   err2Pair,
		check:     func(t *Trials) *node { return bestBeats(t, wvcmc, probitOthers, 1) },
	},
	{
		id: "fig10-oma-ahead", exp: "mnist-snr", fig: "Fig. 10", sec: "Sec. VI-C, Error vs SNR",
		quote:     "and OMA outperforms NOMA due to the heterogeneous subposteriors.",
		source:    "paper; issue 4",
		threshold: "At every SNR: wvcmc-oma below wvcmc-noma, beyond the 99% Monte Carlo margin.",
		reading:   "at every SNR",
		metrics:   err2Pair,
		check: func(t *Trials) *node {
			return atPoints(t, [][2]string{{scheme.WVCMCOMA, scheme.WVCMCNOMA}}, everywhere, false, "")
		},
		other: averageReading("SNRs", [][2]string{{scheme.WVCMCOMA, scheme.WVCMCNOMA}}),
	},
	{
		id: "fig10-gaussian-schemes-worse-high-snr", exp: "mnist-snr", fig: "Fig. 10", sec: "Sec. VI-C, Error vs SNR",
		quote:     "for GCMC and WGCMC, the error is seen to increase in high SNR regime, suggesting that the presence of Gaussian noise in low SNR is actually advantageous",
		source:    "paper; issue 4",
		threshold: "For each of gcmc, wgcmc-oma, wgcmc-noma: the mean at the lowest swept SNR below the mean at the highest, beyond the 99% Monte Carlo margin.",
		reading:   "from the lowest to the highest SNR, for every scheme",
		metrics:   err2Pair,
		check:     func(t *Trials) *node { return grows(t, wgcmcAndGCMC) },
	},
	{
		id: "fig10-below-single-worker", exp: "mnist-snr", fig: "Fig. 10", sec: "Sec. VI-C, Error vs SNR",
		quote:     "WGCMC with OMA and GCMC is seen to perform worse than the single-worker benchmark.",
		source:    "paper",
		threshold: "For each of wgcmc-oma and gcmc, at every SNR: its mean above best-single's, beyond the 99% Monte Carlo margin.",
		reading:   "at every SNR (the sentence has no qualifier)",
		metrics:   err2Pair,
		check: func(t *Trials) *node {
			return atPoints(t, [][2]string{{scheme.BestSingle, scheme.WGCMCOMA}, {scheme.BestSingle, scheme.GCMC}}, everywhere, false, "")
		},
		other: &otherDef{
			reading: "at some SNR",
			threshold: "For each of wgcmc-oma and gcmc: at some swept SNR its mean is above best-single's, beyond the 99% Monte Carlo margin, " +
				"Holm-corrected over the SNRs (fails if at every SNR it is significantly below best-single).",
			check: func(t *Trials) *node {
				return someWhereEach(t, scheme.BestSingle, []string{scheme.WGCMCOMA, scheme.GCMC})
			},
		},
	},

	// ---- Fig. 11: mnist-kl (Sec. VI-C, Evaluation of Inference Performance)
	{
		id: "fig11-kl-wvcmc-best", exp: "mnist-kl", fig: "Fig. 11", sec: "Sec. VI-C, Evaluation of Inference Performance",
		quote:     "The results in Fig. 11 confirm the conclusions shown from Fig. 5 and Fig. 8 in terms of the advantages with respect to all benchmarks.",
		source:    "paper; issue 4",
		threshold: "At every SNR: the better of wvcmc-oma and wvcmc-noma has a predictive KL below each of gcmc, wgcmc-oma, wgcmc-noma, best-single, beyond the 99% Monte Carlo margin.",
		reading:   "at every SNR",
		metrics:   klPair,
		check:     func(t *Trials) *node { return bestBeats(t, wvcmc, probitOthers, 1) },
	},
	{
		id: "fig11-kl-oma-ahead", exp: "mnist-kl", fig: "Fig. 11", sec: "Sec. VI-C, Evaluation of Inference Performance",
		quote:     "The project's addition (the paper says this of Fig. 10's err2, not of Fig. 11): OMA outperforms NOMA in predictive KL too.",
		source:    "the project's addition",
		addition:  true,
		threshold: "At every SNR: wvcmc-oma's predictive KL below wvcmc-noma's, beyond the 99% Monte Carlo margin.",
		reading:   "at every SNR",
		metrics:   klPair,
		check: func(t *Trials) *node {
			return atPoints(t, [][2]string{{scheme.WVCMCOMA, scheme.WVCMCNOMA}}, everywhere, false, "")
		},
	},
}

// nearT7 returns the sweep point, among those ≤ 10 where wvcmc-noma has a
// value, whose T is nearest to the paper's T ≃ 7 (the larger on a tie).
func nearT7(t *Trials) (int, bool) {
	best, found := 0, false
	for _, p := range t.points(scheme.WVCMCNOMA) {
		x := t.x[p]
		if x > 10 {
			continue
		}
		if !found || math.Abs(x-7) <= math.Abs(t.x[best]-7) {
			best, found = p, true
		}
	}
	return best, found
}

// pairsWith returns the pairs (a, o) for each o in others.
func pairsWith(a string, others []string) [][2]string {
	out := make([][2]string, len(others))
	for i, o := range others {
		out[i] = [2]string{a, o}
	}
	return out
}

// build binds every def to each of its metrics; the second metric's claim
// (the fresh-signal twin) gets the ID suffix "-fresh".
func build(defs []def) []Claim {
	var out []Claim
	seen := map[string]bool{}
	for _, d := range defs {
		for i, m := range d.metrics {
			id, src := d.id, d.source
			if i > 0 {
				id += "-fresh"
				src += "; checked on fresh signals (issue 8)"
			}
			if seen[id] {
				panic("claims: duplicate claim ID " + id)
			}
			seen[id] = true
			c := Claim{
				ID: id, Experiment: d.exp, Figure: d.fig, Section: d.sec, Quote: d.quote, Source: src,
				Addition: d.addition, Metric: m, Reading: d.reading, Threshold: d.threshold,
				MapFree: mapFree(d.check),
				formula: d.check,
			}
			if d.other != nil {
				c.Other = &Reading{Name: d.other.reading, Threshold: d.other.threshold, formula: d.other.check}
			}
			out = append(out, c)
		}
	}
	return out
}

// averageReading is the reading "on average over the sweep" of a claim
// that a is below b, read "at every point" first.
func averageReading(points string, pairs [][2]string) *otherDef {
	return &otherDef{
		reading: "on average over the " + points,
		threshold: fmt.Sprintf("On average over the swept %s: %s, the mean over them of the log ratio of the means beyond its 99%% Monte Carlo margin.",
			points, pairList(pairs)),
		check: func(t *Trials) *node { return onAverage(t, pairs, everywhere, "") },
	}
}

// everyBudgetReading is the reading "at every budget" of "WVCMC can
// vastly outperform SGLD".
func everyBudgetReading() *otherDef {
	return &otherDef{
		reading: "at every budget",
		threshold: fmt.Sprintf("At every gradient budget where SGLD has samples: %g× the better WVCMC mean below SGLD's, "+
			"beyond the 99%% Monte Carlo margin.", VastFactor),
		check: func(t *Trials) *node { return bestBeats(t, wvcmc, []string{scheme.SGLD}, VastFactor) },
	}
}

// degrades: for wvcmc-oma and wvcmc-noma, the mean at the lowest swept SNR
// is below SlightFactor× the mean at the highest, and, when worse is set,
// above it.
func degrades(t *Trials, worse bool) *node {
	var cs []*node
	for _, s := range wvcmc {
		p0, p1, ok := endpoints(t, s)
		if !ok {
			continue
		}
		if worse {
			cs = append(cs, ratioLeaf(t, t.at(p1)+" vs "+t.at(p0), fmt.Sprintf("%s(%s) < %s(%s)", s, t.at(p1), s, t.at(p0)),
				ref{s, p1}, 1, ref{s, p0}, 1))
		}
		cs = append(cs, ratioLeaf(t, t.at(p0)+" vs "+t.at(p1),
			fmt.Sprintf("%s(%s) < %g×%s(%s)", s, t.at(p0), SlightFactor, s, t.at(p1)), ref{s, p0}, 1, ref{s, p1}, SlightFactor))
	}
	if len(cs) == 0 {
		return missing("needs wvcmc values at two SNRs")
	}
	return allNode(cs...)
}

// mapFree reports whether check compares only schemes that learn no map,
// by building its formula on a probe: every scheme of the paper's figures
// at sweep points covering the thresholds the checks use (T ≈ 7, SNR ≥ 20
// dB, K ≥ 20, budgets above 5×10⁶), and looking at the schemes it used.
func mapFree(check func(t *Trials) *node) bool {
	t := &Trials{Metric: "err2", XName: "x",
		x: map[int]float64{}, vals: map[string]map[int][]trialValue{}, used: map[string]bool{}}
	all := []string{scheme.GCMC, scheme.WGCMCOMA, scheme.WGCMCNOMA, scheme.WVCMCOMA, scheme.WVCMCNOMA,
		scheme.Noiseless, scheme.BestSingle, scheme.SGLD}
	for p, x := range []float64{1, 7, 10, 20, 30, 1e7} {
		for _, s := range all {
			t.add(s, p, x, 0, 1)
			t.add(s, p, x, 1, 2)
		}
	}
	check(t)
	return !t.usedVariational()
}
