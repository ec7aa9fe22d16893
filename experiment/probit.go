package experiment

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/consensus"
	"github.com/wcmc-project/wcmc/internal/seed"
	"github.com/wcmc-project/wcmc/metric"
	"github.com/wcmc-project/wcmc/model"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

// Sec. VI-B: Bayesian probit regression (eq: probit model) on synthetic
// data, prior N(0, σ² I). Workers run the Albert–Chib Gibbs sampler on
// their shards with the tempered prior N(0, Kσ² I); the reference is
// S_g = 20000 Gibbs samples of the global posterior (burn-in 100). The
// link is the paper's: H_k i.i.d. N(0,1) of size 2d×(2d+2), repetition
// E_k = √P_k [I_d, I_d]ᵀ.

// SchemeBestSingle is the best single worker over OMA: the decoded samples
// E_k^† y_k of the worker with the smallest err2 (an oracle benchmark).
const SchemeBestSingle = scheme.BestSingle

var probitSchemes = append(append([]string(nil), wirelessSchemes...), SchemeBestSingle)

var probitMetrics, probitMetricLabels = withUncertainty([]string{"err2", "err2_fresh", "kl", "kl_fresh"}, map[string]string{
	"err2":       "second-order test error, in-sample",
	"err2_fresh": "second-order test error on fresh signals",
	"kl":         "predictive KL divergence on test inputs (nats)",
	"kl_fresh":   "predictive KL divergence on fresh signals (nats)",
}, true, "fresh signals")

func registerProbit() {
	register(probitSpec(probitVariant{
		id: "probit-snr", fig: "Fig. 5", x: "snr_db", xlabel: "SNR (dB)",
		desc: "probit regression (d = {d}, N = {N}): err2 vs SNR, T = {T}, K = {K}",
		over: map[string]string{"snr_db": "0,5,10,15,20,25,30,35"},
		quick: map[string]string{"trials": "2", "snr_db": "5,25", "T": "200", "ref_samples": "2000",
			"N": "2000", "fresh_factor": "4"},
	}))
	register(probitSpec(probitVariant{
		id: "probit-workers", fig: "Fig. 6", x: "K", xlabel: "workers K", logx: true,
		desc: "probit regression (d = {d}, N = {N}): err2 vs number of workers K, SNR {snr_db} dB, T = {T}",
		over: map[string]string{"K": "5,10,20,30,40,50", "snr_db": "35",
			"eta_oma": "2e-5", "eta_noma": "2e-6", "eta_over_k": "true"},
		quick: map[string]string{"trials": "2", "K": "5,20", "T": "200", "ref_samples": "2000",
			"N": "2000", "fresh_factor": "4"},
	}))
	register(probitSpec(probitVariant{
		id: "probit-heterogeneity", fig: "Fig. 7", x: "zeta", xlabel: "heterogeneity ζ",
		desc: "probit regression (d = {d}, N = {N}): err2 vs class skew ζ of the shards (worker k: share ∝ k^-ζ of class 1, ∝ (K−k+1)^-ζ of class 0), {snr_db} dB, T = {T}, K = {K}",
		over: map[string]string{"zeta": "0,0.5,1,1.5,2", "snr_db": "20", "partition": "heterogeneous"},
		quick: map[string]string{"trials": "2", "zeta": "0,2", "T": "200", "ref_samples": "2000",
			"N": "2000", "fresh_factor": "4"},
	}))
	register(probitSpec(probitVariant{
		id: "probit-highdim", fig: "Fig. 8", x: "snr_db", xlabel: "SNR (dB)",
		desc: "probit regression, d = {d}, N = {N}: err2 vs SNR, T = {T}, K = {K}",
		over: map[string]string{"snr_db": "0,10,20,30", "d": "300", "N": "15000", "T": "10000",
			"eta_oma": "1e-7", "eta_noma": "5e-9", "trials": "3", "physical": "false", "fresh_factor": "2"},
		quick: map[string]string{"trials": "1", "snr_db": "20", "d": "40", "N": "3000", "T": "400",
			"K": "10", "ref_samples": "1000", "fresh_factor": "2", "lbfgs_iters": "50"},
	}))
}

// probitVariant is what distinguishes the synthetic probit experiments.
type probitVariant struct {
	id, fig, x, xlabel string
	desc               string // a template: {name} is the value of parameter name (see describe)
	logx               bool
	over               map[string]string // defaults that differ from probitParams
	quick              map[string]string
}

