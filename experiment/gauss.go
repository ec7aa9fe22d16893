package experiment

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/digital"
	"github.com/wcmc-project/wcmc/internal/seed"
	"github.com/wcmc-project/wcmc/metric"
	"github.com/wcmc-project/wcmc/model"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

// Sec. VI-A: Gaussian subposteriors N(0, C_k), d = 5, K = 10, C_k the
// symmetric Toeplitz matrix with first column [1, ρ_k, …, ρ_k^{d−1}],
// ρ_k = (k−1)/K; homogeneous variant C_0 = K (Σ_k C_k^{-1})^{-1} for every
// worker. The global posterior is N(0, C), C = (Σ_k C_k^{-1})^{-1}, and the
// exact C is the reference second moment in eq: err2.

func registerGauss() {
	register(gaussSpec("gauss-blocks", "Fig. 2",
		"err2 vs number of communication blocks T (S = T/K OMA, S = T NOMA), {subposteriors} Gaussian subposteriors, {snr_db} dB",
		"T", "communication blocks T", true, "homogeneous",
		"5,7,10,20,50,100,200,500,1000,2000,5000,20000,50000", "5",
		map[string]string{"trials": "4", "T": "7,20,200,2000"}))
	register(gaussSpec("gauss-snr", "Fig. 3",
		"err2 vs SNR, {subposteriors} Gaussian subposteriors, T = {T}",
		"snr_db", "SNR (dB)", false, "heterogeneous",
		"2000", "-10,-5,0,5,10,15,20,25,30",
		map[string]string{"trials": "4", "snr_db": "-10,5,30"}))
}

func gaussSpec(id, fig, desc, x, xlabel string, logx bool, subpost, tList, snr string, quick map[string]string) runner.Spec {
	params := []runner.Param{
		intParam("d", "5", "parameter dimension d", 1),
		intParam("K", "10", "number of workers K", 1),
		intParam("T", tList, "communication blocks T: OMA delivers S = ⌊T/K⌋ samples per worker, NOMA S = T", 1),
		choiceParam("subposteriors", subpost, "heterogeneous: C_k Toeplitz with ρ_k = (k−1)/K; homogeneous: all C_0 = K(Σ C_k^{-1})^{-1}", "heterogeneous", "homogeneous"),
		positiveParam("eta_oma", "5e-3", "WVCMC-OMA step η for optimizer=sgd (paper: 5e-3)"),
		positiveParam("eta_noma", "1e-3", "WVCMC-NOMA step η for optimizer=sgd (paper: 1e-3)"),
		intParam("iters_oma", "300", "WVCMC-OMA iterations t_m for sgd/adam (paper: 300)", 0),
		intParam("iters_noma", "30", "WVCMC-NOMA iterations t_m for sgd/adam (paper: 30)", 0),
		stringParam("schemes", "all", "schemes to run: all, or a comma list of "+fmt.Sprint(wirelessSchemes)),
	}
	params = append(params, optimizerParams("lbfgs", gaussConvergedTol)...)
	params = append(params, linkParams("flat", "1", snr)...)
	metrics, labels := withUncertainty([]string{"err2", "err2_fresh"}, map[string]string{
		"err2":       "second-order test error, in-sample",
		"err2_fresh": "second-order test error on fresh signals (exact)",
	}, true, "fresh signals (exact)")
	spec := runner.Spec{
		ID: id, Figure: fig, Description: desc,
		X: x, XLabel: xlabel, LogX: logx,
		// The exact fresh mean of an analog map is the target's, zero:
		// mean_err_fresh is 0 there, which a log axis cannot show.
		Metrics: metrics, MetricLabel: labels, LinearY: append(linearY(metrics), "mean_err_fresh"), Ideal: idealValues(metrics), Bounds: shareBounds(metrics),
		MainOnly: uncertaintyOf(metrics),
		Schemes:  allResultNames(wirelessSchemes),
		Params:   params,
		Trials:   100,
		Quick:    quick,
	}
	return typedSpec[gaussConfig, *gaussProblem]{
		decode:  decodeGauss,
		check:   gaussConfig.check,
		setup:   func(sw sweep[gaussConfig], _ *rand.Rand) (*gaussProblem, error) { return newGaussProblem(sw.points[0]) },
		run:     runGaussTrial,
		caption: gaussConfig.caption,
	}.bind(spec)
}

