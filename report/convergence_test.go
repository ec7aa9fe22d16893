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
	if testing.Short() {
		t.Skip("runs probit-snr (-short)")
	}
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
	// What probit-snr recorded reads back: K chains per task of T = 200
	// draws each (--quick), too few for ESS ≥ 400, and a reference.
	c, err := ConvergenceOf(run.Result, diagnostics.Recommended)
	if err != nil || c == nil {
		t.Fatalf("convergence %v, err %v", c, err)
	}
	k := run.Result.Values.Int("K")
	if c.Workers.Chains != 2*k || len(c.PerPoint) != 2 || c.PerPoint[0].Chains != k || c.Reference == nil ||
		c.Reference.Draws != run.Result.Values.Int("ref_samples") {
		t.Fatalf("read %+v (reference %+v), want %d worker chains per point and the reference", c, c.Reference, k)
	}
	if c.Short.Chains != 2*k || c.Long.Chains != 0 || c.Short.MinDraws != 200 || c.Short.MaxDraws != 200 {
		t.Errorf("short %+v, long %+v: want all %d chains short, of 200 draws", c.Short, c.Long, 2*k)
	}

	// Chains of T = 1000 draws are judged against the limits.
	long := *run.Result
	long.Values = long.Values.With("T", "1000")
	good := map[string]any{"max_rhat": 1.005, "min_ess_bulk": 800.0, "min_ess_tail": 700.0, "below_recommended": list(),
		"sampler": "hmc", "chains": 1.0, "draws": 20000.0, "params": 30.0}
	mixed := [2]map[string]any{
		{"max_rhat": list(1.0, 1.05), "min_ess_bulk": list(500.0, 300.0), "min_ess_tail": list(450.0, 800.0)},
		{"max_rhat": list(1.001, 1.002), "min_ess_bulk": list(900.0, 1000.0), "min_ess_tail": list(1000.0, "NaN")},
	}
	res := withDiagnostics(&long, mixed, good)
	c, err = ConvergenceOf(res, diagnostics.Recommended)
	if err != nil {
		t.Fatal(err)
	}
	if w := c.Workers; w.Chains != 4 || w.Below != 2 || w.MaxRhat != 1.05 || w.MinESSBulk != 300 || w.MedianESSBulk() != 700 || c.Short.Chains != 0 {
		t.Errorf("workers %+v: want 4 long chains, 2 below (one R̂ 1.05 and bulk ESS 300, one undefined tail ESS), median bulk ESS 700", w)
	}
	if p := c.PerPoint; p[0].Below != 1 || p[1].Below != 1 || p[1].MaxRhat != 1.002 {
		t.Errorf("per point %+v", p)
	}
	want := "probit-snr: 2 of 4 worker chains below recommended (R̂ ≤ 1.01, ESS ≥ 400; max R̂ 1.05, min bulk ESS 300, min tail ESS NaN; " +
		"median bulk ESS 700 of 1000), try --set sampler=hmc or a longer --set burnin (now 100); reference OK"
	if got := c.Warning(); got != want {
		t.Errorf("warning\n %q, want\n %q", got, want)
	}
	if n := c.Note(); n != "" {
		t.Errorf("note %q on chains long enough for the limits", n)
	}

	// Every chain fine: no warning.
	fine := map[string]any{"max_rhat": list(1.0), "min_ess_bulk": list(500.0), "min_ess_tail": list(450.0)}
	c, err = ConvergenceOf(withDiagnostics(&long, [2]map[string]any{fine, fine}, good), diagnostics.Recommended)
	if err != nil || !c.OK() || c.Warning() != "" || c.Note() != "" {
		t.Errorf("all fine: OK %v, warning %q, note %q, err %v", c.OK(), c.Warning(), c.Note(), err)
	}
	// A reference below: named with the number of its parameters below
	// and the settings that help.
	bad := map[string]any{"max_rhat": 1.02, "min_ess_bulk": 310.0, "min_ess_tail": 500.0, "below_recommended": list("theta[1]", "theta[4]"),
		"sampler": "gibbs", "chains": 1.0, "draws": 20000.0, "params": 30.0}
	c, err = ConvergenceOf(withDiagnostics(&long, [2]map[string]any{fine, fine}, bad), diagnostics.Recommended)
	want = "probit-snr: all 2 worker chains meet R̂ ≤ 1.01, ESS ≥ 400; reference chain below recommended (R̂ 1.02, bulk ESS 310, tail ESS 500; 2 of 30 parameters), " +
		"try a larger --set ref_samples (now 2000), --set ref_sampler=hmc or a longer --set burnin (now 100)"
	if err != nil || c.Warning() != want {
		t.Errorf("reference below: warning\n %q, want\n %q (err %v)", c.Warning(), want, err)
	}
	// Looser limits pass the same chains.
	c, _ = ConvergenceOf(res, diagnostics.Thresholds{MaxRhat: 1.1, MinESS: 100})
	if c.Workers.Below != 1 {
		t.Errorf("with R̂ ≤ 1.1, ESS ≥ 100: %d chains below, want 1 (the undefined ESS)", c.Workers.Below)
	}

	// Chains of 200 draws cannot reach ESS ≥ 400: judged by their ESS
	// against their length (≥ 20), with R̂ reported only, in a note, not
	// a warning.
	shortDiag := [2]map[string]any{
		{"max_rhat": list(1.3, 1.0), "min_ess_bulk": list(12.0, 150.0), "min_ess_tail": list(30.0, 160.0)},
		{"max_rhat": list(1.2, 1.1), "min_ess_bulk": list(25.0, 61.0), "min_ess_tail": list(19.0, 90.0)},
	}
	c, err = ConvergenceOf(withDiagnostics(run.Result, shortDiag, good), diagnostics.Recommended)
	if err != nil {
		t.Fatal(err)
	}
	if c.Short.Chains != 4 || c.Short.Below != 2 || c.OK() || c.Warning() != "" {
		t.Errorf("short chains %+v, OK %v, warning %q: want 2 of 4 below 10%% of their draws, no warning", c.Short, c.OK(), c.Warning())
	}
	want = "probit-snr: the 4 worker chains have 200 draws each: ESS ≥ 400 cannot apply to them, and R̂ ≤ 1.01 means little " +
		"(split-R̂ of so few draws often exceeds it by chance). Judged against their length instead, 2 of 4 have bulk and tail ESS ≥ 10% of their draws " +
		"(median bulk ESS 43 of 200; max R̂ 1.3): their draws are autocorrelated, and a worker's 200 draws estimate its subposterior about as well as " +
		"43 independent ones would; --set sampler=hmc draws nearly independent ones (the paper's sampler is gibbs)"
	if got := c.Note(); got != want {
		t.Errorf("note\n %q, want\n %q", got, want)
	}
	// The same chains with a reference below: the warning is the
	// reference's alone.
	c, _ = ConvergenceOf(withDiagnostics(run.Result, shortDiag, bad), diagnostics.Recommended)
	if w := c.Warning(); !strings.HasPrefix(w, "probit-snr: reference chain below recommended") || strings.Contains(w, "worker") || c.Note() == "" {
		t.Errorf("short chains, reference below: warning %q, note %q", w, c.Note())
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

// TestConvergenceMixedLengths: a sweep over T whose chains are short at
// one point and long at the other judges each point by its own criterion:
// the long chains below the limits warn, the short ones are noted.
func TestConvergenceMixedLengths(t *testing.T) {
	spec := runner.Spec{ID: "sweep-t", X: "T", Trials: 1, Metrics: []string{"err2"}, Schemes: []string{"gcmc"},
		Params: []runner.Param{{Name: "T", Kind: runner.Int, Default: "100,1000"}, {Name: "sampler", Kind: runner.String, Default: "gibbs"}},
		Run:    func(runner.Task) (runner.TaskOutput, error) { return runner.TaskOutput{}, nil }}
	v, trials, err := runner.Resolve(spec, nil, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	diag := map[string]any{"max_rhat": list(1.2, 1.0), "min_ess_bulk": list(5.0, 50.0), "min_ess_tail": list(30.0, 60.0)}
	res := &runner.Result{Spec: spec, Values: v, Trials: trials, Tasks: []runner.TaskResult{
		{TaskKey: runner.TaskKey{Point: 0, X: 100}, Info: map[string]map[string]any{"workers": diag}},
		{TaskKey: runner.TaskKey{Point: 1, X: 1000}, Info: map[string]map[string]any{"workers": diag}},
	}}
	c, err := ConvergenceOf(res, diagnostics.Recommended)
	if err != nil {
		t.Fatal(err)
	}
	if c.Short.Chains != 2 || c.Short.Below != 1 || c.Short.MaxDraws != 100 || c.Long.Chains != 2 || c.Long.Below != 2 || c.Long.MinDraws != 1000 {
		t.Fatalf("short %+v, long %+v: want the T = 100 chains short (1 below 10%%), the T = 1000 ones long (2 below)", c.Short, c.Long)
	}
	want := "sweep-t: 2 of 2 worker chains with ≥ 400 draws below recommended (R̂ ≤ 1.01, ESS ≥ 400; max R̂ 1.2, min bulk ESS 5, min tail ESS 30; " +
		"median bulk ESS 28 of 1000), try --set sampler=hmc"
	if got := c.Warning(); got != want {
		t.Errorf("warning\n %q, want\n %q", got, want)
	}
	if n := c.Note(); !strings.HasPrefix(n, "sweep-t: the 2 worker chains have 100 draws each: ESS ≥ 400 cannot apply to them") ||
		!strings.Contains(n, "1 of 2 have bulk and tail ESS ≥ 10% of their draws") {
		t.Errorf("note %q", n)
	}
	l := convergenceLayoutOf(res, diagnostics.Recommended)
	if got := l.header[3]; got != "below R̂ ≤ 1.01, ESS ≥ 400 (with < 400 draws: bulk or tail ESS < 10% of the draws)" {
		t.Errorf("table header %q", got)
	}
	if got := l.rows[2]; got[2] != "100–1000" || got[3] != "3" {
		t.Errorf("row all %q: want draws 100–1000, 3 below", got)
	}
}

// TestWorkerDraws: the draws per worker chain follow from S (else T),
// the swept value when it is the one, divided among the chains.
func TestWorkerDraws(t *testing.T) {
	for _, c := range []struct {
		params map[string]string
		x      string
		want   int
	}{
		{map[string]string{"T": "1000", "chains": "1"}, "snr_db", 1000},
		{map[string]string{"T": "200", "chains": "4"}, "snr_db", 50},
		{map[string]string{"S": "50", "chains": "1"}, "gradients", 50},
		{map[string]string{"T": "1000"}, "T", 300},
		{map[string]string{"K": "20"}, "snr_db", 0},
	} {
		if got := workerDraws(c.params, c.x, 300); got != c.want {
			t.Errorf("workerDraws(%v, x %s = 300) = %d, want %d", c.params, c.x, got, c.want)
		}
	}
}

// TestReportShowsChainDiagnostics: the section of a probit run shows the
// reference chain and the worker table in both renderings, with the
// warning (its reference's) and the note (its short worker chains'); a
// gauss section shows none.
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
		for _, want := range []string{"Reference chain (gibbs, 1 chain of", "worker chains", "draws each", c.warningText(), upper(c.noteText())} {
			if !strings.Contains(doc, want) && !strings.Contains(doc, esc(want)) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
	if c.warningText() == "" || c.noteText() == "" {
		t.Error("the quick probit run draws no warning or no note: they are not exercised")
	}
}

// The reference's err2 conditioning reads back; entries within two
// standard errors of zero draw a note in the reference line and from wcmc
// run, none draws nothing, and a malformed record is an error.
func TestErr2ConditioningNote(t *testing.T) {
	res := &runner.Result{}
	spec, err := experiment.Lookup("mnist-snr")
	if err != nil {
		t.Fatal(err)
	}
	res.Spec = spec
	if res.Values, _, err = runner.Resolve(spec, []string{"data_dir=x"}, false, 0); err != nil {
		t.Fatal(err)
	}
	ref := func(cond map[string]any) map[string]any {
		return map[string]any{"max_rhat": 1.001, "min_ess_bulk": 9000.0, "min_ess_tail": 8000.0, "below_recommended": list(),
			"sampler": "hmc", "chains": 1.0, "draws": 20000.0, "params": 30.0, "err2_conditioning": cond}
	}
	unresolved := map[string]any{"pairs": 435.0, "visited": 4.0, "unresolved": 2.0, "smallest": 7.056e-05,
		"smallest_mcse": 0.0086, "smallest_pair": list(10.0, 17.0)}
	res.RunInfo = map[string]map[string]any{"reference": ref(unresolved)}
	c, err := ConvergenceOf(res, diagnostics.Recommended)
	if err != nil {
		t.Fatal(err)
	}
	if e := c.Reference.Err2; e == nil || *e != (Err2Conditioning{Smallest: 7.056e-05, SmallestMCSE: 0.0086, Pair: [2]int{10, 17}, Pairs: 435, Visited: 4, Unresolved: 2}) {
		t.Fatalf("read %+v", c.Reference.Err2)
	}
	want := "mnist-snr: 2 of the 435 off-diagonal entries of the reference second moment R are within two Monte Carlo standard errors of zero " +
		"(the smallest, θ10·θ17, at 7.1e-05 ± 0.0086 of √(R_ii R_jj)): err2 divides by them, so its level is set by the reference's noise there; " +
		"err2_scaled does not (docs/MATH.md note 19)"
	if got := c.Err2Note(); got != want {
		t.Errorf("note\n %q, want\n %q", got, want)
	}
	if l := convergenceLayoutOf(res, diagnostics.Recommended); !strings.HasSuffix(l.reference, " "+upper(strings.TrimPrefix(want, "mnist-snr: "))+".") {
		t.Errorf("reference line %q lacks the note", l.reference)
	}

	resolved := map[string]any{"pairs": 10.0, "visited": 1.0, "unresolved": 0.0, "smallest": 0.94, "smallest_mcse": 0.018, "smallest_pair": list(1.0, 5.0)}
	res.RunInfo = map[string]map[string]any{"reference": ref(resolved)}
	if c, err := ConvergenceOf(res, diagnostics.Recommended); err != nil || c.Err2Note() != "" {
		t.Errorf("all resolved: note %q, err %v", c.Err2Note(), err)
	}
	delete(resolved, "smallest_pair")
	if _, err := ConvergenceOf(res, diagnostics.Recommended); err == nil || !strings.Contains(err.Error(), "smallest_pair") {
		t.Errorf("no smallest_pair: err %v", err)
	}
}
