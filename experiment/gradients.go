package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/consensus"
	"github.com/wcmc-project/wcmc/internal/seed"
	"github.com/wcmc-project/wcmc/metric"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/sampler"
	"github.com/wcmc-project/wcmc/scheme"
)

// Figs. 4 and 9: err2 against the number of per-example gradients
// ∇ log p(θ, z_n) computed at the server. WVCMC with S samples costs
// N_b·S gradients per objective gradient (docs/MATH.md note 8), SGLD N_b per
// iteration; SGLD ignores the workers. Each trial follows one optimisation
// path and one SGLD chain and reports err2 at every checkpoint of the
// gradient budget (x = gradients): the map of the last iterate within
// budget, and the SGLD samples kept (after burn-in) within budget.

// SchemeSGLD is centralised stochastic gradient Langevin dynamics at the
// server (eq: update SGLD).
const SchemeSGLD = scheme.SGLD

var gradientSchemes = []string{SchemeWVCMCOMA, SchemeWVCMCNOMA, SchemeSGLD}

// gradientMetrics are err2 and the uncertainty metrics, in-sample (no
// fresh signals here).
var gradientMetrics, gradientMetricLabels = withUncertainty([]string{"err2"},
	map[string]string{"err2": "second-order test error"}, false, "")

func registerGradients() {
	register(gradientSpec("probit-gradients", "Fig. 4",
		"probit (d = {d}, N = {N}): err2 vs gradients computed at the server, WVCMC (S = {S}, {snr_db} dB, K = {K}) vs SGLD",
		probitParams(), map[string]string{"snr_db": "15", "sgld_batch": "500", "sgld_gamma": "0.7", "sgld_burnin": "10000"},
		map[string]string{"trials": "2", "N": "2000", "ref_samples": "2000", "gradients": "1e5,1e6,1e7", "sgld_burnin": "1000"},
		100, decodeSynthetic))
	register(gradientSpec("mnist-gradients", "Fig. 9",
		"MNIST {class_a} vs {class_b} (PCA {pca_dim}): err2 vs gradients computed at the server, WVCMC (S = {S}, {snr_db} dB, K = {K}) vs SGLD",
		mnistParams(), map[string]string{"snr_db": "30", "K": "10", "sgld_batch_frac": "0.05", "sgld_gamma": "0.52", "sgld_burnin": "80000"},
		map[string]string{"trials": "2", "ref_samples": "1000", "gradients": "1e5,1e6", "sgld_burnin": "1000", "pca_dim": "10"},
		100, decodeMNIST))
}

func gradientSpec(id, fig, desc string, base []runner.Param, defaults, quick map[string]string, trials int,
	data func(runner.Values) dataConfig) runner.Spec {
	var params []runner.Param
	for _, p := range base {
		switch p.Name {
		case "T", "fresh_factor":
			continue // T follows from S; no fresh signals here
		case "digital", "digital_capacity", "digital_quantizer", "side_info_bits":
			continue // the digital baselines learn no map by gradients
		}
		params = append(params, p)
	}
	params = append(params,
		runner.Param{Name: "gradients", Kind: runner.Float, Default: "1e5,3e5,1e6,3e6,1e7,3e7,1e8", Doc: "checkpoints: numbers of per-example gradients computed at the server", Min: 1, HasMin: true},
		intParam("S", "50", "samples per worker and per output (T = K·S blocks under OMA, S under NOMA)", 2),
		intParam("sgld_batch", "0", "SGLD minibatch N_b (0: use sgld_batch_frac)", 0),
		runner.Param{Name: "sgld_batch_frac", Kind: runner.Float, Default: "0", Doc: "SGLD minibatch as a fraction of N, when sgld_batch is 0", Min: 0, Max: 1, HasMin: true, HasMax: true},
		positiveParam("sgld_alpha", "0.01", "SGLD step scale α in η_t = α(β+t)^−γ"),
		positiveParam("sgld_beta", "1", "SGLD step offset β"),
		runner.Param{Name: "sgld_gamma", Kind: runner.Float, Default: "0.7", Doc: "SGLD step decay γ", Min: 0, Max: 1, HasMin: true, HasMax: true},
		intParam("sgld_burnin", "10000", "SGLD burn-in iterations t_b", 0),
	)
	for i := range params {
		if d, ok := defaults[params[i].Name]; ok {
			params[i].Default = d
		}
	}
	return typedSpec[gradientConfig, *probitProblem]{
		decode: func(v runner.Values, p *problems) gradientConfig { return decodeGradients(v, data, p) },
		check:  gradientConfig.check,
		setup: func(sw sweep[gradientConfig], rng *rand.Rand) (*probitProblem, error) {
			return newProbitProblem(sw.x, each(sw, func(c *gradientConfig) *probitBase { return &c.probitBase }), rng)
		},
		run:     runGradientTrial,
		caption: gradientConfig.caption,
	}.bind(runner.Spec{
		ID: id, Figure: fig, Description: desc,
		X: "gradients", XLabel: "per-example gradients computed at the server", LogX: true,
		Metrics:     gradientMetrics,
		MetricLabel: gradientMetricLabels,
		LinearY:     linearY(gradientMetrics),
		Ideal:       idealValues(gradientMetrics),
		Bounds:      shareBounds(gradientMetrics),
		MainOnly:    uncertaintyOf(gradientMetrics),
		Schemes:     allResultNames(gradientSchemes),
		Params:      params,
		Trials:      trials,
		Quick:       quick,
		Trajectory:  true,
	})
}