func probitParams() []runner.Param {
	ps := []runner.Param{
		intParam("d", "5", "parameter dimension d (d = 5 uses the paper's θ*; otherwise dataset.ThetaStar(d))", 1),
		intParam("N", "8500", "training points N", 2),
		intParam("n_test", "2000", "held-out test points for the predictive KL", 1),
		positiveParam("prior_var", "1", "prior variance σ² of p(θ) = N(0, σ² I) (not in the paper); workers use Kσ²"),
		intParam("K", "20", "number of workers K", 1),
		intParam("T", "1000", "communication blocks T: OMA delivers S = ⌊T/K⌋ samples per worker, NOMA S = T", 1),
		choiceParam("partition", "equal", "how the data are split: equal (random, sizes differ by ≤ 1) or heterogeneous (class skew ζ)", "equal", "heterogeneous"),
		floatParam("zeta", "0", "class-skew exponent ζ ≥ 0 of the heterogeneous partition"),
		intParam("ref_samples", "20000", "S_g, samples of the global posterior used as reference (drawn by ref_sampler)", 2),
		intParam("burnin", "100", "burn-in transitions of every chain (workers and reference; HMC adapts its step during them)", 0),
		choiceParam("sampler", "gibbs", "workers' sampler: gibbs (Albert–Chib, the paper's) or hmc (Laplace-preconditioned HMC, for posteriors where Gibbs mixes slowly)", "gibbs", "hmc"),
		choiceParam("ref_sampler", "gibbs", "sampler of the S_g reference samples: gibbs or hmc", "gibbs", "hmc"),
	}
	ps = append(ps, added(
		intParam("chains", "1", "Markov chains per worker: its S draws (and its fresh draws) come from this many chains of S/chains draws each, each on its own stream after its own burn-in, the first started at the mode, the others dispersed around it (as wcmc sample --chains); must divide T (S in the gradient experiments); the rows alternate between the chains, so OMA's first ⌊T/K⌋ hold nearly equal shares; the workers' R̂ in the results is then across chains", 1),
		intParam("ref_chains", "1", "Markov chains of the reference, started as those of chains: ref_samples/ref_chains draws each (must divide ref_samples); R̂ in run_info.reference is then across chains", 1),
	)...)
	ps = append(ps,
		intParam("fresh_factor", "10", "fresh signals per learned map, as a multiple of S (for err2_fresh, kl_fresh)", 1),
		runner.Param{Name: "batch_frac", Kind: runner.Float, Default: "0", Doc: "WVCMC minibatch N_b as a fraction of N for sgd/adam (0 = full batch; lbfgs always uses full batches)", Min: 0, Max: 1, HasMin: true, HasMax: true},
		positiveParam("eta_oma", "1e-6", "WVCMC-OMA step η for optimizer=sgd (paper: 1e-6)"),
		positiveParam("eta_noma", "1e-7", "WVCMC-NOMA step η for optimizer=sgd (paper: 1e-7)"),
		boolParam("eta_over_k", "false", "divide eta_oma and eta_noma by K (the paper's Fig. 6 setting)"),
		intParam("iters_oma", "50", "WVCMC-OMA iterations t_m for sgd/adam (paper: 50)", 0),
		intParam("iters_noma", "50", "WVCMC-NOMA iterations t_m for sgd/adam (paper: 50)", 0),
		stringParam("schemes", "all", "schemes to run: all, or a comma list of "+fmt.Sprint(probitSchemes)),
	)
	ps = append(ps, optimizerParams("lbfgs", probitConvergedTol)...)
	return append(ps, linkParams("rayleigh", "2", "15")...)
}

func probitSpec(pv probitVariant) runner.Spec {
	params := probitParams()
	trials := 40
	for i := range params {
		if v, ok := pv.over[params[i].Name]; ok {
			params[i].Default = v
		}
	}
	if t, ok := pv.over["trials"]; ok {
		fmt.Sscan(t, &trials)
	}
	spec := runner.Spec{
		ID: pv.id, Figure: pv.fig, Description: pv.desc,
		X: pv.x, XLabel: pv.xlabel, LogX: pv.logx,
		Metrics: probitMetrics, MetricLabel: probitMetricLabels, LinearY: linearY(probitMetrics), Ideal: idealValues(probitMetrics), Bounds: shareBounds(probitMetrics),
		MainOnly: uncertaintyOf(probitMetrics),
		Schemes:  allResultNames(probitSchemes),
		Params:   params,
		Trials:   trials,
		Quick:    pv.quick,
	}
	return probitFamily(spec, decodeSynthetic)
}

// probitFamily binds a probit or MNIST spec over the link to its typed
// configuration, with the data that data reads.
func probitFamily(spec runner.Spec, data func(runner.Values) dataConfig) runner.Spec {
	return typedSpec[probitConfig, *probitProblem]{
		decode: decodeProbit(data),
		check:  probitConfig.check,
		setup: func(sw sweep[probitConfig], rng *rand.Rand) (*probitProblem, error) {
			return newProbitProblem(sw.x, each(sw, func(c *probitConfig) *probitBase { return &c.probitBase }), rng)
		},
		run:     runProbitTrial,
		caption: probitConfig.caption,
	}.bind(spec)
}

