// Command convstudy runs WVCMC on trials of the paper's probit
// experiments under the converged protocol's methods — whitened L-BFGS and
// Newton — at several relative gradient tolerances, from the same start
// on the same signals, and prints for each (method, tolerance) its cost
// (iterations, evaluations, Hessians, CPU seconds), where it stopped
// (relative gradient norm, objective) and what it produced (err2,
// err2_fresh, kl, kl_fresh against the reference posterior). It is the
// study behind the converged protocol's method and tolerance
// (docs/PERFORMANCE.md):
//
//	go run ./bench/convstudy -snr 0,20 -trials 2 -access noma -methods lbfgs,newton -tols 1e-4,1e-5,1e-6,1e-8
//	go run ./bench/convstudy -mnist MNIST_DIR -snr 20 -access noma,oma
//
// Each method runs once per trial, to the smallest tolerance, with the
// iterates kept: the run at a larger tolerance is the prefix of that run up
// to the first iteration whose gradient norm is below it (the methods are
// deterministic and test the gradient after every iteration), so its
// numbers are those of the first such iterate.
//
// A trial is built as experiment probit-snr (or mnist-snr) builds one —
// synthetic data at θ* (or MNIST 0/1 on 30 PCA features), K workers on
// equal shards with the tempered prior, Gibbs (or HMC) chains, T blocks
// over a Rayleigh link with repetition 2 — but with its own seeds: the
// numbers are comparable between runs of one trial, not with a results
// file.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/consensus"
	"github.com/wcmc-project/wcmc/dataset"
	"github.com/wcmc-project/wcmc/metric"
	"github.com/wcmc-project/wcmc/model"
	"github.com/wcmc-project/wcmc/sampler"
)

type config struct {
	n, d, k, t, ref, fresh int
	snr                    []float64
	trials                 int
	seed                   uint64
	access                 []channel.Access
	methods                []string
	tols                   []float64
	maxIters               int
	mnist                  string
}

func main() {
	model.UseFastBLAS()
	var c config
	snr := flag.String("snr", "20", "SNR points (dB), comma-separated")
	acc := flag.String("access", "noma", "oma, noma or both (comma-separated)")
	methods := flag.String("methods", "lbfgs,newton", "methods: lbfgs (whitened, confined: Newton.FirstOrder) and/or newton")
	tols := flag.String("tols", "1e-3,1e-4,1e-5,1e-6,1e-8", "relative gradient tolerances")
	flag.IntVar(&c.maxIters, "iters", 3000, "iteration cap of each run")
	flag.IntVar(&c.n, "N", 8500, "training points (synthetic)")
	flag.IntVar(&c.d, "d", 5, "dimension (synthetic)")
	flag.IntVar(&c.k, "K", 20, "workers")
	flag.IntVar(&c.t, "T", 1000, "communication blocks (OMA S = T/K, NOMA S = T)")
	flag.IntVar(&c.ref, "ref", 20000, "reference samples")
	flag.IntVar(&c.fresh, "fresh", 10, "fresh signals per learned map, as a multiple of S")
	flag.IntVar(&c.trials, "trials", 1, "trials per SNR")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the data, the reference and the trials")
	flag.StringVar(&c.mnist, "mnist", "", "MNIST directory: run mnist-snr's setting (d = 30, K = 10, T = 500, HMC) instead of synthetic data")
	flag.Parse()
	if err := parse(&c, *snr, *acc, *methods, *tols); err != nil {
		fmt.Fprintln(os.Stderr, "convstudy:", err)
		os.Exit(2)
	}
	if err := study(c); err != nil {
		fmt.Fprintln(os.Stderr, "convstudy:", err)
		os.Exit(1)
	}
}

