package experiment

import (
	"context"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/runner"
)

func run(t *testing.T, id string, workers int, sets ...string) *runner.Result {
	t.Helper()
	spec, err := Lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	res, err := runner.Run(context.Background(), spec, runner.Options{Seed: 7, Quick: true, Workers: workers, Sets: sets})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestGaussDeterministicAcrossWorkers(t *testing.T) {
	// Tasks share the Setup state (covariances, target) across goroutines:
	// any hidden mutable state would make results depend on scheduling.
	a := run(t, "gauss-snr", 1, "trials=3")
	b := run(t, "gauss-snr", 4, "trials=3")
	if !reflect.DeepEqual(a.Tasks, b.Tasks) {
		t.Fatal("results differ between 1 and 4 workers")
	}
	got := map[string]int{}
	for _, task := range a.Tasks {
		for _, r := range task.Rows {
			if !slices.Contains(a.Spec.Metrics, r.Metric) || math.IsNaN(r.Value) || r.Value < 0 ||
				(strings.HasPrefix(r.Metric, "coverage90") && r.Value > 1) {
				t.Fatalf("bad row %+v", r)
			}
			got[r.Scheme]++
		}
	}
	want := 3 * 3 * len(a.Spec.Metrics) // SNR points × trials × metrics
	for _, s := range wirelessSchemes {
		if got[s] != want {
			t.Errorf("%s: %d rows, want %d", s, got[s], want)
		}
	}
}

func TestGaussBlocksOMANotApplicableBelowK(t *testing.T) {
	// T = 10 with K = 10 gives S = 1 per worker under OMA: covariance
	// estimates are impossible, so the OMA schemes must be skipped, not
	// crash or report numbers; NOMA still has S = 10.
	res := run(t, "gauss-blocks", 0, "T=10", "trials=2")
	rows := map[string]bool{}
	for _, task := range res.Tasks {
		for _, r := range task.Rows {
			rows[r.Scheme] = true
		}
	}
	for _, s := range []string{SchemeGCMC, SchemeWGCMCOMA, SchemeWVCMCOMA, SchemeNoiseless} {
		if rows[s] {
			t.Errorf("%s reported at S = 1", s)
		}
	}
	for _, s := range []string{SchemeWGCMCNOMA, SchemeWVCMCNOMA} {
		if !rows[s] {
			t.Errorf("%s missing at T = 10", s)
		}
	}
	if len(res.Notes) != 4 {
		t.Errorf("notes: %v", res.Notes)
	}
}

func TestGaussProblemCovariances(t *testing.T) {
	for _, homo := range []bool{false, true} {
		p, err := newGaussProblem(gaussConfig{d: 5, k: 10, homogeneous: homo})
		if err != nil {
			t.Fatal(err)
		}
		// Σ_k C_k^{-1} must equal C^{-1} in both variants (the homogeneous
		// C_0 = K C has the same global posterior by construction).
		sum := mat.NewDense(5, 5, nil)
		for _, g := range p.sub {
			var inv mat.Dense
			if err := inv.Inverse(g.Cov()); err != nil {
				t.Fatal(err)
			}
			sum.Add(sum, &inv)
		}
		var want mat.Dense
		if err := want.Inverse(p.global.Cov()); err != nil {
			t.Fatal(err)
		}
		if !mat.EqualApprox(sum, &want, 1e-9) {
			t.Fatalf("homogeneous=%v: Σ C_k^{-1} ≠ C^{-1}", homo)
		}
	}
	// Worker 1 has ρ = 0 (C_1 = I); worker K has ρ = 0.9 on the first
	// off-diagonal.
	p, _ := newGaussProblem(gaussConfig{d: 5, k: 10})
	if c := p.sub[0].Cov(); c.At(0, 1) != 0 || c.At(0, 0) != 1 {
		t.Fatal("C_1 is not the identity")
	}
	if c := p.sub[9].Cov(); math.Abs(c.At(0, 1)-0.9) > 1e-15 || math.Abs(c.At(0, 4)-math.Pow(0.9, 4)) > 1e-15 {
		t.Fatal("C_10 is not Toeplitz(0.9)")
	}
}

func TestUnknownSchemeRejected(t *testing.T) {
	spec, _ := Lookup("gauss-snr")
	_, err := runner.Run(context.Background(), spec, runner.Options{Quick: true, Sets: []string{"schemes=gcmc,foo"}})
	if err == nil {
		t.Fatal("unknown scheme accepted")
	}
}

// meanMetric averages one scheme's metric over the trials at each point.
func meanMetric(res *runner.Result, scheme, metric string) map[float64]float64 {
	sum, n := map[float64]float64{}, map[float64]int{}
	for _, task := range res.Tasks {
		for _, r := range task.Rows {
			if r.Scheme == scheme && r.Metric == metric {
				sum[task.X] += r.Value
				n[task.X]++
			}
		}
	}
	for x := range sum {
		sum[x] /= float64(n[x])
	}
	return sum
}

func TestErr2FreshSeparatesLearnedFromUntrainedMaps(t *testing.T) {
	// WGCMC estimates the covariances it needs, so the exact error of its
	// map on fresh signals falls towards 0 as S grows (here S = T/K from
	// 20 to 2000: the √(2/S) estimation error falls tenfold). A WVCMC-NOMA
	// map left at its start (0 iterations: the average of the decoded
	// samples, E^†/K) does not learn anything from more samples: its fresh
	// error stays put, although its in-sample err2 shrinks with S.
	res := run(t, "gauss-blocks", 0, "T=200,20000", "trials=4", "optimizer=sgd", "iters_noma=0",
		"schemes=wgcmc-oma,wvcmc-noma", "subposteriors=heterogeneous")
	w := meanMetric(res, SchemeWGCMCOMA, "err2_fresh")
	u := meanMetric(res, SchemeWVCMCNOMA, "err2_fresh")
	t.Logf("wgcmc-oma fresh: %v; untrained wvcmc-noma fresh: %v", w, u)
	if !(w[20000] < w[200]/4) || w[20000] > 0.05 {
		t.Errorf("WGCMC-OMA fresh error does not vanish: %v", w)
	}
	if math.Abs(u[20000]-u[200]) > 0.1*u[200] || u[20000] < 0.1 {
		t.Errorf("an untrained map's fresh error should stay put and large: %v", u)
	}
}