func runProbitTrial(c probitConfig, p *probitProblem, t runner.Task) (runner.TaskOutput, error) {
	omaS, nomaS := c.t/c.workers.k, c.t
	// The same at every SNR of a trial: computed once (samplecache.go).
	draws, err := p.trialDraws(t, c.workers, nomaS, c.freshFactor*nomaS)
	if err != nil {
		return runner.TaskOutput{}, err
	}
	samples, fresh := draws.samples, draws.fresh
	freshRng := seed.Split(t.Rng)
	if err := t.Err(); err != nil {
		return runner.TaskOutput{}, err
	}

	batch := int(c.batchFrac*float64(p.train.Len()) + 0.5)
	runs := c.opt.runs(batch, c.etaDivisor())
	cfg := c.cmc(taskContext(t), p.global.Clone(), runs, omaS, nomaS)
	out, err := runCMC(t.Rng, samples, cfg)
	if err != nil {
		return runner.TaskOutput{}, err
	}
	if c.enabled[SchemeBestSingle] {
		if err := out.bestSingle(p.refMoment); err != nil {
			return runner.TaskOutput{}, err
		}
	}
	freshTheta, err := out.applyFresh(freshRng, c.link.channel, fresh, c.freshFactor*omaS, c.freshFactor*nomaS)
	if err != nil {
		return runner.TaskOutput{}, err
	}

	res := runner.TaskOutput{Skipped: out.skipped, Info: out.info}
	res.Info["workers"] = draws.diag
	for _, s := range resultNames(append(withDigital(probitSchemes), scheme.CSIAware...), runs) {
		so, ok := out.schemes[s]
		if !ok {
			continue
		}
		rows, err := p.measure(s, so.theta, freshTheta[s])
		if err != nil {
			return runner.TaskOutput{}, err
		}
		res.Rows = append(res.Rows, rows...)
	}
	// A stage cut short by cancellation leaves no valid result.
	if err := t.Err(); err != nil {
		return runner.TaskOutput{}, err
	}
	return res, nil
}

// measure computes err2, the predictive KL and the uncertainty metrics on
// the in-sample and the fresh outputs of one scheme.
func (p *probitProblem) measure(scheme string, theta, fresh *mat.Dense) ([]runner.Row, error) {
	var rows []runner.Row
	for _, c := range []struct {
		suffix string
		th     *mat.Dense
	}{{"", theta}, {"_fresh", fresh}} {
		e, err := metric.Err2(c.th, p.refMoment)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", scheme, err)
		}
		kl, err := metric.PredictiveKL(model.PredictiveProb(nil, c.th, p.test.U), p.refPred)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", scheme, err)
		}
		u, err := p.ref.Score(c.th)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", scheme, err)
		}
		rows = append(rows,
			runner.Row{Scheme: scheme, Metric: "err2" + c.suffix, Value: e},
			runner.Row{Scheme: scheme, Metric: "kl" + c.suffix, Value: kl})
		rows = append(rows, uncertaintyRows(scheme, c.suffix, u, 0)...)
	}
	return rows, nil
}

// bestSingle picks the worker whose decoded OMA samples E_k^† y_k have the
// smallest err2 against the reference; its map decodes stream k and
// ignores the others.
func (o *cmcOutput) bestSingle(ref *mat.SymDense) error {
	var link *channel.Received
	for _, s := range []string{SchemeGCMC, SchemeWGCMCOMA, SchemeWVCMCOMA} {
		if so, ok := o.schemes[s]; ok {
			link = so.rx
			break
		}
	}
	if link == nil {
		link = o.omaLink
	}
	if link == nil {
		o.skip(SchemeBestSingle, "no OMA signals (S = ⌊T/K⌋ < 2 or no OMA scheme)")
		return nil
	}
	best, bestErr := -1, 0.0
	var bestMap consensus.Map
	for k := range link.K {
		m := consensus.SingleWorker(link, k)
		e, err := metric.Err2(m.Apply(link), ref)
		if err != nil {
			return fmt.Errorf("%s: %w", SchemeBestSingle, err)
		}
		if best < 0 || e < bestErr {
			best, bestErr, bestMap = k, e, m
		}
	}
	o.schemes[SchemeBestSingle] = &schemeOutput{theta: bestMap.Apply(link), m: bestMap, rx: link}
	o.info[SchemeBestSingle] = map[string]any{"worker": best + 1}
	return nil
}