// gradientConfig is the configuration of a gradient experiment: one
// trial follows the whole list of checkpoints.
type gradientConfig struct {
	probitBase
	s           int       // samples per worker
	checkpoints []float64 // gradient budgets, ascending
	sgld        sgldConfig
}

// sgldConfig is SGLD's setting: minibatch (batch, or batchFrac of N when
// batch is 0), the step η_t = α(β+t)^−γ and the burn-in.
type sgldConfig struct {
	batch              int
	batchFrac          float64
	alpha, beta, gamma float64
	burnin             int
}

func decodeGradients(v runner.Values, data func(runner.Values) dataConfig, p *problems) gradientConfig {
	c := gradientConfig{
		probitBase:  decodeProbitBase(v, gradientSchemes, false, data, p),
		s:           v.Int("S"),
		checkpoints: v.XList(),
		sgld: sgldConfig{
			batch: v.Int("sgld_batch"), batchFrac: v.Float("sgld_batch_frac"),
			alpha: v.Float("sgld_alpha"), beta: v.Float("sgld_beta"), gamma: v.Float("sgld_gamma"),
			burnin: v.Int("sgld_burnin"),
		},
	}
	sort.Float64s(c.checkpoints)
	return c
}

func (c gradientConfig) check(p *problems) {
	if c.sgld.batch == 0 && c.sgld.batchFrac == 0 {
		p.addf("sgld_batch", "sgld_batch: set sgld_batch or sgld_batch_frac")
	}
	c.probitBase.check(size{"S", c.s}, 0, p)
	d, _ := c.data.dim()
	c.checkPilots(d, c.workers.k, c.s, c.s, p)
}

func runGradientTrial(c gradientConfig, p *probitProblem, t runner.Task) (runner.TaskOutput, error) {
	checkpoints := c.checkpoints
	budget := checkpoints[len(checkpoints)-1]
	k, s, n := c.workers.k, c.s, p.train.Len()
	if k > n {
		return runner.TaskOutput{}, fmt.Errorf("K = %d workers for N = %d data points", k, n)
	}
	link := c.link.channel
	partRng, streams := workerStreams(t.Rng, k)
	linkRng, optSeed, sgldRng := seed.Split(t.Rng), splitSeeds(t.Rng), seed.Split(t.Rng)
	// One geometry for the trial's OMA and NOMA links.
	link, err := trialGains(t.Rng, link, c.link.spreadDB, k)
	if err != nil {
		return runner.TaskOutput{}, err
	}

	var out runner.TaskOutput
	out.Info = map[string]map[string]any{}
	if c.enabled[SchemeWVCMCOMA] || c.enabled[SchemeWVCMCNOMA] {
		draws, err := p.workerSamples(c.workers, partRng, streams, s, 0)
		if err != nil {
			return runner.TaskOutput{}, err
		}
		samples := draws.samples
		if out.Info["workers"], err = workerDiagnostics(draws.chains); err != nil {
			return runner.TaskOutput{}, err
		}
		if err := t.Err(); err != nil {
			return runner.TaskOutput{}, err
		}
		batch := int(c.batchFrac*float64(n) + 0.5)
		runs := c.opt.runs(batch, c.etaDivisor())
		// One optimiser stream per protocol, each used by OMA and then NOMA.
		optRngs := make([]*rand.Rand, len(runs))
		for i, r := range runs {
			optRngs[i] = optSeed.forProtocol(r.protocol)
		}
		for _, acc := range []struct {
			name   string
			access channel.Access
			key    string
		}{{SchemeWVCMCOMA, channel.OMA, "oma"}, {SchemeWVCMCNOMA, channel.NOMA, "noma"}} {
			if !c.enabled[acc.name] {
				continue
			}
			l := link
			l.Access = acc.access
			rx, err := channel.Transmit(linkRng, l, samples)
			if err == nil {
				rx, err = rx.Delivered() // the blocks sent, under truncated inversion
			}
			if errors.Is(err, channel.ErrMeanBudget) || errors.Is(err, channel.ErrPilotBudget) {
				for _, r := range runs {
					out.Skipped = append(out.Skipped, runner.Skip{Scheme: scheme.Under(acc.name, r.protocol), Reason: err.Error()})
				}
				continue
			}
			if err != nil {
				return runner.TaskOutput{}, err
			}
			for i, r := range runs {
				name := scheme.Under(acc.name, r.protocol)
				opt := r.forAccess(acc.access)
				perEval := budgetIters(&opt, s, n, budget)
				rows, info, err := p.wvcmcPath(taskContext(t), optRngs[i], rx, opt, perEval, checkpoints)
				if errors.Is(err, consensus.ErrCancelled) {
					return runner.TaskOutput{}, err
				}
				if err != nil {
					out.Skipped = append(out.Skipped, runner.Skip{Scheme: name, Reason: err.Error()})
					continue
				}
				for i := range rows {
					rows[i].Scheme = name
				}
				out.Rows = append(out.Rows, rows...)
				out.Info[name] = info
			}
		}
	}
	if c.enabled[SchemeSGLD] {
		rows, err := p.sgldPath(sgldRng, c.sgld, c.workers.priorVar, checkpoints)
		if err != nil {
			out.Skipped = append(out.Skipped, runner.Skip{Scheme: SchemeSGLD, Reason: err.Error()})
		}
		out.Rows = append(out.Rows, rows...)
	}
	if err := t.Err(); err != nil {
		return runner.TaskOutput{}, err
	}
	return out, nil
}