// gaussConfig is the configuration of a Gaussian experiment at one sweep
// point.
type gaussConfig struct {
	wirelessConfig
	d, k, t     int  // dimension, workers, communication blocks T
	homogeneous bool // every worker's subposterior is C_0 = K C
}

func decodeGauss(v runner.Values, p *problems) gaussConfig {
	return gaussConfig{
		wirelessConfig: decodeWireless(v, wirelessSchemes, true, p),
		d:              v.Int("d"),
		k:              v.Int("K"),
		t:              v.Int("T"),
		homogeneous:    v.String("subposteriors") == "homogeneous",
	}
}

// check reports the link's limits and sizes that do not fit in memory.
func (c gaussConfig) check(p *problems) {
	c.wirelessConfig.check(c.d, "", c.k, p)
	c.checkPilots(c.d, c.k, c.t/max(c.k, 1), c.t, p)
	l := c.link.channel.Repetition
	memoryNeed{sizes: []size{{"T", c.t}, {"K", c.k}, {"d", c.d}, {"repetition", l}}, k: c.k, s: c.t, d: c.d, l: l}.check(p)
}

// gaussProblem holds the subposteriors and the global posterior.
type gaussProblem struct {
	sub    []*model.Gaussian
	global *model.Gaussian
	ref    *metric.Reference // the global posterior, for the uncertainty metrics
}

// toeplitz is the symmetric Toeplitz matrix with first column ρ^i.
func toeplitz(d int, rho float64) *mat.SymDense {
	c := mat.NewSymDense(d, nil)
	for i := range d {
		for j := i; j < d; j++ {
			c.SetSym(i, j, math.Pow(rho, float64(j-i)))
		}
	}
	return c
}

// newGaussProblem builds the subposteriors of c (d, K, subposteriors).
func newGaussProblem(cfg gaussConfig) (*gaussProblem, error) {
	d, k, homogeneous := cfg.d, cfg.k, cfg.homogeneous
	prec := mat.NewSymDense(d, nil)
	covs := make([]*mat.SymDense, k)
	for i := range k {
		covs[i] = toeplitz(d, float64(i)/float64(k))
		var ch mat.Cholesky
		if !ch.Factorize(covs[i]) {
			return nil, fmt.Errorf("C_%d is not positive definite", i+1)
		}
		var inv mat.SymDense
		if err := ch.InverseTo(&inv); err != nil {
			return nil, err
		}
		prec.AddSym(prec, &inv)
	}
	var ch mat.Cholesky
	if !ch.Factorize(prec) {
		return nil, fmt.Errorf("Σ C_k^{-1} is not positive definite")
	}
	var c mat.SymDense
	if err := ch.InverseTo(&c); err != nil {
		return nil, err
	}
	p := &gaussProblem{}
	var err error
	if p.global, err = model.NewGaussian(nil, &c); err != nil {
		return nil, err
	}
	if p.ref, err = metric.NewGaussianReference(p.global.Mean(), &c); err != nil {
		return nil, err
	}
	for i := range k {
		cov := covs[i]
		if homogeneous {
			var c0 mat.SymDense
			c0.ScaleSym(float64(k), &c)
			cov = &c0
		}
		g, err := model.NewGaussian(nil, cov)
		if err != nil {
			return nil, err
		}
		p.sub = append(p.sub, g)
	}
	return p, nil
}

