package experiment

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/dataset"
	"github.com/wcmc-project/wcmc/internal/seed"
	"github.com/wcmc-project/wcmc/metric"
	"github.com/wcmc-project/wcmc/model"
	"github.com/wcmc-project/wcmc/sampler"
)

// The probit experiments' Markov chains: the reference samples of the
// global posterior, drawn once per run, and the workers' samples of their
// subposteriors, drawn per trial. Each posterior is sampled by C chains
// (sampler.NewProbitChains: the first at the mode, the others at starts
// dispersed around it; parameters chains and ref_chains), run in parallel
// (sampler.RunChains) with one stream each. A posterior's n draws are the
// rows of one matrix with the chains interleaved — row i is draw ⌊i/C⌋ of
// chain i mod C (interleaved) — so that its first m rows (OMA sends the
// first ⌊T/K⌋ of a worker's T) hold ⌈(m − j)/C⌉ draws of chain j, nearly
// equal shares. With C = 1 the matrix is the single chain's draws.

// probitProblem is the data and reference shared by every task of a run.
type probitProblem struct {
	train, test dataset.Set
	global      *model.Probit
	refMoment   *mat.SymDense     // (1/S_g) Σ θ_g θ_gᵀ
	ref         *metric.Reference // the reference draws, for the uncertainty metrics
	refPred     []float64         // reference ensemble predictive on the test set

	refDiag map[string]any // the reference chains' convergence (referenceDiagnostics)
	draws   *sampleCache   // the workers' draws of the trials in flight
}

// newProbitProblem builds the data and the reference of a run whose sweep
// over x has the configurations points (the data and reference
// parameters, which no probit spec sweeps, are read from the first) on the
// setup stream rng. It first checks, at every point, what needs the data
// (workerConfig.checkData), so that a large ζ fails before the first task.
func newProbitProblem(x string, points []*probitBase, rng *rand.Rand) (*probitProblem, error) {
	first := points[0]
	var train, test dataset.Set
	if m := first.data.mnist; m != nil {
		var err error
		if train, test, err = m.load(); err != nil {
			return nil, err
		}
	} else {
		theta := dataset.ThetaStar(first.data.d)
		train = dataset.Synthetic(rng, theta, first.data.n)
		test = dataset.Synthetic(rng, theta, first.data.nTest)
	}
	for _, b := range points {
		if err := b.workers.checkData(train); err != nil {
			return nil, err
		}
	}
	return newProbitReference(train, test, first.ref, newSampleCache(x, len(points)), rng)
}

// newProbitReference builds the target and the reference (S_g samples of
// the global posterior, from rng alone with one chain, else from chains
// on streams split off it) for a training and a test set, with the
// reference chains' diagnostics (reported once per run, RunInfo).
func newProbitReference(train, test dataset.Set, ref referenceConfig, cache *sampleCache, rng *rand.Rand) (*probitProblem, error) {
	p := &probitProblem{train: train, test: test, draws: cache}
	var err error
	if p.global, err = model.NewProbit(train.U, train.V, ref.priorVar); err != nil {
		return nil, err
	}
	rngs := []*rand.Rand{rng}
	if ref.chains > 1 {
		rngs = splitSeeds(rng).chains(ref.chains)
	}
	set := chainSet{chains: ref.chains}
	if err := set.add("reference sampler", ref.sampler, rngs, train, ref.priorVar); err != nil {
		return nil, fmt.Errorf("reference sampler: %w", err)
	}
	draws, chains, err := set.run(ref.samples, p.global.Dim(), ref.burnin)
	if err != nil {
		return nil, err
	}
	p.refMoment = metric.SecondMoment(draws[0])
	if p.ref, err = metric.NewSampleReference(draws[0]); err != nil {
		return nil, err
	}
	p.refPred = model.PredictiveProb(nil, draws[0], test.U)
	if p.refDiag, err = referenceDiagnostics(chains[0], ref.sampler); err != nil {
		return nil, fmt.Errorf("reference diagnostics: %w", err)
	}
	p.refDiag["err2_conditioning"] = err2Conditioning(p.refMoment, chains[0])
	return p, nil
}

