package experiment

import (
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

// Mean-centred transmission against the paper's link (docs/BEYOND.md
// note 17), on the settings of probit-snr (centring) and mnist-snr
// (centring-mnist). Every trial runs twice from one stream: once on the
// paper's link and once centred, so that both arms get the same workers'
// samples, partition and fresh draws; the centred arm's results are named
// scheme.Centred(s). The channel draws start from the same state too, but
// the centred arm sends fewer sample blocks and draws its means' dither
// first, so its noise is not the other arm's.

// centredSchemes are the schemes reported on the centred link: every
// probit scheme that uses the channel (noiseless CMC does not).
var centredSchemes = func() []string {
	var out []string
	for _, s := range probitSchemes {
		if s != SchemeNoiseless {
			out = append(out, scheme.Centred(s))
		}
	}
	return out
}()

func registerCentring() {
	register(centringSpec(probitSpec(probitVariant{
		id: "centring", fig: FigureBeyond, x: "snr_db", xlabel: "SNR (dB)",
		desc: "the paper's link vs mean-centred transmission, paired trials: probit regression (d = {d}, N = {N}), err2 vs SNR, T = {T}, K = {K}",
		over: map[string]string{"snr_db": "0,5,10,15,20,25,30,35"},
		// T as probit-snr's full size: at T = 200 the means of K = 20
		// workers take every NOMA block at 0 dB.
		quick: map[string]string{"trials": "2", "snr_db": "0,10,20", "T": "1000", "ref_samples": "2000",
			"N": "2000", "fresh_factor": "2"},
	}), decodeSynthetic))
	mnist := mnistSpec(probitVariant{
		id: "centring-mnist", fig: FigureBeyond, x: "snr_db", xlabel: "SNR (dB)",
		desc: "the paper's link vs mean-centred transmission, paired trials: MNIST {class_a} vs {class_b} (PCA {pca_dim}), err2 vs SNR, T = {T}, K = {K}",
	}, probitMetrics)
	mnist.Quick = map[string]string{"trials": "2", "snr_db": "0,10,20", "T": "200", "ref_samples": "1000",
		"fresh_factor": "2", "pca_dim": "10"}
	register(centringSpec(mnist, decodeMNIST))
}

// centringSpec turns a probit or MNIST spec over snr_db into its paired
// centring experiment: the schemes of both arms, a check that centre is
// not set (both arms always run) and that the centred link can be sent,
// the draws cache sized for two takes per task, and runCentringPair.
func centringSpec(s runner.Spec, data func(runner.Values) dataConfig) runner.Spec {
	s.Schemes = append(allResultNames(probitSchemes), allResultNames(centredSchemes)...)
	return typedSpec[probitConfig, *probitProblem]{
		decode: decodeProbit(data),
		check: func(c probitConfig, p *problems) {
			c.check(p)
			if c.link.channel.Centre {
				p.addf("centre", "centre = true: the centring experiments run every trial on both links; leave centre at false")
			}
			centred := c.link.channel
			centred.Centre = true
			if err := centred.Validate(); err != nil && !p.seen["link"] {
				p.addf("link", "channel: the centred arm: %v", err)
			}
		},
		setup: func(sw sweep[probitConfig], rng *rand.Rand) (*probitProblem, error) {
			p, err := newProbitProblem(sw.x, each(sw, func(c *probitConfig) *probitBase { return &c.probitBase }), rng)
			if err == nil && p.draws != nil {
				p.draws.points *= 2 // each task takes its trial's draws once per arm
			}
			return p, err
		},
		run:     runCentringPair,
		caption: probitConfig.caption,
	}.bind(s)
}

// runCentringPair runs one trial of a probit experiment on the paper's link
// and on the centred one, each from a generator seeded by the same two
// draws of t.Rng, and returns the paper's rows followed by the centred
// arm's under scheme.Centred names (without noiseless CMC and
// the digital baselines, which use no analog link). The centred arm's
// records in the results JSON are keyed "centred-" and their name; the
// workers' diagnostics, the same for both, are kept once.
func runCentringPair(c probitConfig, p *probitProblem, t runner.Task) (runner.TaskOutput, error) {
	a, b := t.Rng.Uint64(), t.Rng.Uint64()
	arm := func(centre bool) (runner.TaskOutput, error) {
		ca, ta := c, t
		ca.link.channel.Centre = centre
		ta.Rng = rand.New(rand.NewPCG(a, b))
		return runProbitTrial(ca, p, ta)
	}
	out, err := arm(false)
	if err != nil {
		return runner.TaskOutput{}, err
	}
	on, err := arm(true)
	if err != nil {
		return runner.TaskOutput{}, err
	}
	for _, r := range on.Rows {
		if name, ok := centredName(r.Scheme); ok {
			r.Scheme = name
			out.Rows = append(out.Rows, r)
		}
	}
	for _, s := range on.Skipped {
		if name, ok := centredName(s.Scheme); ok {
			s.Scheme = name
			out.Skipped = append(out.Skipped, s)
		}
	}
	if out.Info == nil && len(on.Info) > 0 {
		out.Info = map[string]map[string]any{}
	}
	for k, v := range on.Info {
		if k != "workers" {
			out.Info[scheme.CentredPrefix+k] = v
		}
	}
	return out, nil
}

// centredName returns the centred arm's name of a result name ("wvcmc-oma.paper"
// → "centred-wvcmc-oma.paper"); ok is false for the results that use no
// analog link.
func centredName(name string) (string, bool) {
	base, p, ok := scheme.Split(name)
	if !ok || base == SchemeNoiseless || scheme.IsDigital(base) || strings.HasPrefix(base, scheme.CentredPrefix) {
		return "", false
	}
	c := scheme.Centred(base)
	if !slices.Contains(centredSchemes, c) {
		return "", false
	}
	return scheme.Under(c, p), true
}
