package experiment

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/metric"
)

func TestWorkerDiagnosticsInResults(t *testing.T) {
	res := run(t, "probit-snr", 0, "trials=1", "snr_db=20", "schemes=gcmc")
	for _, task := range res.Tasks {
		w, ok := task.Info["workers"]
		if !ok {
			t.Fatalf("task %+v: no worker diagnostics in its info", task.TaskKey)
		}
		k := res.Values.Int("K")
		for _, key := range []string{"max_rhat", "min_ess_bulk", "min_ess_tail"} {
			vals, ok := w[key].([]any) // as read back from the journal: JSON types
			if !ok || len(vals) != k {
				t.Fatalf("%s: %v, want %d values", key, w[key], k)
			}
			for i, x := range vals {
				if v, ok := x.(float64); !ok || !(v > 0) || math.IsInf(v, 0) {
					t.Errorf("%s of worker %d = %v, want a finite positive number", key, i+1, x)
				}
			}
		}
	}
}

func TestWorkerDiagnosticsFlagsAStuckChain(t *testing.T) {
	// Worker 1 mixes (independent normal draws), worker 2 drifts: only
	// worker 2 falls below the recommended R̂ and ESS.
	const n, d = 1000, 2
	good, stuck := mat.NewDense(n, d, nil), mat.NewDense(n, d, nil)
	for i := range n {
		for j := range d {
			// A deterministic low-discrepancy sequence stands in for iid draws.
			good.Set(i, j, math.Mod(float64(i)*0.6180339887+float64(j)*0.31, 1))
			stuck.Set(i, j, float64(i)/n)
		}
	}
	info, err := workerDiagnostics([][]*mat.Dense{{good}, {stuck}})
	if err != nil {
		t.Fatal(err)
	}
	flagged := info["below_recommended"].([]any)
	if len(flagged) != 1 || flagged[0] != any(2) {
		t.Errorf("below_recommended = %v, want [2]", flagged)
	}
	if r := info["max_rhat"].([]float64); !(r[1] > 1.01) || !(r[0] < 1.01) {
		t.Errorf("max R̂ = %v: want worker 2 above 1.01 and worker 1 below", r)
	}
}

func TestReferenceDiagnosticsInRunInfo(t *testing.T) {
	res := run(t, "probit-snr", 0, "trials=1", "snr_db=20", "schemes=gcmc")
	ref, ok := res.RunInfo["reference"]
	if !ok {
		t.Fatalf("run info %v: no reference diagnostics", res.RunInfo)
	}
	if ref["sampler"] != res.Values.String("ref_sampler") || ref["chains"] != float64(1) ||
		ref["draws"] != float64(res.Values.Int("ref_samples")) || ref["params"] != float64(res.Values.Int("d")) {
		t.Errorf("reference %v: want sampler %s, 1 chain of ref_samples draws of d parameters", ref, res.Values.String("ref_sampler"))
	}
	rhat, bulk, tail := ref["max_rhat"].(float64), ref["min_ess_bulk"].(float64), ref["min_ess_tail"].(float64)
	if !(rhat >= 1 && rhat < 1.5) || !(bulk > 0 && bulk <= 10*ref["draws"].(float64)) || !(tail > 0) {
		t.Errorf("reference R̂ %v, bulk ESS %v, tail ESS %v: want R̂ ≥ 1 and positive ESS", rhat, bulk, tail)
	}
	// The list of parameters below the recommended values agrees with the
	// worst cases.
	below := ref["below_recommended"].([]any)
	fails := rhat > 1.01 || bulk < 400 || tail < 400
	if fails != (len(below) > 0) {
		t.Errorf("below_recommended %v with R̂ %v, bulk ESS %v, tail ESS %v", below, rhat, bulk, tail)
	}
}

func TestReferenceDiagnosticsNamesStuckParameters(t *testing.T) {
	// Parameter 1 mixes, parameter 2 drifts: only theta[2] is flagged.
	const n = 1000
	ref := mat.NewDense(n, 2, nil)
	for i := range n {
		ref.Set(i, 0, math.Mod(float64(i)*0.6180339887, 1))
		ref.Set(i, 1, float64(i)/n)
	}
	info, err := referenceDiagnostics([]*mat.Dense{ref}, "gibbs")
	if err != nil {
		t.Fatal(err)
	}
	if b := info["below_recommended"].([]string); len(b) != 1 || b[0] != "theta[2]" {
		t.Errorf("below_recommended = %v, want [theta[2]]", b)
	}
	if r := info["max_rhat"].(float64); !(r > 1.01) {
		t.Errorf("max R̂ = %v, want the drifting parameter's, > 1.01", r)
	}
	if info["draws"] != n || info["params"] != 2 || info["sampler"] != "gibbs" {
		t.Errorf("info %v", info)
	}
}

// Coordinates 1 and 2 independent with θ_1 of mean zero: R_12 = 0, which
// the reference's draws cannot resolve; coordinates 2 and 3 strongly
// correlated away from zero; the pair (1, 3) has r = 0.8/√5.89 ≈ 0.33,
// beyond 4 standard errors, so visiting stops after the first pair.
func TestErr2Conditioning(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var chains []*mat.Dense
	for range 2 {
		ch := mat.NewDense(2000, 3, nil)
		for s := range 2000 {
			z := rng.NormFloat64()
			ch.Set(s, 0, rng.NormFloat64())
			ch.Set(s, 1, 2+z)
			ch.Set(s, 2, 2+z+0.5*rng.NormFloat64()+0.8*ch.At(s, 0))
		}
		chains = append(chains, ch)
	}
	all := mat.NewDense(4000, 3, nil)
	all.Stack(chains[0], chains[1])
	info := err2Conditioning(metric.SecondMoment(all), chains)
	if info["pairs"] != 3 {
		t.Fatalf("pairs = %v, want 3", info["pairs"])
	}
	pair := info["smallest_pair"].([]int)
	r, se := info["smallest"].(float64), info["smallest_mcse"].(float64)
	if pair[0] != 1 || pair[1] != 2 || r > 0.05 {
		t.Errorf("smallest entry %v with r = %g, want (1, 2) near 0", pair, r)
	}
	// Independent draws: the standard error of the mean of θ_1θ_2, of
	// variance E[θ_1²]E[θ_2²] = R_11 R_22, is 1/√4000 in these units.
	if want := 1 / math.Sqrt(4000); math.Abs(se-want) > 0.2*want {
		t.Errorf("standard error %g, want ≈ %g", se, want)
	}
	if info["unresolved"] != 1 || info["visited"] != 1 {
		t.Errorf("unresolved %v of %v visited, want 1 of 1: %v", info["unresolved"], info["visited"], info)
	}
}
