package wcmc

// The workers' and the global posterior's Markov chains: Sampling,
// Draws, and the sample steps.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/dataset"
	"github.com/wcmc-project/wcmc/internal/seed"
	"github.com/wcmc-project/wcmc/sampler"
)

// DefaultPriorVar is the prior variance σ² of p(θ) = N(0, σ² I) used when
// Sampling.PriorVar is zero (the paper does not state σ², docs/MATH.md note 6).
const DefaultPriorVar = 1

// Samplers of Sampling.Sampler.
const (
	// Gibbs is the Albert–Chib Gibbs sampler, the paper's (the default).
	Gibbs = sampler.MethodGibbs
	// HMC is Hamiltonian Monte Carlo preconditioned by the Laplace
	// approximation at the mode, its step size adapted during burn-in
	// (sampler.HMCKernel): it mixes where Gibbs does not, on nearly
	// separable data.
	HMC = sampler.MethodHMC
)

// Sampling configures the Markov chains of the workers and of the
// reference posterior.
type Sampling struct {
	// S is the number of samples kept per chain (rows of the output).
	S int
	// BurnIn is the number of sweeps discarded first (the paper: 100,
	// sampler.DefaultBurnIn). Zero means none. HMC adapts its step size
	// during the burn-in.
	BurnIn int
	// PriorVar is σ² of the global prior N(0, σ² I); worker k of K samples
	// its subposterior with the tempered prior p(θ)^{1/K} = N(0, Kσ² I)
	// (eq: subposterior). Zero means DefaultPriorVar.
	PriorVar float64
	// Sampler is Gibbs or HMC; empty means Gibbs.
	Sampler string
	// Chains is the number C of chains per posterior; zero means 1. Chain
	// 1 starts at the posterior mode, chain c ≥ 2 at a draw from the
	// Laplace approximation with its deviations from the mode doubled
	// (sampler.NewProbitChains), each on its own stream (see Seeds).
	Chains int
	// Thin keeps every Thin-th transition after burn-in; zero means 1.
	Thin int
	// Progress, if not nil, is told of the chains' advance: it is called
	// with the transitions made so far and their total over all chains
	// (sampler.RunChains), the calls serialised, done increasing to total.
	// It only observes: the draws are the same with or without it.
	Progress func(done, total int)
}

// check validates s and returns the prior variance, sampler and number of
// chains with their defaults filled in.
func (s Sampling) check() (Sampling, error) {
	switch {
	case s.S < 1:
		return s, fmt.Errorf("sampling: S = %d samples, want ≥ 1", s.S)
	case s.BurnIn < 0:
		return s, fmt.Errorf("sampling: burn-in %d, want ≥ 0", s.BurnIn)
	case s.Chains < 0:
		return s, fmt.Errorf("sampling: %d chains, want ≥ 1", s.Chains)
	case s.Thin < 0:
		return s, fmt.Errorf("sampling: thinning %d, want ≥ 1", s.Thin)
	case s.Sampler != "" && s.Sampler != Gibbs && s.Sampler != HMC:
		return s, fmt.Errorf("sampling: unknown sampler %q, want %s or %s", s.Sampler, Gibbs, HMC)
	case s.PriorVar != 0 && (!(s.PriorVar > 0) || math.IsInf(s.PriorVar, 0)):
		return s, fmt.Errorf("sampling: prior variance σ² = %v, want a positive finite number", s.PriorVar)
	}
	if s.PriorVar == 0 {
		s.PriorVar = DefaultPriorVar
	}
	if s.Sampler == "" {
		s.Sampler = Gibbs
	}
	s.Chains = max(1, s.Chains)
	s.Thin = max(1, s.Thin)
	return s, nil
}

// Draws are the samples of one posterior from C chains.
type Draws struct {
	// Chains holds one S×d matrix per chain, in chain order.
	Chains []*mat.Dense
	// Stats are the chains' sampler statistics after burn-in (acceptance,
	// step size, divergences).
	Stats []sampler.Stats
	// Infos are, per chain, the sampler's report on the transition that
	// made each draw (Infos[c][i] for row i of Chains[c]; with thinning,
	// the last of its transitions): acceptance, step size, log density,
	// divergence.
	Infos [][]sampler.Info
}

