package results_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/experiment"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/internal/sweeptest"
	"github.com/wcmc-project/wcmc/runner/results"
)

// resultAt is a result of experiment id (no tasks) at the values of a run
// with sets, quick or not.
func resultAt(t *testing.T, id string, quick bool, sets ...string) *runner.Result {
	t.Helper()
	spec, err := experiment.Lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	v, trials, err := runner.Resolve(spec, sets, quick, 0)
	if err != nil {
		t.Fatal(err)
	}
	return &runner.Result{Spec: spec, Values: v, Trials: trials, Quick: quick}
}

// A figure's title and caption, and the run's description, name the
// values the run used (--quick, --set), not the experiment's defaults.
func TestCaptionStatesTheRunsValues(t *testing.T) {
	for _, c := range []struct {
		id          string
		quick       bool
		sets        []string
		want, never []string
	}{
		{"probit-highdim", true, nil, []string{"d = 40, N = 3000", "T = 400, K = 10"},
			[]string{"d = 300", "N = 15000", "T = 10000", "K = 20"}},
		{"gauss-snr", true, []string{"T=100"}, []string{"T = 100"}, []string{"T = 2000"}},
		{"probit-gradients", false, []string{"S=20", "snr_db=5", "d=7"}, []string{"d = 7", "S = 20, 5 dB"},
			[]string{"d = 5", "S = 50", "15 dB"}},
	} {
		res := resultAt(t, c.id, c.quick, c.sets...)
		desc := results.Describe(res.Spec, res)
		main := results.Figure{Metric: res.Spec.Metrics[0], Main: true, Base: results.FigureBase(res.Spec, res.Spec.Metrics[0])}
		ch := results.Chart(res, nil, main, results.Options{})
		for _, w := range c.want {
			if !strings.Contains(desc, w) || !strings.Contains(ch.Caption, w) {
				t.Errorf("%s %v: lacks %q:\ndescription %q\ncaption %q", c.id, c.sets, w, desc, ch.Caption)
			}
		}
		for _, n := range c.never {
			if strings.Contains(ch.Caption, n) || strings.Contains(ch.Title, n) {
				t.Errorf("%s %v: states the default %q:\n%s\n%s", c.id, c.sets, n, ch.Title, ch.Caption)
			}
		}
		quick := strings.Contains(ch.Title, "--quick") && strings.Contains(ch.Caption, "smoke-sized run (--quick)")
		if quick != c.quick {
			t.Errorf("%s: quick %v, but title %q, caption %q", c.id, c.quick, ch.Title, ch.Caption)
		}
		// Without a run, the description is the spec's, at the defaults.
		if got := results.Describe(res.Spec, nil); got != res.Spec.Description {
			t.Errorf("%s: Describe without a run = %q, want %q", c.id, got, res.Spec.Description)
		}
	}
}