func runGaussTrial(c gaussConfig, p *gaussProblem, t runner.Task) (runner.TaskOutput, error) {
	k, T := c.k, c.t
	link := c.link.channel
	// Every worker draws T exact samples; OMA sends the first ⌊T/K⌋.
	sampleRng := seed.Split(t.Rng)
	samples := make([]*mat.Dense, k)
	for i, g := range p.sub {
		samples[i] = drawGaussian(sampleRng, g, T)
	}
	runs := c.opt.runs(0, 1)
	cfg := c.cmc(taskContext(t), p.global, runs, T/k, T)
	out, err := runCMC(t.Rng, samples, cfg)
	if err != nil {
		return runner.TaskOutput{}, err
	}
	ref := p.global.SecondMoment()
	res := runner.TaskOutput{Skipped: out.skipped, Info: out.info}
	var measured map[string]*mat.Dense // drawn once, only where needed
	for _, s := range resultNames(append(withDigital(wirelessSchemes), scheme.CSIAware...), runs) {
		so, ok := out.schemes[s]
		if !ok {
			continue
		}
		e, err := metric.Err2(so.theta, ref)
		if err != nil {
			return runner.TaskOutput{}, fmt.Errorf("%s: %w", s, err)
		}
		law, exact := p.freshLaw(out, so, link)
		if (!exact || !law.gaussian) && measured == nil {
			if measured, err = p.measuredFresh(seed.Split(t.Rng), out, link, T, k); err != nil {
				return runner.TaskOutput{}, err
			}
		}
		var moment *mat.SymDense
		if exact {
			moment = law.moment()
		} else {
			moment = metric.SecondMoment(measured[s])
		}
		fresh, err := metric.Err2Moment(moment, ref)
		if err != nil {
			return runner.TaskOutput{}, fmt.Errorf("%s fresh: %w", s, err)
		}
		u, err := p.ref.Score(so.theta)
		if err != nil {
			return runner.TaskOutput{}, fmt.Errorf("%s: %w", s, err)
		}
		uf, err := p.freshUncertainty(law, exact, measured[s])
		if err != nil {
			return runner.TaskOutput{}, fmt.Errorf("%s fresh: %w", s, err)
		}
		res.Rows = append(res.Rows,
			runner.Row{Scheme: s, Metric: "err2", Value: e},
			runner.Row{Scheme: s, Metric: "err2_fresh", Value: fresh})
		res.Rows = append(res.Rows, uncertaintyRows(s, "", u, 0)...)
		res.Rows = append(res.Rows, uncertaintyRows(s, "_fresh", uf, 0)...)
	}
	if err := t.Err(); err != nil {
		return runner.TaskOutput{}, err
	}
	return res, nil
}

// drawGaussian draws s exact samples of g as rows: θ = μ + L z.
func drawGaussian(rng *rand.Rand, g *model.Gaussian, s int) *mat.Dense {
	d := g.Dim()
	var l mat.TriDense
	g.Cholesky().LTo(&l)
	z := mat.NewDense(s, d, nil)
	raw := z.RawMatrix().Data
	for i := range raw {
		raw[i] = rng.NormFloat64()
	}
	var out mat.Dense
	out.Mul(z, l.T())
	mu := g.Mean()
	for i := range s {
		row := out.RawRowView(i)
		for j := range row {
			row[j] += mu[j]
		}
	}
	return &out
}

// gaussFreshFactor is the number of fresh signals, as a multiple of the
// learning signals, from which err2_fresh is measured where the link has
// no closed-form second moment (freshLaw).
const gaussFreshFactor = 10

// freshOutput is the law of a learned map's output θ on fresh signals:
// its exact mean (nil: zero) and covariance. gaussian is false where θ,
// with that mean and covariance, is not Gaussian: imperfect CSI's residual
// r_k (below) multiplies θ_k by a random channel, a scale mixture.
type freshOutput struct {
	mean     *mat.VecDense
	cov      *mat.SymDense
	gaussian bool
}

// moment returns E[θθᵀ] = Cov θ + m mᵀ.
func (f freshOutput) moment() *mat.SymDense {
	if f.mean == nil {
		return f.cov
	}
	m := mat.NewSymDense(f.cov.SymmetricDim(), nil)
	m.CopySym(f.cov)
	var mm mat.Dense
	mm.Outer(1, f.mean, f.mean)
	addSym(m, &mm)
	return m
}

