package wcmc_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/sampler"
)

// docChainStream is chain c's (1-based) stream as the package
// documentation states it, written out independently of the package.
func docChainStream(seed, step, k, c uint64) *rand.Rand {
	m := func(z uint64) uint64 {
		z += 0x9e3779b97f4a7c15
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		return z ^ (z >> 31)
	}
	h := m(m(m(seed)^step) ^ k)
	if c > 1 {
		h = m(h ^ (c - 1))
	}
	return rand.New(rand.NewPCG(m(h^1), m(h^2)))
}

// TestSampleWorkerChains checks the chains of one worker, for both
// samplers: identical on 1 and 4 cores; chain 1 is the single-chain
// output; chain c runs on the documented stream (the same chain built by
// package sampler on that generator gives the same bits); Pooled stacks
// the chains; SampleWorkers gives every worker's pooled chains.
func TestSampleWorkerChains(t *testing.T) {
	data := loadSmall(t)
	shards, err := wcmc.Partition(data, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	const seed, k, K, chains = 17, 2, 3, 3
	for _, method := range []string{wcmc.Gibbs, wcmc.HMC} {
		t.Run(method, func(t *testing.T) {
			s := wcmc.Sampling{S: 60, BurnIn: 20, PriorVar: 1.5, Sampler: method, Chains: chains}
			prev := runtime.GOMAXPROCS(1)
			one, err := wcmc.SampleWorkerChains(shards[k-1], k, K, s, seed)
			runtime.GOMAXPROCS(4)
			four, err4 := wcmc.SampleWorkerChains(shards[k-1], k, K, s, seed)
			runtime.GOMAXPROCS(prev)
			if err != nil || err4 != nil {
				t.Fatal(err, err4)
			}
			if len(one.Chains) != chains || len(one.Stats) != chains {
				t.Fatalf("%d chains, %d stats, want %d", len(one.Chains), len(one.Stats), chains)
			}
			for c := range one.Chains {
				if !equalBits(one.Chains[c], four.Chains[c]) || one.Stats[c] != four.Stats[c] {
					t.Errorf("chain %d differs between GOMAXPROCS 1 and 4", c+1)
				}
				if r, d := one.Chains[c].Dims(); r != s.S || d != data.Dim() || one.Stats[c].Draws != s.S {
					t.Errorf("chain %d is %d×%d (%d draws), want %d×%d", c+1, r, d, one.Stats[c].Draws, s.S, data.Dim())
				}
			}
			single := s
			single.Chains = 1
			alone, err := wcmc.SampleWorker(shards[k-1], k, K, single, seed)
			if err != nil {
				t.Fatal(err)
			}
			if !equalBits(alone, one.Chains[0]) {
				t.Error("chain 1 of 3 differs from the single chain")
			}
			// Chain 3 by hand: the documented stream, NewProbitChains.
			rngs := []*rand.Rand{docChainStream(seed, 2, k, 1), docChainStream(seed, 2, k, 2), docChainStream(seed, 2, k, 3)}
			sh := shards[k-1]
			runners, err := sampler.NewProbitChains(method, rngs, sh.U, sh.V, K*1.5)
			if err != nil {
				t.Fatal(err)
			}
			c3 := mat.NewDense(s.S, sh.Dim(), nil)
			if _, err := runners[2].Run(context.Background(), rngs[2], c3, nil, s.BurnIn, 1, nil); err != nil {
				t.Fatal(err)
			}
			if !equalBits(c3, one.Chains[2]) {
				t.Error("chain 3 is not the documented stream's")
			}
			var two, stacked mat.Dense
			two.Stack(one.Chains[0], one.Chains[1])
			stacked.Stack(&two, one.Chains[2])
			if !equalBits(one.Pooled(), &stacked) {
				t.Error("Pooled is not the chains stacked in order")
			}
			all, err := wcmc.SampleWorkers(shards, s, seed)
			if err != nil {
				t.Fatal(err)
			}
			if !equalBits(all[k-1], &stacked) {
				t.Error("SampleWorkers' worker 2 differs from SampleWorkerChains pooled")
			}
		})
	}
}

// TestPosteriorChains: HMC chains of the global posterior, deterministic,
// with acceptance statistics in range, and Posterior pooling them.
func TestPosteriorChains(t *testing.T) {
	data := loadSmall(t)
	s := wcmc.Sampling{S: 200, BurnIn: 100, Sampler: wcmc.HMC, Chains: 2, Thin: 2}
	d, err := wcmc.PosteriorChains(data, s, 3)
	if err != nil {
		t.Fatal(err)
	}
	for c, st := range d.Stats {
		if st.Steps != 400 || !(st.AcceptRate > 0.3 && st.AcceptRate <= 1) || st.StepSize <= 0 {
			t.Errorf("chain %d: stats %+v", c+1, st)
		}
	}
	pooled, err := wcmc.Posterior(data, s, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !equalBits(pooled, d.Pooled()) {
		t.Error("Posterior differs from PosteriorChains pooled")
	}

	// Sampling.Progress sees the transitions of both chains, done
	// increasing to the total, and changes no draw.
	var last, calls int
	s.Progress = func(done, total int) {
		if want := 2 * (100 + 2*200); total != want || done <= last {
			t.Errorf("progress %d/%d after %d: want done increasing, total %d", done, total, last, want)
		}
		last = done
		calls++
	}
	watched, err := wcmc.Posterior(data, s, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !equalBits(watched, pooled) || last != 1000 || calls < 1000/sampler.ProgressEvery {
		t.Errorf("with Progress: same draws %v, last report %d of 1000 after %d calls", equalBits(watched, pooled), last, calls)
	}
}

func TestSamplingErrors(t *testing.T) {
	data := loadSmall(t)
	for _, c := range []struct {
		s    wcmc.Sampling
		want string
	}{
		{wcmc.Sampling{S: 10, Sampler: "nuts"}, `unknown sampler "nuts"`},
		{wcmc.Sampling{S: 10, Chains: -1}, "-1 chains"},
		{wcmc.Sampling{S: 10, Thin: -1}, "thinning -1"},
	} {
		if _, err := wcmc.Posterior(data, c.s, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.s, err, c.want)
		}
		if _, err := wcmc.SampleWorker(data, 1, 1, c.s, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: SampleWorker error %v, want %q", c.s, err, c.want)
		}
	}
}

// A cancelled context stops the chains of PosteriorChainsContext and
// SampleWorkerChainsContext with an error wrapping context.Canceled.
func TestSamplingContext(t *testing.T) {
	data := loadSmall(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := wcmc.Sampling{S: 100000, BurnIn: 100, Chains: 2}
	if _, err := wcmc.PosteriorChainsContext(ctx, data, s, 1); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "sampling stopped") {
		t.Errorf("posterior: %v", err)
	}
	if _, err := wcmc.SampleWorkerChainsContext(ctx, data, 1, 2, s, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("worker: %v", err)
	}
}
