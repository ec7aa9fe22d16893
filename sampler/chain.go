package sampler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// Runner is a chain driven by Run — a kernel bound to its state, with its
// own adaptation — that also thins and reports its statistics: burnin
// transitions, then thin per row of dst; infos, if not nil, receives the
// Info of the step that made each row (Schedule.Infos), and progress, if
// not nil, the advance (Schedule.Progress); it stops once ctx is done
// (Schedule.Ctx). The chain continues where it stopped on the next call.
// Gibbs and HMC are runners.
type Runner interface {
	Run(ctx context.Context, rng *rand.Rand, dst *mat.Dense, infos []Info, burnin, thin int, progress Progress) (Stats, error)
	// Position returns the current θ (a view, not to be modified).
	Position() []float64
}

// Named returns r with its Run errors prefixed by name ("worker 3, chain
// 2: …"); an empty name leaves them as they are.
func Named(r Runner, name string) Runner {
	if name == "" {
		return r
	}
	return named{r, name}
}

// NameChains names the C = len(chains) chains of one posterior, in place,
// for their errors (Named): name alone for one chain, "name, chain c" (or
// "chain c" for an empty name) for several.
func NameChains(name string, chains []Runner) {
	for c := range chains {
		label := name
		if len(chains) > 1 {
			label = fmt.Sprintf("chain %d", c+1)
			if name != "" {
				label = name + ", " + label
			}
		}
		chains[c] = Named(chains[c], label)
	}
}

// named is a Runner whose errors carry its name.
type named struct {
	Runner
	name string
}

func (n named) Run(ctx context.Context, rng *rand.Rand, dst *mat.Dense, infos []Info, burnin, thin int, progress Progress) (Stats, error) {
	st, err := n.Runner.Run(ctx, rng, dst, infos, burnin, thin, progress)
	if err != nil {
		err = fmt.Errorf("%s: %w", n.name, err)
	}
	return st, err
}

// RunChains runs chains[k].Run(ctx, rngs[k], dst[k], infos[k], burnin, thin)
// for every k (the K workers, or the C chains of a posterior), in parallel
// on at most GOMAXPROCS goroutines, and returns the chains' statistics.
// Chain k uses only rngs[k], so the result is bit-identical to the
// sequential loop whatever the scheduling; the caller must give each chain
// its own generator. infos is nil (no per-draw infos) or holds one slice
// per chain. It returns the first error in chain order, as "chain k: …".
//
// report, if not nil, is called with the transitions made by all chains
// so far and their total, Σ_k (burnin + thin·rows of dst[k]), at least
// every ProgressEvery transitions of a chain: the calls are serialised,
// done increases and the last call (of a run without error) has done =
// total. It only observes: the draws do not depend on it.
func RunChains(ctx context.Context, rngs []*rand.Rand, chains []Runner, dst []*mat.Dense, infos [][]Info, burnin, thin int, report func(done, total int)) ([]Stats, error) {
	if err := checkChains(rngs, chains, dst); err != nil {
		return nil, err
	}
	if infos != nil && len(infos) != len(chains) {
		return nil, fmt.Errorf("sampler: %d info outputs for %d chains", len(infos), len(chains))
	}
	var progress Progress
	if report != nil {
		total := 0
		for _, m := range dst {
			total += burnin + max(1, thin)*m.RawMatrix().Rows
		}
		var mu sync.Mutex
		done := 0
		progress = func(steps int) {
			mu.Lock()
			defer mu.Unlock()
			done += steps
			report(done, total)
		}
	}
	stats := make([]Stats, len(chains))
	err := parallel(len(chains), func(k int) error {
		var in []Info
		if infos != nil {
			in = infos[k]
		}
		var err error
		stats[k], err = chains[k].Run(ctx, rngs[k], dst[k], in, burnin, thin, progress)
		return err
	})
	if err != nil {
		return nil, err
	}
	return stats, nil
}

// checkChains checks that there is one generator and one output per chain
// and that no generator or chain is listed twice.
func checkChains(rngs []*rand.Rand, chains []Runner, dst []*mat.Dense) error {
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
	return nil
}

// parallel calls run(k) for k = 0, …, n−1 on at most GOMAXPROCS
// goroutines and returns the first error in index order, naming it as
// "chain" and the 1-based index.
func parallel(n int, run func(k int) error) error {
	errs := make([]error, n)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				errs[k] = run(k)
			}
		}()
	}
	for k := range n {
		jobs <- k
	}
	close(jobs)
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			return fmt.Errorf("chain %d: %w", k+1, err)
		}
	}
	return nil
}