// wvcmcPath optimises the WVCMC map and returns err2 and the uncertainty
// metrics at each checkpoint: those of the last iterate whose cost
// (evaluations × perEval gradients) is within the checkpoint; the start map
// costs nothing.
func (p *probitProblem) wvcmcPath(ctx context.Context, rng *rand.Rand, rx *channel.Received, opt consensus.Settings, perEval float64, checkpoints []float64) ([]runner.Row, map[string]any, error) {
	type point struct{ cost, err2 float64 }
	// path[0], the start map, is filled in after the run (FitFromStart
	// returns it); the iterates follow.
	path := []point{{}}
	// The uncertainty metrics are scored only for the iterates checkpoints
	// report: the last one (prev) is scored for the checkpoints below the
	// cost of the one that follows it. Those below the first iterate's
	// cost (startUpTo of them) are the start's, scored after the run.
	scores := make([]metric.Uncertainty, len(checkpoints))
	next, startUpTo := 0, -1
	var prev *mat.Dense // nil: the start
	var prevScore *metric.Uncertainty
	settle := func(cost float64) error {
		if prev == nil {
			for next < len(checkpoints) && checkpoints[next] < cost {
				next++
			}
			startUpTo = next
			return nil
		}
		for ; next < len(checkpoints) && checkpoints[next] < cost; next++ {
			if prevScore == nil {
				u, err := p.ref.Score(prev)
				if err != nil {
					return err
				}
				prevScore = &u
			}
			scores[next] = *prevScore
		}
		return nil
	}
	var measureErr error
	opt.Observe = func(_, evals int, m consensus.Map) {
		theta := m.Apply(rx)
		e, err := metric.Err2(theta, p.refMoment)
		if err != nil {
			measureErr = err
			return
		}
		cost := float64(evals) * perEval
		if err := settle(cost); err != nil {
			measureErr = err
			return
		}
		prev, prevScore = theta, nil
		path = append(path, point{cost, e})
	}
	target := p.global.Clone()
	fit, start, _, err := consensus.FitFromStart(ctx, rng, rx, target, opt)
	if err != nil {
		return nil, nil, err
	}
	if measureErr != nil {
		return nil, nil, measureErr
	}
	startTheta := start.Apply(rx)
	if path[0].err2, err = metric.Err2(startTheta, p.refMoment); err != nil {
		return nil, nil, err
	}
	if prev == nil { // no iteration: the start is the last iterate
		prev = startTheta
	}
	if startUpTo > 0 {
		u, err := p.ref.Score(startTheta)
		if err != nil {
			return nil, nil, err
		}
		for i := range startUpTo {
			scores[i] = u
		}
	}
	if err := settle(math.Inf(1)); err != nil {
		return nil, nil, err
	}
	// Past the end of the run the kept map (the best held-out one under
	// early stopping) is what the server would use.
	kept := fit.Map.Apply(rx)
	last, err := metric.Err2(kept, p.refMoment)
	if err != nil {
		return nil, nil, err
	}
	spent := float64(fit.Evaluations) * perEval
	var lastScore *metric.Uncertainty
	var rows []runner.Row
	for i, c := range checkpoints {
		e, u := path[0].err2, scores[i]
		for _, pt := range path {
			if pt.cost <= c {
				e = pt.err2
			}
		}
		if c >= spent {
			if lastScore == nil {
				s, err := p.ref.Score(kept)
				if err != nil {
					return nil, nil, err
				}
				lastScore = &s
			}
			e, u = last, *lastScore
		}
		rows = append(rows, runner.Row{Metric: "err2", Value: e, X: c})
		rows = append(rows, uncertaintyRows("", "", u, c)...)
	}
	info := fitInfo(fit)
	info["gradients_spent"] = spent
	return rows, info, nil
}

