// Package sweeptest holds the toy sweeps that the tests of runner, journal
// and results share, and helpers to run them.
package sweeptest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/results"
)

// Noise is a toy experiment: scheme "a" reports x + N(0,1) draws, scheme
// "b" reports |N(0,1)|·scale, scheme "c" is skipped below x = 2. Its Setup
// draws an offset added to "a"; its info holds an int and a NaN.
func Noise() runner.Spec {
	return runner.Spec{
		ID:          "noise",
		Figure:      "Fig. 0",
		Description: "toy noise",
		X:           "x",
		XLabel:      "x (units)",
		Metrics:     []string{"err", "aux"},
		MetricLabel: map[string]string{"err": "error"},
		Schemes:     []string{"a", "b", "c"},
		Params: []runner.Param{
			{Name: "x", Kind: runner.Float, Default: "1,2,4", Doc: "swept", Min: 0.5, Max: 100, HasMin: true, HasMax: true},
			{Name: "scale", Kind: runner.Float, Default: "1", Doc: "scale", Min: 0, HasMin: true},
			{Name: "n", Kind: runner.Int, Default: "3", Doc: "draws", Min: 1, Max: 50, HasMin: true, HasMax: true},
			{Name: "mode", Kind: runner.String, Default: "plain", Choices: []string{"plain", "fancy"}},
			{Name: "verbose", Kind: runner.Bool, Default: "false"},
		},
		Trials: 5,
		Quick:  map[string]string{"trials": "2", "n": "2"},
		Validate: func(v runner.Values) error {
			if v.Float("scale") > 10 && v.Int("n") > 10 {
				return errors.New("scale > 10 needs n ≤ 10")
			}
			return nil
		},
		Setup: func(v runner.Values, rng *rand.Rand) (any, error) {
			return rng.Float64(), nil
		},
		Run: func(t runner.Task) (runner.TaskOutput, error) {
			var o runner.TaskOutput
			off := t.Shared.(float64)
			for range t.Params.Int("n") {
				o.Rows = append(o.Rows, runner.Row{Scheme: "a", Metric: "err", Value: t.X + t.Rng.NormFloat64() + off})
			}
			o.Rows = append(o.Rows, runner.Row{Scheme: "b", Metric: "err", Value: math.Abs(t.Rng.NormFloat64()) * t.Params.Float("scale")})
			o.Rows = append(o.Rows, runner.Row{Scheme: "b", Metric: "aux", Value: float64(t.Trial)})
			if t.X < 2 {
				o.Skipped = append(o.Skipped, runner.Skip{Scheme: "c", Reason: fmt.Sprintf("x=%g < 2", t.X)})
			} else {
				o.Rows = append(o.Rows, runner.Row{Scheme: "c", Metric: "err", Value: t.X * t.Rng.Float64()})
			}
			o.Info = map[string]map[string]any{"b": {"iters": 7, "obj": math.NaN()}, "a": {"p": t.Point}}
			return o, nil
		},
	}
}

// Walk is a Trajectory spec: one random walk per trial, observed at the
// checkpoints.
func Walk() runner.Spec {
	return runner.Spec{
		ID: "walk", X: "steps", Metrics: []string{"pos"}, Schemes: []string{"w", "v"}, Trials: 3, Trajectory: true,
		Params: []runner.Param{{Name: "steps", Kind: runner.Int, Default: "1,10,100"}},
		Run: func(t runner.Task) (runner.TaskOutput, error) {
			var o runner.TaskOutput
			pos, done := 0.0, 0
			for _, c := range t.Params.XList() {
				for ; done < int(c); done++ {
					pos += t.Rng.NormFloat64()
				}
				o.Rows = append(o.Rows, runner.Row{Scheme: "w", Metric: "pos", Value: pos, X: c}, runner.Row{Scheme: "v", Metric: "pos", Value: math.Abs(pos), X: c})
			}
			o.Info = map[string]map[string]any{"w": {"final": pos}}
			return o, nil
		},
	}
}

// ResolveSeeds are pairs of --set values (and a quick flag) for fuzzing
// the parsing of Noise's and Walk's parameters.
var ResolveSeeds = [][3]string{
	{"n=3", "scale=2", "false"}, {"x=1,2,4", "mode=fancy", "true"}, {"x=1,,2", "n=abc", "false"},
	{"x=1e308,1e-308", "scale=1e309", "false"}, {"x=nan", "scale=-0", "true"}, {"trials=0x10", "verbose=T", "false"},
	{"x= 8, 1e1 ,0.5", "n=1e1", "true"}, {"x=0.5,0.50", "n=9007199254740993", "false"}, {"scal=1", "trials=-1", "false"},
	{"x=Inf", "n=+50", "false"}, {"x=1_000", "n=0b11", "false"}, {"x=.5,5.", "scale=1e-400", "true"},
}

// WithData adds to spec a parameter "data" naming a folder of input data
// (runner.Param.Digest), whose digest is "content:" and the content of
// the folder's one file, "file".
func WithData(spec runner.Spec) runner.Spec {
	spec.Params = append(slices.Clone(spec.Params), runner.Param{Name: "data", Kind: runner.String, Default: "",
		Doc: "input data folder", Digest: func(dir string, _ runner.Values) (string, error) {
			b, err := os.ReadFile(filepath.Join(dir, "file"))
			return "content:" + string(b), err
		}})
	return spec
}

// DataFolder returns a new folder for WithData's parameter holding
// content.
func DataFolder(t *testing.T, content string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// MustRun runs spec with opts, failing the test on an error.
func MustRun(t testing.TB, spec runner.Spec, opts runner.Options) *runner.Result {
	t.Helper()
	res, err := runner.Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// CSV returns the bytes of res's ID.csv and ID.summary.csv.
func CSV(t testing.TB, res *runner.Result) (rows, summary []byte) {
	t.Helper()
	var a, b bytes.Buffer
	if err := results.WriteCSV(&a, res); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteSummaryCSV(&b, res.Spec.ID, results.Summarize(res)); err != nil {
		t.Fatal(err)
	}
	return a.Bytes(), b.Bytes()
}
