package sampler

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// Chain is a Markov chain that fills the rows of dst with samples after
// burnin transitions, continuing where it stopped on the next call. Gibbs
// and HMC are chains.
type Chain interface {
	Sample(rng *rand.Rand, dst *mat.Dense, burnin int) error
}

// SampleChains runs chains[k].Sample(rngs[k], dst[k], burnin) for every k
// (the K workers), in parallel on at most GOMAXPROCS goroutines. Chain k
// uses only rngs[k], so the result is bit-identical to the sequential loop
// whatever the scheduling; the caller must give each chain its own
// generator. It returns the first error in chain order.
func SampleChains(rngs []*rand.Rand, chains []Chain, dst []*mat.Dense, burnin int) error {
	if len(rngs) != len(chains) || len(dst) != len(chains) {
		return fmt.Errorf("sampler: %d generators, %d chains and %d outputs", len(rngs), len(chains), len(dst))
	}
	for k := range chains {
		for j := 0; j < k; j++ {
			if rngs[j] == rngs[k] {
				return fmt.Errorf("sampler: chains %d and %d share a generator", j, k)
			}
			if chains[j] == chains[k] {
				return fmt.Errorf("sampler: chain %d is listed twice (also at %d)", k, j)
			}
		}
	}
	errs := make([]error, len(chains))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(chains)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				errs[k] = chains[k].Sample(rngs[k], dst[k], burnin)
			}
		}()
	}
	for k := range chains {
		jobs <- k
	}
	close(jobs)
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			return fmt.Errorf("worker %d: %w", k+1, err)
		}
	}
	return nil
}
