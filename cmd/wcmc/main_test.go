package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/runner"
)

// toySpecs are two small experiments: "toy" reports a per-trial draw for
// two schemes and skips "late" at x = 1.
func toySpecs() []runner.Spec {
	toy := runner.Spec{
		ID:          "toy",
		Figure:      "Fig. 9",
		Description: "a toy sweep",
		X:           "x",
		XLabel:      "x (units)",
		Metrics:     []string{"err", "other"},
		MetricLabel: map[string]string{"err": "error"},
		Schemes:     []string{"early", "late"},
		Params: []runner.Param{
			{Name: "x", Kind: runner.Float, Default: "1,2,3", Doc: "the swept value", Min: 0, Max: 10, HasMin: true, HasMax: true},
			{Name: "k", Kind: runner.Int, Default: "2", Doc: "a count", Min: 1, HasMin: true},
			{Name: "mode", Kind: runner.String, Default: "a", Doc: "a choice", Choices: []string{"a", "b"}},
		},
		Trials: 4,
		Quick:  map[string]string{"trials": "2"},
		Run: func(t runner.Task) (runner.TaskOutput, error) {
			o := runner.TaskOutput{Rows: []runner.Row{{Scheme: "early", Metric: "err", Value: t.X + t.Rng.Float64()}}}
			if t.X == 1 {
				o.Skipped = []runner.Skip{{Scheme: "late", Reason: "x too small"}}
			} else {
				o.Rows = append(o.Rows, runner.Row{Scheme: "late", Metric: "err", Value: t.Rng.Float64()},
					runner.Row{Scheme: "late", Metric: "other", Value: float64(t.Params.Int("k"))})
			}
			return o, nil
		},
	}
	other := toy
	other.ID, other.Figure, other.Description = "toy-long-name", "Fig. 10", "another"
	return []runner.Spec{toy, other}
}

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = execute(context.Background(), toySpecs(), args, &o, &e)
	return code, o.String(), e.String()
}

func TestList(t *testing.T) {
	t.Setenv("COLUMNS", "100")
	code, out, _ := runCLI(t, "list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", out)
	}
	// Aligned: the figure column starts at the same offset on every line.
	if strings.Index(lines[0], "Fig. 9") != strings.Index(lines[1], "Fig. 10") {
		t.Errorf("columns not aligned:\n%s", out)
	}
	if !strings.HasPrefix(lines[0], "toy ") || !strings.HasSuffix(lines[0], "a toy sweep") {
		t.Errorf("line %q", lines[0])
	}
}

func TestShow(t *testing.T) {
	t.Setenv("COLUMNS", "100")
	code, out, _ := runCLI(t, "show", "toy")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"toy (Fig. 9): a toy sweep", "\n  x=1,2,3 (float, [0, 10], swept): the swept value\n",
		"\n  k=2 (int, ≥ 1): a count\n", "\n  mode=a (string, a|b): a choice\n", "--quick sets: trials=2", "schemes: early, late", "err: error (main: ID.png)", "other (ID.other.png)"} {
		if !strings.Contains(out, want) {
			t.Errorf("show output lacks %q:\n%s", want, out)
		}
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "run", "toy", "--out", dir, "--seed", "5", "--set", "x=1,2.5", "--set", "k=3", "--workers", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, f := range []string{"toy.csv", "toy.summary.csv", "toy.json", "toy.png", "toy.svg", "toy.other.png", "toy.other.svg"} {
		path := filepath.Join(dir, f)
		if st, err := os.Stat(path); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty", f)
		}
		if !strings.Contains(out, path) {
			t.Errorf("stdout does not list %s", path)
		}
	}
	// The table: one row per scheme, one column per x; "late" has no value at x=1.
	if !strings.Contains(out, "mean err over 4 trials") || !strings.Contains(out, "2.5") {
		t.Errorf("no summary table:\n%s", out)
	}
	var lateLine string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "late") {
			lateLine = l
		}
	}
	if f := strings.Fields(lateLine); len(f) != 3 || f[1] != "-" {
		t.Errorf("late row %q, want a dash at x=1", lateLine)
	}
	if !strings.Contains(errOut, "note: late not applicable at x=1: x too small") {
		t.Errorf("stderr lacks the skip note:\n%s", errOut)
	}

	// Same seed, same CSV; --quick uses 2 trials.
	dir2 := t.TempDir()
	runCLI(t, "run", "toy", "--out", dir2, "--seed", "5", "--set", "x=1,2.5", "--set", "k=3", "--workers", "1")
	a, _ := os.ReadFile(filepath.Join(dir, "toy.csv"))
	b, _ := os.ReadFile(filepath.Join(dir2, "toy.csv"))
	if !bytes.Equal(a, b) {
		t.Error("same seed, different CSV")
	}
	if code, out, _ := runCLI(t, "run", "toy", "--out", t.TempDir(), "--quick"); code != 0 || !strings.Contains(out, "over 2 trials") {
		t.Errorf("--quick: exit %d\n%s", code, out)
	}
}

func TestRunErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "toi"}, `unknown experiment "toi" (did you mean toy?)`},
		{[]string{"show", "nope"}, `unknown experiment "nope"`},
		{[]string{"run", "toy", "--set", "kk=3"}, `unknown parameter "kk"`},
		{[]string{"run", "toy", "--set", "k=0"}, `parameter "k"`},
		{[]string{"run", "toy", "--set", "x=1,,2"}, `parameter "x"`},
		{[]string{"run", "toy", "--set", "mode"}, `name=value`},
		{[]string{"run", "toy", "--trials", "0"}, "--trials must be ≥ 1"},
		{[]string{"run", "toy", "--workers", "-1"}, "--workers"},
		{[]string{"run"}, "accepts 1 arg"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		code, _, errOut := runCLI(t, append(c.args, "--out", dir)...)
		if c.args[0] == "show" {
			code, _, errOut = runCLI(t, c.args...)
		}
		if code == 0 {
			t.Errorf("%v: exit 0", c.args)
		}
		if !strings.Contains(errOut, c.want) {
			t.Errorf("%v: stderr %q lacks %q", c.args, errOut, c.want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%v: wrote %d files despite the error", c.args, len(entries))
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	code, out, _ := runCLI(t, "run", "--help")
	if code != 0 || !strings.Contains(out, "wcmc show ID") {
		t.Errorf("run --help (exit %d) does not mention `wcmc show ID`:\n%s", code, out)
	}
	code, out, _ = runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(out, "wcmc "+runner.Version) {
		t.Errorf("version: exit %d, %q", code, out)
	}
}
