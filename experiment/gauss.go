package experiment

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"wcmc/channel"
	"wcmc/internal/seed"
	"wcmc/metric"
	"wcmc/model"
	"wcmc/runner"
)

// Sec. VI-A: Gaussian subposteriors N(0, C_k), d = 5, K = 10, C_k the
// symmetric Toeplitz matrix with first column [1, ρ_k, …, ρ_k^{d−1}],
// ρ_k = (k−1)/K; homogeneous variant C_0 = K (Σ_k C_k^{-1})^{-1} for every
// worker. The global posterior is N(0, C), C = (Σ_k C_k^{-1})^{-1}, and the
// exact C is the reference second moment in eq: err2.

func registerGauss() {
	register(gaussSpec("gauss-blocks", "Fig. 2",
		"err2 vs number of communication blocks T (S = T/K OMA, S = T NOMA), homogeneous Gaussian subposteriors, 5 dB",
		"T", "communication blocks T", true, "homogeneous",
		"5,7,10,20,50,100,200,500,1000,2000,5000,20000,50000", "5",
		map[string]string{"trials": "4", "T": "7,20,200,2000"}))
	register(gaussSpec("gauss-snr", "Fig. 3",
		"err2 vs SNR, heterogeneous Gaussian subposteriors, T = 2000",
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
	params = append(params, optimizerParams("lbfgs")...)
	params = append(params, linkParams("flat", "1", snr)...)
	return runner.Spec{
		ID: id, Figure: fig, Description: desc,
		X: x, XLabel: xlabel, LogX: logx,
		Metrics: []string{"err2", "err2_fresh"},
		MetricLabel: map[string]string{
			"err2":       "second-order test error, in-sample",
			"err2_fresh": "second-order test error on fresh signals (exact)",
		},
		Schemes: allResultNames(wirelessSchemes),
		Params:  params,
		Trials:  100,
		Quick:   quick,
		Validate: func(v runner.Values) error {
			_, err := enabledSchemes(v, wirelessSchemes)
			return err
		},
		Setup: func(v runner.Values, _ *rand.Rand) (any, error) {
			return newGaussProblem(v.Int("d"), v.Int("K"), v.String("subposteriors") == "homogeneous")
		},
		Run:     runGaussTrial,
		Caption: caption,
	}
}

// gaussProblem holds the subposteriors and the global posterior.
type gaussProblem struct {
	sub    []*model.Gaussian
	global *model.Gaussian
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

func newGaussProblem(d, k int, homogeneous bool) (*gaussProblem, error) {
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

func runGaussTrial(t runner.Task) (runner.TaskOutput, error) {
	v := t.Params
	p := t.Shared.(*gaussProblem)
	enabled, err := enabledSchemes(v, wirelessSchemes)
	if err != nil {
		return runner.TaskOutput{}, err
	}
	k := v.Int("K")
	T := v.Int("T")
	link, err := linkConfig(v)
	if err != nil {
		return runner.TaskOutput{}, err
	}
	// Every worker draws T exact samples; OMA sends the first ⌊T/K⌋.
	sampleRng := seed.Split(t.Rng)
	samples := make([]*mat.Dense, k)
	for i, g := range p.sub {
		samples[i] = drawGaussian(sampleRng, g, T)
	}
	runs, err := protocolRuns(v, 0, 1)
	if err != nil {
		return runner.TaskOutput{}, err
	}
	cfg := cmcConfig{
		link:      link,
		target:    p.global,
		protocols: runs,
		enabled:   enabled,
		omaPerWkr: T / k,
		nomaPerWk: T,
		ctx:       taskContext(t),
	}
	out, err := runCMC(t.Rng, samples, cfg)
	if err != nil {
		return runner.TaskOutput{}, err
	}
	ref := p.global.SecondMoment()
	res := runner.TaskOutput{Skipped: out.skipped, Info: out.info}
	for _, s := range resultNames(wirelessSchemes, runs) {
		so, ok := out.schemes[s]
		if !ok {
			continue
		}
		e, err := metric.Err2(so.theta, ref)
		if err != nil {
			return runner.TaskOutput{}, fmt.Errorf("%s: %w", s, err)
		}
		fresh, err := metric.Err2Moment(p.freshMoment(so), ref)
		if err != nil {
			return runner.TaskOutput{}, fmt.Errorf("%s fresh: %w", s, err)
		}
		res.Rows = append(res.Rows,
			runner.Row{Scheme: s, Metric: "err2", Value: e},
			runner.Row{Scheme: s, Metric: "err2_fresh", Value: fresh})
	}
	if err := t.Err(); err != nil {
		return runner.TaskOutput{}, err
	}
	return res, nil
}

// linkConfig reads the channel parameters.
func linkConfig(v runner.Values) (channel.Config, error) {
	f, err := channel.ParseFading(v.String("fading"))
	if err != nil {
		return channel.Config{}, err
	}
	c := channel.Config{
		Fading:     f,
		Repetition: v.Int("repetition"),
		ExtraTx:    v.Int("extra_tx"),
		Power:      v.Float("power"),
		SNRdB:      v.Float("snr_db"),
		Physical:   v.Bool("physical"),
	}
	return c, c.Validate()
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

// freshMoment is the exact second moment of the learned map's output on
// fresh signals of the same link: with zero-mean subposteriors and
// y_k = E_k θ_k + n_k, E[θθᵀ] = Σ_k W_k (E_k C_k E_kᵀ + N0 I) W_kᵀ under OMA
// and W (Σ_k E C_k Eᵀ + N0 I) Wᵀ under NOMA (eq: sample wgcmc oma).
func (p *gaussProblem) freshMoment(so *schemeOutput) *mat.SymDense {
	rx := so.rx
	out := mat.NewSymDense(rx.D, nil)
	var tmp mat.Dense
	addCy := func(cy *mat.Dense, k int) {
		e := rx.Encoder(k)
		tmp.Reset()
		tmp.Product(e, p.sub[k].Cov(), e.T())
		cy.Add(cy, &tmp)
	}
	for s, w := range so.m.W {
		cy := mat.NewDense(rx.Mr, rx.Mr, nil)
		if rx.Access == channel.OMA {
			addCy(cy, s)
		} else {
			for k := range rx.K {
				addCy(cy, k)
			}
		}
		for i := range rx.Mr {
			cy.Set(i, i, cy.At(i, i)+rx.N0)
		}
		tmp.Reset()
		tmp.Product(w, cy, w.T())
		for i := range rx.D {
			for j := i; j < rx.D; j++ {
				out.SetSym(i, j, out.At(i, j)+(tmp.At(i, j)+tmp.At(j, i))/2)
			}
		}
	}
	return out
}