func parse(c *config, snr, acc, methods, tols string) error {
	for _, f := range strings.Split(snr, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return fmt.Errorf("-snr %q: %w", f, err)
		}
		c.snr = append(c.snr, x)
	}
	for _, f := range strings.Split(acc, ",") {
		switch strings.TrimSpace(f) {
		case "oma":
			c.access = append(c.access, channel.OMA)
		case "noma":
			c.access = append(c.access, channel.NOMA)
		case "both":
			c.access = append(c.access, channel.OMA, channel.NOMA)
		default:
			return fmt.Errorf("-access %q: want oma, noma or both", f)
		}
	}
	for _, f := range strings.Split(methods, ",") {
		switch f = strings.TrimSpace(f); f {
		case consensus.NameLBFGS, consensus.NameNewton:
			c.methods = append(c.methods, f)
		default:
			return fmt.Errorf("-methods: %q is not lbfgs or newton", f)
		}
	}
	for _, f := range strings.Split(tols, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(x > 0) {
			return fmt.Errorf("-tols %q: want a positive number", f)
		}
		c.tols = append(c.tols, x)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(c.tols)))
	if c.mnist != "" {
		c.k, c.t = 10, 500
	}
	return nil
}

// problem is the data, the target and the reference of every trial.
type problem struct {
	train, test dataset.Set
	target      *model.Probit
	refMoment   *mat.SymDense
	refPred     []float64
	hmc         bool
}

func newProblem(c config, rng *rand.Rand) (*problem, error) {
	p := &problem{}
	var err error
	if c.mnist != "" {
		p.hmc = true
		if p.train, p.test, err = dataset.LoadMNISTFeatures(c.mnist, 0, 1, dataset.SplitFull, 30, false); err != nil {
			return nil, err
		}
	} else {
		ts := dataset.ThetaStar(c.d)
		p.train, p.test = dataset.Synthetic(rng, ts, c.n), dataset.Synthetic(rng, ts, 2000)
	}
	if p.target, err = model.NewProbit(p.train.U, p.train.V, 1); err != nil {
		return nil, err
	}
	ch, err := p.chain(p.train, 1)
	if err != nil {
		return nil, err
	}
	ref := mat.NewDense(c.ref, p.target.Dim(), nil)
	if _, err := ch.Run(context.Background(), rng, ref, nil, 100, 1, nil); err != nil {
		return nil, err
	}
	p.refMoment = metric.SecondMoment(ref)
	p.refPred = model.PredictiveProb(nil, ref, p.test.U)
	return p, nil
}

func (p *problem) chain(set dataset.Set, priorVar float64) (sampler.Runner, error) {
	if p.hmc {
		return sampler.NewProbitHMC(set.U, set.V, priorVar)
	}
	return sampler.NewGibbs(set.U, set.V, priorVar)
}