// Pooled returns the draws of all chains, chain after chain (C·S × d): the
// samples a worker transmits. For one chain it is that chain's matrix.
func (d *Draws) Pooled() *mat.Dense {
	if len(d.Chains) == 1 {
		return d.Chains[0]
	}
	s, dim := d.Chains[0].Dims()
	out := mat.NewDense(len(d.Chains)*s, dim, nil)
	for c, m := range d.Chains {
		out.Slice(c*s, (c+1)*s, 0, dim).(*mat.Dense).Copy(m)
	}
	return out
}

// chainRngs returns the generators of the C chains of stream (step, k):
// chain 1 uses stream(seed, step, k) itself, chain c ≥ 2 the PCG of that
// hash extended by c − 1.
func chainRngs(s uint64, step, k, chains int) []*rand.Rand {
	h := seed.New(s).AddUint64(uint64(step)).AddUint64(uint64(k))
	return h.Chains(h.Rand(), chains)
}

// job is the chains of one posterior, ready to run.
type job struct {
	chains []sampler.Runner
	rngs   []*rand.Rand
	dst    []*mat.Dense
	infos  [][]sampler.Info
}

// newJob starts s.Chains chains (s checked) on the probit posterior of set
// with prior variance pv, on the streams of (step, k); what names the
// posterior in errors ("" for the global one).
func newJob(set dataset.Set, s Sampling, pv float64, seed uint64, step, k int, what string) (job, error) {
	rngs := chainRngs(seed, step, k, s.Chains)
	chains, err := sampler.NewProbitChains(s.Sampler, rngs, set.U, set.V, pv)
	if err != nil {
		return job{}, err
	}
	sampler.NameChains(what, chains)
	dst := make([]*mat.Dense, s.Chains)
	infos := make([][]sampler.Info, s.Chains)
	for c := range dst {
		dst[c] = mat.NewDense(s.S, set.Dim(), nil)
		infos[c] = make([]sampler.Info, s.S)
	}
	return job{chains, rngs, dst, infos}, nil
}

// runJobs runs the chains of all jobs in parallel, until ctx is done, and
// returns their draws.
func runJobs(ctx context.Context, jobs []job, s Sampling) ([]*Draws, error) {
	var (
		chains []sampler.Runner
		rngs   []*rand.Rand
		dst    []*mat.Dense
		infos  [][]sampler.Info
	)
	for _, j := range jobs {
		chains = append(chains, j.chains...)
		rngs = append(rngs, j.rngs...)
		dst = append(dst, j.dst...)
		infos = append(infos, j.infos...)
	}
	stats, err := sampler.RunChains(ctx, rngs, chains, dst, infos, s.BurnIn, s.Thin, s.Progress)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("sampling stopped: %w", ctx.Err())
		}
		return nil, errors.Unwrap(err) // the chains name themselves
	}
	out := make([]*Draws, len(jobs))
	for i, j := range jobs {
		out[i] = &Draws{Chains: j.dst, Stats: stats[i*s.Chains : (i+1)*s.Chains], Infos: j.infos}
	}
	return out, nil
}

// runJob runs the chains of j unless preparing it failed with err.
func runJob(ctx context.Context, j job, err error, s Sampling) (*Draws, error) {
	if err != nil {
		return nil, err
	}
	d, err := runJobs(ctx, []job{j}, s)
	if err != nil {
		return nil, err
	}
	return d[0], nil
}

// worker prepares worker k's (1-based) chains on shard, of K workers.
func worker(shard dataset.Set, k, K int, s Sampling, seed uint64) (job, error) {
	if K < 1 || k < 1 || k > K {
		return job{}, fmt.Errorf("worker %d of K = %d: want 1 ≤ k ≤ K", k, K)
	}
	if err := shard.Validate(); err != nil {
		return job{}, fmt.Errorf("worker %d: %w", k, err)
	}
	j, err := newJob(shard, s, float64(K)*s.PriorVar, seed, stepSample, k, fmt.Sprintf("worker %d", k))
	if err != nil {
		return job{}, fmt.Errorf("worker %d (%d points): %w", k, shard.Len(), err)
	}
	return j, nil
}

// SampleWorkerChains draws s.Chains chains of s.S samples each of worker
// k's subposterior p(θ)^{1/K} p(Z_k|θ) (eq: subposterior), k = 1, …, K, by
// s.Sampler on its shard with prior N(0, Kσ² I), after s.BurnIn
// transitions. The chains run in parallel; their generators depend only on
// (seed, k, chain), so the result equals worker k's draws in
// SampleWorkers, whatever the number of cores.
func SampleWorkerChains(shard dataset.Set, k, K int, s Sampling, seed uint64) (*Draws, error) {
	return SampleWorkerChainsContext(context.Background(), shard, k, K, s, seed)
}

