// Package wcmc runs wireless consensus Monte Carlo (Liu & Simeone,
// "Channel-Driven Monte Carlo Sampling for Bayesian Distributed Learning in
// Wireless Data Centers") on your own data, for Bayesian probit regression
// (eq: probit model), in a few calls:
//
//	data, _ := wcmc.LoadCSV("data.csv")                       // label,x1,…,xd
//	shards, _ := wcmc.Partition(data, K, seed)                // Z_1, …, Z_K
//	samples, _ := wcmc.SampleWorkers(shards, sampling, seed)  // θ_k ~ p(θ)^{1/K} p(Z_k|θ)
//	rx, _ := wcmc.Transmit(samples, link, seed)               // the uplink (OMA or NOMA)
//	res, _ := wcmc.Aggregate(rx, aggregation, seed)           // GCMC, WGCMC or WVCMC
//	ref, _ := wcmc.Posterior(data, sampling, seed)            // centralised reference
//	m, _ := wcmc.Evaluate(res.Theta, ref, testU)              // err2, predictive KL
//
// Each step is also a command of the wcmc CLI (wcmc partition, sample,
// transmit, aggregate, posterior, evaluate) that exchanges .npy and CSV
// files, so workers can run as separate jobs on separate machines; the CLI
// calls these functions, and a pipeline run step by step gives the same
// bits as the same calls made in one process under the same BLAS.
//
// # BLAS
//
// Importing wcmc leaves gonum's BLAS as it is. model.UseFastBLAS installs
// this module's faster one (package dgemm's matrix product on amd64 CPUs
// with AVX2 and FMA, OpenBLAS in the openblas build) for the whole
// process; the CLI calls it at start, so a program that does the same gets
// the CLI's speed and arithmetic.
//
// # Seeds
//
// Every function that draws random numbers takes a seed and derives its own
// generator from it: a PCG (math/rand/v2) whose two 64-bit seeds are
//
//	h = m(m(m(seed) ⊕ step) ⊕ k),  PCG(m(h ⊕ 1), m(h ⊕ 2)),
//
// with m the SplitMix64 finaliser (package wcmc/internal/seed), step = 1
// for Partition, 2 for sampling, 3 for Transmit, 4 for Aggregate and 5 for
// Posterior, and k the worker index (1, …, K) when sampling, 0 otherwise.
// Different steps thus never share a stream even with one seed for
// everything, and worker k's chain depends only on (seed, k):
// SampleWorker(shard, k, K, s, seed) run alone — in another process, on
// another machine — returns exactly SampleWorkers(shards, s, seed)[k−1].
// With Sampling.Chains = C > 1, chain 1 keeps that stream and chain
// c = 2, …, C absorbs one more field, h_c = m(h ⊕ (c − 1)), into
// PCG(m(h_c ⊕ 1), m(h_c ⊕ 2)): adding chains never changes the first ones.
package wcmc

import (
	"math/rand/v2"
	"os"

	"github.com/wcmc-project/wcmc/dataset"
	"github.com/wcmc-project/wcmc/internal/seed"
)

// Step codes of the seed derivation (see the package documentation).
const (
	stepPartition = 1
	stepSample    = 2
	stepTransmit  = 3
	stepAggregate = 4
	stepPosterior = 5
)

// stream returns the generator of one step (and worker k) for seed s:
// the PCG of the hash of (s, step, k) (seed.Hash.Rand).
func stream(s uint64, step, k int) *rand.Rand {
	return seed.New(s).AddUint64(uint64(step)).AddUint64(uint64(k)).Rand()
}

// LoadCSV reads a data set from the CSV file at path: rows
// "label,x1,…,xd" with labels 0 or 1 and finite covariates, an optional
// header line (see dataset.ReadCSV). Errors name the file, line and column.
func LoadCSV(path string) (dataset.Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return dataset.Set{}, err
	}
	defer f.Close()
	return dataset.ReadCSV(f, path)
}

// Partition splits data at random into k shards whose sizes differ by at
// most one (dataset.PartitionEqual): every point goes to exactly one shard.
func Partition(data dataset.Set, k int, seed uint64) ([]dataset.Set, error) {
	if err := data.Validate(); err != nil {
		return nil, err
	}
	idx, err := dataset.PartitionEqual(stream(seed, stepPartition, 0), data.Len(), k)
	if err != nil {
		return nil, err
	}
	return subsets(data, idx), nil
}

// PartitionHeterogeneous splits data into k class-skewed shards (the
// paper's Fig. 7): worker k gets a share ∝ k^{−ζ} of the class-1 points and
// ∝ (K−k+1)^{−ζ} of the class-0 points (dataset.PartitionHeterogeneous).
func PartitionHeterogeneous(data dataset.Set, k int, zeta float64, seed uint64) ([]dataset.Set, error) {
	if err := data.Validate(); err != nil {
		return nil, err
	}
	idx, err := dataset.PartitionHeterogeneous(stream(seed, stepPartition, 0), data.V, k, zeta)
	if err != nil {
		return nil, err
	}
	return subsets(data, idx), nil
}

func subsets(data dataset.Set, idx [][]int) []dataset.Set {
	out := make([]dataset.Set, len(idx))
	for k, ix := range idx {
		out[k] = data.Subset(ix)
	}
	return out
}