func study(c config) error {
	rng := rand.New(rand.NewPCG(2026, c.seed))
	p, err := newProblem(c, rng)
	if err != nil {
		return err
	}
	fmt.Printf("%-5s %-5s %-4s %-7s %-7s %6s %6s %5s %9s %16s %7s %10s %10s %10s %10s\n",
		"trial", "snr", "acc", "method", "tol", "iters", "evals", "hess", "rel_grad", "objective", "cpu_s", "err2", "err2_fresh", "kl", "kl_fresh")
	for trial := range c.trials {
		samples, fresh, err := p.workers(c, rng)
		if err != nil {
			return err
		}
		for _, snr := range c.snr {
			for _, acc := range c.access {
				s := c.t
				if acc == channel.OMA {
					s = c.t / c.k
				}
				link := channel.Config{Access: acc, Fading: channel.Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: snr, Physical: true}
				rx, err := channel.Transmit(rng, link, rows(samples, s))
				if err != nil {
					return err
				}
				again, err := channel.Retransmit(rng, link, rx, rows(fresh, c.fresh*s))
				if err != nil {
					return err
				}
				for _, method := range c.methods {
					if err := p.path(c, method, rx, again, fmt.Sprintf("%-5d %-5g %-4v %-7s", trial, snr, acc, method)); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// iterate is a map along a run, with the run's cost up to it.
type iterate struct {
	m           consensus.Map
	evals, hess int
	cpu         time.Duration
}

// path runs method to the smallest tolerance and prints, for every
// tolerance, the first iterate that meets it.
func (p *problem) path(c config, method string, rx, again *channel.Received, prefix string) error {
	nt := consensus.Newton{Iters: c.maxIters, GradTol: c.tols[len(c.tols)-1], Confine: true}
	var m consensus.Method = nt
	if method == consensus.NameLBFGS {
		m = nt.FirstOrder()
	}
	var its []iterate
	hess := 0
	c0 := cpu()
	s := consensus.Settings{Method: m, Holdout: consensus.Off, Trace: true,
		Observe: func(_, evals int, m consensus.Map) {
			its = append(its, iterate{m.Clone(), evals, hess, cpu() - c0})
		}}
	if method == consensus.NameNewton {
		// Newton evaluates one Hessian per iteration, the start's included.
		s.Observe = func(it, evals int, m consensus.Map) {
			its = append(its, iterate{m.Clone(), evals, it + 1, cpu() - c0})
		}
	}
	fit, _, _, err := consensus.FitFromStart(context.Background(), rand.New(rand.NewPCG(1, 2)), rx, p.target.Clone(), s)
	if err != nil {
		fmt.Printf("%s error: %v\n", prefix, err)
		return nil
	}
	for _, tol := range c.tols {
		i := 0
		for i < len(fit.GradNorms) && fit.GradNorms[i] > tol*fit.StartGradNorm {
			i++
		}
		mark := ""
		if i == len(fit.GradNorms) {
			i--
			mark = " (" + fit.Status.String() + ")"
		}
		it := its[i]
		e, ef, kl, klf, err := p.measure(it.m.Apply(rx), it.m.Apply(again))
		if err != nil {
			return err
		}
		fmt.Printf("%s %-7g %6d %6d %5d %9.2g %16.10f %7.2f %10.4g %10.4g %10.4g %10.4g%s\n", prefix, tol, i+1, it.evals, it.hess,
			fit.GradNorms[i]/fit.StartGradNorm, fit.Objective[i+1], it.cpu.Seconds(), e, ef, kl, klf, mark)
	}
	return nil
}

// workers draws T samples (and fresh·T more) on each of K equal shards.
func (p *problem) workers(c config, rng *rand.Rand) (samples, fresh []*mat.Dense, err error) {
	shards, err := dataset.PartitionEqual(rng, p.train.Len(), c.k)
	if err != nil {
		return nil, nil, err
	}
	chains := make([]sampler.Runner, c.k)
	rngs := make([]*rand.Rand, c.k)
	d := p.target.Dim()
	for i, idx := range shards {
		if chains[i], err = p.chain(p.train.Subset(idx), float64(c.k)); err != nil {
			return nil, nil, err
		}
		rngs[i] = rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
		samples = append(samples, mat.NewDense(c.t, d, nil))
		fresh = append(fresh, mat.NewDense(c.fresh*c.t, d, nil))
	}
	if _, err := sampler.RunChains(context.Background(), rngs, chains, samples, nil, 100, 1, nil); err != nil {
		return nil, nil, err
	}
	_, err = sampler.RunChains(context.Background(), rngs, chains, fresh, nil, 0, 1, nil)
	return samples, fresh, err
}

// measure returns err2 and the predictive KL of the in-sample and fresh
// outputs.
func (p *problem) measure(in, fresh *mat.Dense) (e, ef, kl, klf float64, err error) {
	if e, err = metric.Err2(in, p.refMoment); err != nil {
		return
	}
	if ef, err = metric.Err2(fresh, p.refMoment); err != nil {
		return
	}
	if kl, err = metric.PredictiveKL(model.PredictiveProb(nil, in, p.test.U), p.refPred); err != nil {
		return
	}
	klf, err = metric.PredictiveKL(model.PredictiveProb(nil, fresh, p.test.U), p.refPred)
	return
}

// rows returns the first n rows of each matrix.
func rows(ms []*mat.Dense, n int) []*mat.Dense {
	out := make([]*mat.Dense, len(ms))
	for i, m := range ms {
		_, c := m.Dims()
		out[i] = m.Slice(0, n, 0, c).(*mat.Dense)
	}
	return out
}

// cpu is the process's user plus system CPU time.
func cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