// workerSamples partitions the training set and draws, on every worker's
// shard, n samples of its subposterior (after each chain's burn-in) and
// then nFresh more from the same chains (same stationary law). Worker i's
// chains run on the generators streams[i].chains(w.chains).
func (p *probitProblem) workerSamples(w workerConfig, partRng *rand.Rand, streams []seededStream, n, nFresh int) (*workerDraws, error) {
	shards, err := w.partition(partRng, p.train)
	if err != nil {
		return nil, err
	}
	set := chainSet{chains: w.chains}
	for i, idx := range shards {
		sh := p.train.Subset(idx)
		// The 1/K-tempered prior: N(0, Kσ² I) (docs/MATH.md note 6).
		if err := set.add(fmt.Sprintf("worker %d", i+1), w.sampler, streams[i].chains(w.chains), sh, float64(len(shards))*w.priorVar); err != nil {
			return nil, fmt.Errorf("worker %d (%d points): %w", i+1, len(idx), err)
		}
	}
	d := p.global.Dim()
	draws := &workerDraws{}
	if draws.samples, draws.chains, err = set.run(n, d, w.burnin); err != nil {
		return nil, err
	}
	if nFresh > 0 {
		if draws.fresh, _, err = set.run(nFresh, d, 0); err != nil {
			return nil, err
		}
	}
	return draws, nil
}

// partition splits the training set for one task.
func (w workerConfig) partition(rng *rand.Rand, train dataset.Set) ([][]int, error) {
	if w.split == "heterogeneous" {
		return dataset.PartitionHeterogeneous(rng, train.V, w.k, w.zeta)
	}
	return dataset.PartitionEqual(rng, train.Len(), w.k)
}

// checkData reports what the workers cannot get from the training set:
// data for each of K workers (K ≤ N), and with partition=heterogeneous
// data for each from the class-skewed split of ζ and K.
func (w workerConfig) checkData(train dataset.Set) error {
	if w.k > train.Len() {
		return fmt.Errorf("K = %d workers for N = %d data points: every worker needs data (K ≤ N)", w.k, train.Len())
	}
	if w.split != "heterogeneous" {
		return nil
	}
	// The split's sizes depend only on the labels, ζ and K; the rng only
	// decides which points go where.
	if _, err := dataset.PartitionHeterogeneous(rand.New(rand.NewPCG(1, 2)), train.V, w.k, w.zeta); err != nil {
		return fmt.Errorf("zeta = %g, K = %d: %w", w.zeta, w.k, err)
	}
	return nil
}

// workerStreams splits off rng the independent streams of the data
// partition and of each of the k workers (seededStream.chains gives a
// worker's chains their generators).
func workerStreams(rng *rand.Rand, k int) (part *rand.Rand, workers []seededStream) {
	part = seed.Split(rng)
	workers = make([]seededStream, k)
	for i := range workers {
		workers[i] = splitSeeds(rng)
	}
	return part, workers
}

// chainSet is the chains of several posteriors, the same number each,
// run together.
type chainSet struct {
	chains  int // per posterior
	runners []sampler.Runner
	rngs    []*rand.Rand
}

// add starts len(rngs) = s.chains chains of method on the probit
// posterior of set with prior N(0, priorVar·I) (sampler.NewProbitChains),
// named name in errors.
func (s *chainSet) add(name, method string, rngs []*rand.Rand, set dataset.Set, priorVar float64) error {
	chains, err := sampler.NewProbitChains(method, rngs, set.U, set.V, priorVar)
	if err != nil {
		return err
	}
	sampler.NameChains(name, chains)
	s.runners = append(s.runners, chains...)
	s.rngs = append(s.rngs, rngs...)
	return nil
}

// run continues every chain, after burnin transitions, for n/s.chains
// draws, all in parallel (sampler.RunChains), and returns per posterior
// the n×d matrix of its draws and its chains' views into it (interleaved).
func (s *chainSet) run(n, d, burnin int) (draws []*mat.Dense, chains [][]*mat.Dense, err error) {
	var dst []*mat.Dense
	for range len(s.runners) / s.chains {
		m := mat.NewDense(n, d, nil)
		views := interleaved(m, s.chains)
		draws, chains, dst = append(draws, m), append(chains, views), append(dst, views...)
	}
	if _, err := sampler.RunChains(context.Background(), s.rngs, s.runners, dst, nil, burnin, 1, nil); err != nil {
		return nil, nil, errors.Unwrap(err) // the chains name themselves
	}
	return draws, chains, nil
}

// interleaved returns c views of the rows of m (n×d, c dividing n): view
// j holds rows j, j + c, j + 2c, …. With c = 1 it is m itself.
func interleaved(m *mat.Dense, c int) []*mat.Dense {
	if c == 1 {
		return []*mat.Dense{m}
	}
	raw := m.RawMatrix()
	rows := raw.Rows / c
	views := make([]*mat.Dense, c)
	for j := range views {
		start := j * raw.Stride
		end := start + (rows-1)*c*raw.Stride + raw.Cols
		views[j] = &mat.Dense{}
		views[j].SetRawMatrix(blas64.General{Rows: rows, Cols: raw.Cols, Stride: c * raw.Stride, Data: raw.Data[start:end]})
	}
	return views
}