// The run's JSON records the description at the run's values.
func TestJSONDescriptionOfTheRun(t *testing.T) {
	spec := sweeptest.Noise()
	spec.Describe = func(v runner.Values) string { return "toy noise, n = " + v.Raw("n") }
	res := sweeptest.MustRun(t, spec, runner.Options{Seed: 1, Quick: true, Sets: []string{"n=4"}})
	dir := t.TempDir()
	if _, _, err := results.WriteFiles(dir, res); err != nil {
		t.Fatal(err)
	}
	var rec struct{ Description string }
	b, err := os.ReadFile(filepath.Join(dir, "noise.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Description != "toy noise, n = 4" {
		t.Errorf("JSON description %q, want the run's", rec.Description)
	}
}

// trajectoryResult is a trajectory result of 20 trials at checkpoints 2,
// 3, 4: "fine" stays within [1, 2]; "wild" too except three trials
// (one of them twice) at 1e20, 1e30 and +Inf; "lone" has one trial at 1e9.
func trajectoryResult() *runner.Result {
	spec := runner.Spec{ID: "traj", Figure: "Fig. 0", Description: "a trajectory", X: "steps",
		Metrics: []string{"err"}, Schemes: []string{"fine", "wild", "lone"}, Trajectory: true, Trials: 20,
		Params: []runner.Param{{Name: "steps", Kind: runner.Int, Default: "2,3,4"}},
		Run:    func(runner.Task) (runner.TaskOutput, error) { return runner.TaskOutput{}, nil }}
	v, _, err := runner.Resolve(spec, nil, false, 0)
	if err != nil {
		panic(err)
	}
	res := &runner.Result{Spec: spec, Values: v, Trials: 20}
	for p, x := range v.XList() {
		for trial := range 20 {
			base := spread(trial)
			wild, lone := base, base
			switch {
			case p == 2 && trial == 0:
				wild = 1e20
			case p == 2 && trial == 1:
				wild = 1e30
			case p >= 1 && trial == 2:
				wild = math.Inf(1)
			}
			if p == 1 && trial == 5 {
				lone = 1e9
			}
			res.Tasks = append(res.Tasks, runner.TaskResult{TaskKey: runner.TaskKey{Point: p, X: x, Trial: trial},
				Rows: []runner.Row{{Scheme: "fine", Metric: "err", Value: base}, {Scheme: "wild", Metric: "err", Value: wild},
					{Scheme: "lone", Metric: "err", Value: lone}}})
		}
	}
	return res
}

// spread is the value of trial of a curve that does not diverge: 1 … 2.
func spread(trial int) float64 { return 1 + float64(trial)/19 }

// A trajectory figure draws medians and 5–95% ranges; diverged trials are
// counted per scheme and drawn at a ceiling CeilingDecades above the
// highest 95% quantile of the curves that do not diverge, which the
// caption states.
func TestTrajectoryCeiling(t *testing.T) {
	res := trajectoryResult()
	f := results.Figures(res.Spec, results.Summarize(res))[0]
	ch := results.Chart(res, results.Summarize(res), f, results.Options{Band: results.BandCI})

	// The highest 95% quantile apart from wild's is lone's at 3: the 19th
	// of its 20 values, 2; the ceiling is the decade 3 above it.
	if want := math.Pow10(1 + results.CeilingDecades); ch.Ceiling != want {
		t.Fatalf("ceiling %g, want %g", ch.Ceiling, want)
	}
	fine, wild, lone := ch.Series[0], ch.Series[1], ch.Series[2]
	if fine.Mean[0] != spread(9) || fine.Lo[0] != spread(0) || fine.Hi[0] != spread(18) {
		t.Errorf("fine: median %g, band [%g, %g]; want the 10th, 1st and 19th of 20", fine.Mean[0], fine.Lo[0], fine.Hi[0])
	}
	if fine.Clipped != nil {
		t.Errorf("fine has no trial above the ceiling, but marks %v", fine.Clipped)
	}
	if want := []bool{false, true, true}; !equalBools(wild.Clipped, want) {
		t.Errorf("wild marks %v, want %v", wild.Clipped, want)
	}
	if want := []bool{false, true, false}; !equalBools(lone.Clipped, want) {
		t.Errorf("lone marks %v, want %v", lone.Clipped, want)
	}
	for _, w := range []string{"median of the 20 trials", "5–95% range", "Values above 1e4",
		"at least 3 decades above 2,", "curves other than wild", "wild 3 of 20, lone 1 of 20, none of the other curves"} {
		if !strings.Contains(ch.Caption, w) {
			t.Errorf("caption lacks %q: %q", w, ch.Caption)
		}
	}
	if strings.Contains(ch.Caption, "confidence") || strings.Contains(ch.Caption, "mean") {
		t.Errorf("a trajectory caption speaks of means: %q", ch.Caption)
	}

	// Drawn, the axis stays within the stated decades: its top label is
	// the ceiling's (x is labelled 2, 3, 4), none above, and no value is
	// left out.
	var svg strings.Builder
	warns, err := ch.Encode(&svg, "svg")
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Errorf("values left out: %v", warns)
	}
	texts := svg.String()
	if !strings.Contains(texts, "trials above 1e4") {
		t.Error("the legend lacks the ceiling's entry")
	}
	if !strings.Contains(texts, ">10000<") {
		t.Error("the y axis does not reach the ceiling")
	}
	for _, above := range []string{">100000<", ">5<", ">6<", ">20<", ">30<"} { // 10^5 …, as decimals or exponents
		if strings.Contains(texts, above) {
			t.Errorf("the SVG labels a decade above the ceiling (%s)", above)
		}
	}
}

// Without a diverged trial, a trajectory figure has no ceiling and says
// nothing of one.
func TestTrajectoryWithoutCeiling(t *testing.T) {
	res := trajectoryResult()
	res.Spec.Schemes = []string{"fine"}
	sum := results.Summarize(res)
	ch := results.Chart(res, sum, results.Figures(res.Spec, sum)[0], results.Options{})
	if ch.Ceiling != 0 || strings.Contains(ch.Caption, "above") {
		t.Errorf("ceiling %g, caption %q", ch.Ceiling, ch.Caption)
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