// SampleWorkerChainsContext is SampleWorkerChains stopping once ctx is
// done (checked every sampler.ProgressEvery transitions of each chain),
// with an error wrapping ctx.Err().
func SampleWorkerChainsContext(ctx context.Context, shard dataset.Set, k, K int, s Sampling, seed uint64) (*Draws, error) {
	s, err := s.check()
	if err != nil {
		return nil, err
	}
	j, err := worker(shard, k, K, s, seed)
	return runJob(ctx, j, err, s)
}

// SampleWorker draws s.S samples (rows of the S×d result) of worker k's
// subposterior p(θ)^{1/K} p(Z_k|θ) (eq: subposterior), k = 1, …, K, by
// Gibbs sampling (or s.Sampler) on its shard with prior N(0, Kσ² I), after
// s.BurnIn sweeps from the shard's posterior mode: SampleWorkerChains
// pooled (C·S rows for C chains). Its generator depends only on (seed, k),
// so it equals worker k's output of SampleWorkers.
func SampleWorker(shard dataset.Set, k, K int, s Sampling, seed uint64) (*mat.Dense, error) {
	d, err := SampleWorkerChains(shard, k, K, s, seed)
	if err != nil {
		return nil, err
	}
	return d.Pooled(), nil
}

// SampleWorkers runs SampleWorker for every shard (K = len(shards)), all
// chains in parallel, each on its own generator, and returns the K sample
// matrices in worker order. The result does not depend on the number of
// cores.
func SampleWorkers(shards []dataset.Set, s Sampling, seed uint64) ([]*mat.Dense, error) {
	K := len(shards)
	if K == 0 {
		return nil, fmt.Errorf("no shards to sample")
	}
	s, err := s.check()
	if err != nil {
		return nil, err
	}
	jobs := make([]job, K)
	for i, sh := range shards {
		if i > 0 && sh.Dim() != shards[0].Dim() {
			return nil, fmt.Errorf("worker %d has d = %d covariates, worker 1 has %d", i+1, sh.Dim(), shards[0].Dim())
		}
		if jobs[i], err = worker(sh, i+1, K, s, seed); err != nil {
			return nil, err
		}
	}
	draws, err := runJobs(context.Background(), jobs, s)
	if err != nil {
		return nil, err
	}
	out := make([]*mat.Dense, K)
	for i, d := range draws {
		out[i] = d.Pooled()
	}
	return out, nil
}

// PosteriorChains draws s.Chains chains of s.S samples each of the global
// posterior p(θ|Z) ∝ N(θ; 0, σ² I) Π_n Φ(s_n θᵀu_n) by s.Sampler on the
// whole data set, in parallel: the centralised reference that Evaluate
// compares with (the paper uses one Gibbs chain of S = 20000 after a
// burn-in of 100, docs/MATH.md note 9).
func PosteriorChains(data dataset.Set, s Sampling, seed uint64) (*Draws, error) {
	return PosteriorChainsContext(context.Background(), data, s, seed)
}

// PosteriorChainsContext is PosteriorChains stopping once ctx is done
// (checked every sampler.ProgressEvery transitions of each chain), with an
// error wrapping ctx.Err().
func PosteriorChainsContext(ctx context.Context, data dataset.Set, s Sampling, seed uint64) (*Draws, error) {
	s, err := s.check()
	if err != nil {
		return nil, err
	}
	if err := data.Validate(); err != nil {
		return nil, err
	}
	j, err := newJob(data, s, s.PriorVar, seed, stepPosterior, 0, "")
	return runJob(ctx, j, err, s)
}

// Posterior draws s.S samples of the global posterior p(θ|Z) ∝ N(θ; 0, σ² I)
// Π_n Φ(s_n θᵀu_n) by Gibbs sampling (or s.Sampler) on the whole data set:
// PosteriorChains pooled (C·S rows for C chains), the centralised reference
// that Evaluate compares with (the paper uses S = 20000 after a burn-in of
// 100, docs/MATH.md note 9).
func Posterior(data dataset.Set, s Sampling, seed uint64) (*mat.Dense, error) {
	d, err := PosteriorChains(data, s, seed)
	if err != nil {
		return nil, err
	}
	return d.Pooled(), nil
}
