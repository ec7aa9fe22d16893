package experiment

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/diagnostics"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/sampler"
)

// chainsPlan is probit-snr at one SNR, small, with sets added.
func chainsPlan(t *testing.T, sets ...string) (*runner.Plan, probitConfig) {
	t.Helper()
	spec, err := Lookup("probit-snr")
	if err != nil {
		t.Fatal(err)
	}
	base := []string{"trials=1", "N=400", "n_test=100", "K=4", "T=40", "ref_samples=400", "fresh_factor=2", "burnin=20", "snr_db=20"}
	plan, err := runner.NewPlan(spec, runner.Options{Seed: 11, Quick: true, Sets: append(base, sets...)})
	if err != nil {
		t.Fatal(err)
	}
	var p problems
	c := decodeProbit(decodeSynthetic)(plan.Values, &p)
	if err := p.err(); err != nil {
		t.Fatal(err)
	}
	return plan, c
}

// trialDrawsOf returns the workers' draws of trial 0 of plan.
func trialDrawsOf(t *testing.T, plan *runner.Plan, c probitConfig) (*probitProblem, *workerDraws) {
	t.Helper()
	shared, err := plan.Setup()
	if err != nil {
		t.Fatal(err)
	}
	p := shared.(*probitProblem)
	task := runner.Task{Params: plan.Values, Rng: runner.TaskRng(plan.Seed, plan.Spec.StreamID(), 0)}
	draws, err := p.trialDraws(task, c.workers, c.t, c.freshFactor*c.t)
	if err != nil {
		t.Fatal(err)
	}
	return p, draws
}

// With chains = 1 every worker's draws are those of the single-chain
// path: the partition and one Gibbs chain per worker started at its mode
// (sampler.NewGibbs), on the streams workerStreams splits off the task's
// stream, T samples after the burn-in and then the fresh ones.
func TestOneChainIsTheSingleChainPath(t *testing.T) {
	plan, c := chainsPlan(t)
	p, draws := trialDrawsOf(t, plan, c)
	rng := runner.TaskRng(plan.Seed, plan.Spec.StreamID(), 0)
	partRng, streams := workerStreams(rng, c.workers.k)
	shards, err := c.workers.partition(partRng, p.train)
	if err != nil {
		t.Fatal(err)
	}
	for i, idx := range shards {
		sh := p.train.Subset(idx)
		g, err := sampler.NewGibbs(sh.U, sh.V, float64(c.workers.k)*c.workers.priorVar)
		if err != nil {
			t.Fatal(err)
		}
		wr := rand.New(rand.NewPCG(streams[i].a, streams[i].b))
		samples, fresh := mat.NewDense(c.t, sh.Dim(), nil), mat.NewDense(c.freshFactor*c.t, sh.Dim(), nil)
		if err := g.Sample(wr, samples, c.workers.burnin); err != nil {
			t.Fatal(err)
		}
		if err := g.Sample(wr, fresh, 0); err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(samples, draws.samples[i]) || !mat.Equal(fresh, draws.fresh[i]) {
			t.Fatalf("worker %d: draws differ from the single-chain path", i+1)
		}
	}
	if _, ok := draws.diag["chains"]; ok {
		t.Errorf("one chain: the workers' info records chains = %v", draws.diag["chains"])
	}
}

// With C chains a worker's rows alternate between them: rows j, j+C, …
// are chain j's draws, chain 1's the first T/C draws of the single chain
// (same stream, same start), and the recorded R̂ and ESS are those of the
// C chains together (diagnostics.Rhat on the de-interleaved draws).
func TestWorkerChainsInterleaved(t *testing.T) {
	const c = 4
	plan1, one := chainsPlan(t)
	_, single := trialDrawsOf(t, plan1, one)
	plan, cfg := chainsPlan(t, "chains=4")
	_, draws := trialDrawsOf(t, plan, cfg)
	if draws.diag["chains"] != c {
		t.Errorf("workers' info: chains = %v, want %d", draws.diag["chains"], c)
	}
	maxRhat := draws.diag["max_rhat"].([]float64)
	for w, m := range draws.samples {
		n, d := m.Dims()
		if len(draws.chains[w]) != c {
			t.Fatalf("worker %d: %d chains", w+1, len(draws.chains[w]))
		}
		for i := range n / c {
			for j := range c {
				if !slices.Equal(draws.chains[w][j].RawRowView(i), m.RawRowView(i*c+j)) {
					t.Fatalf("worker %d: chain %d's draw %d is not row %d", w+1, j+1, i, i*c+j)
				}
			}
			if !slices.Equal(m.RawRowView(i*c), single.samples[w].RawRowView(i)) {
				t.Fatalf("worker %d: chain 1's draw %d differs from the single chain's", w+1, i)
			}
		}
		want := math.Inf(-1)
		for p := range d {
			x := make([][]float64, c)
			for j := range c {
				for i := j; i < n; i += c {
					x[j] = append(x[j], m.At(i, p))
				}
			}
			want = math.Max(want, diagnostics.Rhat(x))
		}
		if math.Abs(maxRhat[w]-want) > 1e-12 {
			t.Errorf("worker %d: recorded max R̂ %v, across the 4 chains %v", w+1, maxRhat[w], want)
		}
	}
}

// The reference's chains: run_info.reference records them, with R̂ across
// them, and a run with chains and ref_chains works end to end.
func TestChainsEndToEnd(t *testing.T) {
	res := run(t, "probit-snr", 0, "trials=1", "snr_db=5,25", "chains=2", "ref_chains=4", "ref_samples=2000")
	ref := res.RunInfo["reference"]
	if ref["chains"] != float64(4) || ref["draws"] != float64(500) {
		t.Errorf("reference %v: want 4 chains of 500 draws", ref)
	}
	for _, task := range res.Tasks {
		if task.Info["workers"]["chains"] != float64(2) {
			t.Errorf("task %+v: workers' info %v, want chains 2", task.TaskKey, task.Info["workers"])
		}
		if len(task.Rows) == 0 {
			t.Errorf("task %+v: no rows", task.TaskKey)
		}
	}
	// Reference R̂ across 4 chains, recomputed from the setup's draws.
	plan, c := chainsPlan(t, "ref_chains=4")
	shared, err := plan.Setup()
	if err != nil {
		t.Fatal(err)
	}
	p := shared.(*probitProblem)
	if p.refDiag["chains"] != 4 || p.refDiag["draws"] != c.ref.samples/4 {
		t.Errorf("reference diagnostics %v: want 4 chains of %d draws", p.refDiag, c.ref.samples/4)
	}
}

// Chains that do not divide the samples are refused before any work,
// naming the parameter.
func TestChainsMustDivide(t *testing.T) {
	for _, c := range []struct {
		id, set, want string
	}{
		{"probit-snr", "chains=3", "chains = 3 does not divide T = 200"},
		{"probit-gradients", "chains=3", "chains = 3 does not divide S = 50"},
		{"probit-snr", "ref_chains=3", "ref_chains = 3 does not divide ref_samples = 2000"},
	} {
		spec, _ := Lookup(c.id)
		if _, _, err := runner.Resolve(spec, []string{c.set}, true, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want an error containing %q", c.id, c.set, err, c.want)
		}
	}
}