// freshUncertainty returns the uncertainty metrics of a learned map's
// output on fresh signals: from its exact law where freshLaw has one (the
// coverage from the measured output where that law is not Gaussian), else
// from the measured output, as err2_fresh.
func (p *gaussProblem) freshUncertainty(law freshOutput, exact bool, measured *mat.Dense) (metric.Uncertainty, error) {
	if !exact {
		return p.ref.Score(measured)
	}
	mean := make([]float64, p.ref.Dim())
	if law.mean != nil {
		mat.NewVecDense(len(mean), mean).CopyVec(law.mean)
	}
	u, err := p.ref.ScoreGaussian(mean, law.cov)
	if err != nil || law.gaussian {
		return u, err
	}
	lo, hi := metric.Interval90(measured)
	u.Coverage90 = p.ref.Coverage(lo, hi)
	return u, nil
}

// freshLaw returns the exact mean and covariance of the learned map's
// output on fresh signals of the link it was learned on, for zero-mean
// subposteriors N(0, C_k); it reports false where that link has no closed
// form (imperfect CSI with Rician fading or truncated inversion, the
// uniform quantisers, a mean-centred link), and the output is then
// measured (measuredFresh).
// With θ = Σ_s W_s y_s over the streams s, Cov θ = Σ_s W_s Cov(y_s) W_sᵀ,
// E θ = m = Σ_s W_s E[y_s] and E[θθᵀ] = Cov θ + m mᵀ; θ is Gaussian unless
// some s_k² > 0 (freshOutput.gaussian), where
//
//   - analog OMA stream k: y_k = a_k E_k θ_k + r_k + n_k, Cov(y_k) =
//     a_k² E_k C_k E_kᵀ + (N0 + s_k² ε_k/κ) I, ε_k = tr(E_k C_k E_kᵀ)·g/v̂_k
//     (docs/BEYOND.md (12.9), g = E[1/X] = Config.InvGramMean on Rayleigh
//     fading, that of the combined channel with several receive antennas,
//     Config.CombinedInvGram, docs/MATH.md (21.5)); perfect CSI has a_k = 1, s_k² = 0, which is y = Eθ + n of
//     eq: sample wgcmc oma. Outage does not change the law of the blocks
//     delivered (it depends on the channel only). NOMA: Σ_k a_k² E C_k Eᵀ
//     plus one noise N0 + Σ_k s_k² ε_k/κ;
//   - the noiseless link and the additive-noise digital streams
//     (digital.Budget.Received: y_k = x̂_k/√N_k) are analog streams with
//     a = 1, s² = 0;
//   - a test-channel digital stream decodes x̂ = c + G x + e (docs/BEYOND.md
//     (16.7)) with the code of the learning block: G = U diag(a) Uᵀ,
//     a_i = 1 − 2^{−2b_i}, c = (I − G)μ, Cov e = U diag(a_i D_i) Uᵀ, plus
//     U diag(D_i) Uᵀ for a posterior draw; Cov(x̂) = G C Gᵀ + Cov e.
func (p *gaussProblem) freshLaw(out *cmcOutput, so *schemeOutput, link channel.Config) (freshOutput, bool) {
	rx := so.rx
	var ds *digitalStream
	for _, d := range out.digital {
		if d.rx == rx {
			ds = d
		}
	}
	analog := rx == out.omaLink || rx == out.nomaLink
	link = link.ResolvePilots(rx.D)
	csi := link.CSI != channel.CSI{}
	if analog && csi && (link.Fading != channel.Rayleigh || link.Control.PeakPower > 0) {
		return freshOutput{}, false
	}
	if rx.Mean != nil {
		return freshOutput{}, false // a mean-centred link: measured
	}
	testChannel := ds != nil && (ds.quant == digitalTestChannel || ds.quant == digitalPosterior)
	if ds != nil && !testChannel && ds.quant != digitalAdditive {
		return freshOutput{}, false
	}
	kappa := 1.0
	if link.Complex {
		kappa = 2
	}
	law := func(k int) (a, s2, vHat float64) {
		if !analog || !csi {
			return 1, 0, 1
		}
		gain := 1.0
		if rx.Gain != nil {
			gain = rx.Gain[k]
		}
		return link.CSILaw(gain)
	}
	cov := mat.NewSymDense(rx.D, nil)
	mean := mat.NewVecDense(rx.D, nil)
	gaussian := true
	var tmp mat.Dense
	for s, w := range so.m.W {
		var cy *mat.Dense
		var my *mat.VecDense
		if testChannel {
			cy, my = testChannelLaw(ds.codes[s], ds.budget.Workers[s].Rate, p.sub[s].Cov(), ds.quant == digitalPosterior)
		} else {
			workers := []int{s}
			if rx.Access == channel.NOMA {
				workers = make([]int, rx.K)
				for k := range workers {
					workers[k] = k
				}
			}
			cy = mat.NewDense(rx.Mr, rx.Mr, nil)
			noise := rx.N0
			g := 0.0
			if csi {
				g = link.CombinedInvGram(rx.D, len(workers))
			}
			for _, k := range workers {
				e := rx.Encoder(k)
				tmp.Reset()
				tmp.Product(e, p.sub[k].Cov(), e.T())
				a, s2, vHat := law(k)
				if s2 > 0 {
					noise += s2 * mat.Trace(&tmp) * g / vHat / kappa
					gaussian = false
				}
				tmp.Scale(a*a, &tmp)
				cy.Add(cy, &tmp)
			}
			for i := range rx.Mr {
				cy.Set(i, i, cy.At(i, i)+noise)
			}
		}
		tmp.Reset()
		tmp.Product(w, cy, w.T())
		addSym(cov, &tmp)
		if my != nil {
			var wm mat.VecDense
			wm.MulVec(w, my)
			mean.AddVec(mean, &wm)
		}
	}
	if !testChannel {
		mean = nil // zero
	}
	return freshOutput{mean: mean, cov: cov, gaussian: gaussian}, true
}

