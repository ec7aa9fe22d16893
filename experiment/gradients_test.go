package experiment

import (
	"math"
	"testing"
)

func TestGradientsTrajectory(t *testing.T) {
	// One optimisation path and one SGLD chain per trial, reported at every
	// checkpoint; SGLD has no samples before its burn-in budget
	// (1000 iterations × 500 = 5e5 gradients in quick mode), so it has no
	// row at 1e5; WVCMC's error at the largest budget is no worse than at
	// its start (x = 1e5 is below one full-batch evaluation, N·S = 1e5).
	// Every checkpoint reported has a row of each metric.
	res := run(t, "probit-gradients", 0, "trials=2")
	rows := 2 * len(res.Spec.Metrics) // trials × metrics
	at := map[string]map[float64]int{}
	for _, task := range res.Tasks {
		for _, r := range task.Rows {
			if math.IsNaN(r.Value) || r.Value < 0 || (r.Metric == "coverage90" && r.Value > 1) {
				t.Fatalf("bad value %+v", r)
			}
			if at[r.Scheme] == nil {
				at[r.Scheme] = map[float64]int{}
			}
			at[r.Scheme][task.X]++
		}
	}
	for _, s := range []string{SchemeWVCMCOMA, SchemeWVCMCNOMA} {
		for _, x := range []float64{1e5, 1e6, 1e7} {
			if at[s][x] != rows {
				t.Errorf("%s at %g: %d rows, want %d", s, x, at[s][x], rows)
			}
		}
		m := meanMetric(res, s, "err2")
		if m[1e7] > m[1e5] {
			t.Errorf("%s: err2 grew with the budget: %v", s, m)
		}
	}
	if at[SchemeSGLD][1e5] != 0 || at[SchemeSGLD][1e6] != rows || at[SchemeSGLD][1e7] != rows {
		t.Errorf("sgld rows by checkpoint: %v", at[SchemeSGLD])
	}
	again := run(t, "probit-gradients", 1, "trials=2")
	for i := range res.Tasks {
		if len(res.Tasks[i].Rows) != len(again.Tasks[i].Rows) {
			t.Fatal("results depend on the number of workers")
		}
		for j, r := range res.Tasks[i].Rows {
			if again.Tasks[i].Rows[j] != r {
				t.Fatal("results depend on the number of workers")
			}
		}
	}
}
