package report

import (
	"context"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/diagnostics"
	"github.com/wcmc-project/wcmc/experiment"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/results"
)

// probitRun runs probit-snr --quick at two SNRs, one trial each, GCMC
// only, and writes its files to dir: what experiment records is what
// ConvergenceOf reads.
func probitRun(t *testing.T, dir string) Run {
	t.Helper()
	spec, err := experiment.Lookup("probit-snr")
	if err != nil {
		t.Fatal(err)
	}
	res, err := runner.Run(context.Background(), spec, runner.Options{Seed: 3, Quick: true,
		Sets: []string{"trials=1", "snr_db=10,20", "schemes=gcmc"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := results.WriteFiles(dir, res); err != nil {
		t.Fatal(err)
	}
	return Run{Spec: spec, Result: res}
}

// withDiagnostics returns a copy of res whose two tasks' worker
// diagnostics and whose reference diagnostics are the given ones, in the
// JSON types a loaded result holds.
func withDiagnostics(res *runner.Result, workers [2]map[string]any, ref map[string]any) *runner.Result {
	out := *res
	out.Tasks = append([]runner.TaskResult(nil), res.Tasks...)
	for i := range out.Tasks {
		out.Tasks[i].Info = map[string]map[string]any{"workers": workers[i]}
	}
	out.RunInfo = map[string]map[string]any{"reference": ref}
	return &out
}

func list(v ...any) []any { return v }

func TestConvergenceOf(t *testing.T) {
	run := probitRun(t, t.TempDir())
	// What probit-snr recorded reads back: K chains per task, a reference.
	c, err := ConvergenceOf(run.Result, diagnostics.Recommended)
	if err != nil || c == nil {
		t.Fatalf("convergence %v, err %v", c, err)
	}
	k := run.Result.Values.Int("K")
	if c.Workers.Chains != 2*k || len(c.PerPoint) != 2 || c.PerPoint[0].Chains != k || c.Reference == nil ||
		c.Reference.Draws != run.Result.Values.Int("ref_samples") {
		t.Fatalf("read %+v (reference %+v), want %d worker chains per point and the reference", c, c.Reference, k)
	}

	good := map[string]any{"max_rhat": 1.005, "min_ess_bulk": 800.0, "min_ess_tail": 700.0, "below_recommended": list(),
		"sampler": "hmc", "chains": 1.0, "draws": 20000.0, "params": 30.0}
	res := withDiagnostics(run.Result, [2]map[string]any{
		{"max_rhat": list(1.0, 1.05), "min_ess_bulk": list(500.0, 300.0), "min_ess_tail": list(450.0, 800.0)},
		{"max_rhat": list(1.001, 1.002), "min_ess_bulk": list(900.0, 1000.0), "min_ess_tail": list(1000.0, "NaN")},
	}, good)
	c, err = ConvergenceOf(res, diagnostics.Recommended)
	if err != nil {
		t.Fatal(err)
	}
	if w := c.Workers; w.Chains != 4 || w.Below != 2 || w.MaxRhat != 1.05 || w.MinESSBulk != 300 {
		t.Errorf("workers %+v: want 4 chains, 2 below (one R̂ 1.05 and bulk ESS 300, one undefined tail ESS)", w)
	}
	if p := c.PerPoint; p[0].Below != 1 || p[1].Below != 1 || p[1].MaxRhat != 1.002 {
		t.Errorf("per point %+v", p)
	}
	want := "probit-snr: 2 of 4 worker chains below recommended (R̂ ≤ 1.01, ESS ≥ 400; max R̂ 1.05, min bulk ESS 300, min tail ESS NaN); reference OK"
	if got := c.Warning(); got != want {
		t.Errorf("warning\n %q, want\n %q", got, want)
	}

	// Every chain fine: no warning.
	fine := map[string]any{"max_rhat": list(1.0), "min_ess_bulk": list(500.0), "min_ess_tail": list(450.0)}
	c, err = ConvergenceOf(withDiagnostics(run.Result, [2]map[string]any{fine, fine}, good), diagnostics.Recommended)
	if err != nil || !c.OK() || c.Warning() != "" {
		t.Errorf("all fine: OK %v, warning %q, err %v", c.OK(), c.Warning(), err)
	}
	// A reference below: named with the number of its parameters below.
	bad := map[string]any{"max_rhat": 1.02, "min_ess_bulk": 310.0, "min_ess_tail": 500.0, "below_recommended": list("theta[1]", "theta[4]"),
		"sampler": "gibbs", "chains": 1.0, "draws": 20000.0, "params": 30.0}
	c, err = ConvergenceOf(withDiagnostics(run.Result, [2]map[string]any{fine, fine}, bad), diagnostics.Recommended)
	want = "probit-snr: all 2 worker chains meet R̂ ≤ 1.01, ESS ≥ 400; reference chain below recommended (R̂ 1.02, bulk ESS 310, tail ESS 500; 2 of 30 parameters)"
	if err != nil || c.Warning() != want {
		t.Errorf("reference below: warning\n %q, want\n %q (err %v)", c.Warning(), want, err)
	}
	// Looser limits pass the same chains.
	c, _ = ConvergenceOf(res, diagnostics.Thresholds{MaxRhat: 1.1, MinESS: 100})
	if c.Workers.Below != 1 {
		t.Errorf("with R̂ ≤ 1.1, ESS ≥ 100: %d chains below, want 1 (the undefined ESS)", c.Workers.Below)
	}
	// A value that is not a number is an error naming the task.
	broken := withDiagnostics(run.Result, [2]map[string]any{fine, {"max_rhat": list("x"), "min_ess_bulk": list(1.0), "min_ess_tail": list(1.0)}}, good)
	if _, err := ConvergenceOf(broken, diagnostics.Recommended); err == nil || !strings.Contains(err.Error(), "snr_db=20 trial 0") {
		t.Errorf("broken info: err %v, want one naming the task", err)
	}
	// A run that records nothing (gauss-snr) has no diagnostics.
	_, runs := quickRuns(t)
	if c, err := ConvergenceOf(runs[1].Result, diagnostics.Recommended); c != nil || err != nil {
		t.Errorf("%s: %+v, %v; want nothing", runs[1].Spec.ID, c, err)
	}
}

// TestReportShowsChainDiagnostics: the section of a probit run shows the
// reference chain and the worker table in both renderings, with the
// warning; a gauss section shows none.
func TestReportShowsChainDiagnostics(t *testing.T) {
	dir := t.TempDir()
	run := probitRun(t, dir)
	_, runs := quickRuns(t)
	r := New(dir, testMeta, []Run{run, runs[1]})
	md, htm := render(t, r)
	parseXML(t, htm)
	c, err := ConvergenceOf(run.Result, diagnostics.Recommended)
	if err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string]string{"REPORT.md": string(md), "report.html": string(htm)} {
		if n := strings.Count(doc, convergenceTitle); n != 1 {
			t.Errorf("%s: %d chain diagnostics sections, want 1 (probit-snr's)", name, n)
		}
		for _, want := range []string{"Reference chain (gibbs, 1 chain of", "worker chains", c.verdict()} {
			if !strings.Contains(doc, want) && !strings.Contains(doc, esc(want)) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
	if c.OK() {
		t.Error("the quick probit chains meet the recommended values: the warning is not exercised")
	}
}