// testChannelLaw returns the covariance G C Gᵀ + Cov e and the mean c of
// the test channel's decoding x̂ = c + G x + e of a source x ~ N(0, C)
// coded with code at rate bits per sample (see freshLaw).
func testChannelLaw(code *digital.Source, rate float64, c mat.Symmetric, posterior bool) (*mat.Dense, *mat.VecDense) {
	alloc := code.WaterFill(rate)
	d := code.Dim()
	gain := make([]float64, d)
	noise := make([]float64, d)
	for i, b := range alloc.Bits {
		gain[i] = -math.Expm1(-2 * math.Ln2 * b) // 1 − 2^{−2b}
		noise[i] = gain[i] * alloc.Distortion[i]
		if posterior {
			noise[i] += alloc.Distortion[i]
		}
	}
	u := code.Basis
	var g, cov, tmp mat.Dense
	g.Mul(u, mat.NewDiagDense(d, gain))
	g.Mul(&g, u.T())
	cov.Product(&g, c, g.T())
	tmp.Product(u, mat.NewDiagDense(d, noise), u.T())
	cov.Add(&cov, &tmp)
	mu := mat.NewVecDense(d, append([]float64(nil), code.Mean...))
	var gm mat.VecDense
	gm.MulVec(&g, mu)
	mu.SubVec(mu, &gm)
	return &cov, mu
}

// addSym adds the symmetric part of a to dst.
func addSym(dst *mat.SymDense, a *mat.Dense) {
	n := dst.SymmetricDim()
	for i := range n {
		for j := i; j < n; j++ {
			dst.SetSym(i, j, dst.At(i, j)+(a.At(i, j)+a.At(j, i))/2)
		}
	}
}

// measuredFresh draws gaussFreshFactor·T fresh exact samples per worker
// from rng and returns every scheme's output on them (cmcOutput.applyFresh):
// the fresh signals from which err2_fresh is measured where freshLaw
// has no closed form.
func (p *gaussProblem) measuredFresh(rng *rand.Rand, out *cmcOutput, link channel.Config, t, k int) (map[string]*mat.Dense, error) {
	n := gaussFreshFactor * t
	sampleRng := seed.Split(rng)
	fresh := make([]*mat.Dense, len(p.sub))
	for i, g := range p.sub {
		fresh[i] = drawGaussian(sampleRng, g, n)
	}
	return out.applyFresh(rng, link, fresh, gaussFreshFactor*(t/k), n)
}