// budgetIters returns the per-example gradients one evaluation of opt
// costs with s signals and n data points (N_b·S, N_b = n on full batches)
// and bounds opt by the budget: SGD and Adam iterate until it is spent
// (each iteration is one gradient evaluation); L-BFGS without a held-out
// set stops there too, since nothing past the budget is measured (an
// L-BFGS iteration costs at least one evaluation).
func budgetIters(opt *consensus.Settings, s, n int, budget float64) float64 {
	perEval := func(batch int) float64 {
		if batch > 0 {
			return float64(s) * float64(batch)
		}
		return float64(s) * float64(n)
	}
	switch m := opt.Method.(type) {
	case consensus.SGD:
		pe := perEval(m.BatchSize)
		m.Iters = zeroOff(int(budget / pe))
		opt.Method = m
		return pe
	case consensus.Adam:
		pe := perEval(m.BatchSize)
		m.Iters = zeroOff(int(budget / pe))
		opt.Method = m
		return pe
	case consensus.Newton:
		// Counted in gradients, the converged protocol runs its
		// first-order form (whitened L-BFGS, same stopping rule).
		opt.Method = m.FirstOrder()
		return budgetIters(opt, s, n, budget)
	case consensus.LBFGS:
		pe := perEval(0)
		if opt.Holdout == consensus.Off {
			if m.Iters == 0 {
				m.Iters = consensus.DefaultLBFGSIters
			}
			m.Iters = max(1, min(m.Iters, int(budget/pe)))
			opt.Method = m
		}
		return pe
	}
	panic(fmt.Sprintf("experiment: unknown WVCMC method %T", opt.Method))
}

// sgldPath runs SGLD from a prior draw for the largest budget and returns
// err2 and the uncertainty metrics of the kept samples at each checkpoint
// that has at least two; the start is a draw of the prior N(0, priorVar·I).
func (p *probitProblem) sgldPath(rng *rand.Rand, c sgldConfig, priorVar float64, checkpoints []float64) ([]runner.Row, error) {
	n, d := p.train.Len(), p.global.Dim()
	nb := c.batch
	if nb == 0 {
		nb = max(1, int(c.batchFrac*float64(n)+0.5))
	}
	nb = min(nb, n)
	burn := c.burnin
	iters := int(checkpoints[len(checkpoints)-1] / float64(nb))
	if iters-burn < 2 {
		return nil, fmt.Errorf("the largest budget allows %d SGLD iterations, not more than the burn-in %d", iters, burn)
	}
	theta0 := make([]float64, d)
	sd := math.Sqrt(priorVar)
	for i := range theta0 {
		theta0[i] = sd * rng.NormFloat64()
	}
	// The iteration at which each checkpoint's budget is spent.
	at := map[int][]float64{}
	for _, c := range checkpoints {
		at[int(c/float64(nb))] = append(at[int(c/float64(nb))], c)
	}
	var rows []runner.Row
	var measureErr error
	cfg := sampler.SGLDConfig{
		Alpha: c.alpha, Beta: c.beta, Gamma: c.gamma,
		BatchSize: nb, BurnIn: burn, Every: 1,
		Observe: func(t int, kept *mat.Dense) {
			cs, ok := at[t]
			if !ok || kept == nil {
				return
			}
			if r, _ := kept.Dims(); r < 2 {
				return
			}
			e, err := metric.Err2(kept, p.refMoment)
			if err != nil {
				measureErr = err
				return
			}
			u, uerr := p.ref.Score(kept)
			for _, c := range cs {
				rows = append(rows, runner.Row{Scheme: SchemeSGLD, Metric: "err2", Value: e, X: c})
				if uerr == nil {
					rows = append(rows, uncertaintyRows(SchemeSGLD, "", u, c)...)
				}
			}
			if uerr != nil {
				measureErr = uerr
			}
		},
	}
	dst := mat.NewDense(iters-burn, d, nil)
	if err := sampler.RunSGLD(rng, p.global.Clone(), cfg, theta0, dst); err != nil {
		return rows, err
	}
	return rows, measureErr
}
