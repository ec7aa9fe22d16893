package runner_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/internal/sweeptest"
)

func TestDeterministicAcrossWorkers(t *testing.T) {
	spec := sweeptest.Noise()
	opts := runner.Options{Seed: 42, Trials: 20, Sets: []string{"x=1,2,3,4,5,6"}}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	opts.Workers = 1
	r1, s1 := sweeptest.CSV(t, sweeptest.MustRun(t, spec, opts))
	runtime.GOMAXPROCS(4)
	opts.Workers = 4
	r4, s4 := sweeptest.CSV(t, sweeptest.MustRun(t, spec, opts))
	opts.Workers = 0
	r0, s0 := sweeptest.CSV(t, sweeptest.MustRun(t, spec, opts))
	if !bytes.Equal(r1, r4) || !bytes.Equal(r1, r0) {
		t.Error("rows CSV differs between worker counts")
	}
	if !bytes.Equal(s1, s4) || !bytes.Equal(s1, s0) {
		t.Error("summary CSV differs between worker counts")
	}
	opts.Seed = 43
	r43, _ := sweeptest.CSV(t, sweeptest.MustRun(t, spec, opts))
	if bytes.Equal(r1, r43) {
		t.Error("seed 43 gives the same rows as seed 42")
	}
}

// rowsByX groups the CSV lines of res by their x column.
func rowsByX(t *testing.T, res *runner.Result) map[string][]string {
	t.Helper()
	rows, _ := sweeptest.CSV(t, res)
	out := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(rows)), "\n")[1:] {
		x := strings.Split(line, ",")[3]
		out[x] = append(out[x], line)
	}
	return out
}

func TestAddingPointKeepsOtherPoints(t *testing.T) {
	spec := sweeptest.Noise()
	spec.Setup = nil
	spec.Run = func(t runner.Task) (runner.TaskOutput, error) {
		return runner.TaskOutput{Rows: []runner.Row{{Scheme: "a", Metric: "err", Value: t.Rng.NormFloat64()}, {Scheme: "b", Metric: "err", Value: t.Rng.Float64()}}}, nil
	}
	small := rowsByX(t, sweeptest.MustRun(t, spec, runner.Options{Seed: 7, Sets: []string{"x=1,4"}}))
	big := rowsByX(t, sweeptest.MustRun(t, spec, runner.Options{Seed: 7, Sets: []string{"x=8, 4, 2.5, 1"}, Workers: 3}))
	for _, x := range []string{"1", "4"} {
		if len(small[x]) == 0 || !slices.Equal(small[x], big[x]) {
			t.Errorf("x=%s: rows changed when points were added:\n%v\n%v", x, small[x], big[x])
		}
	}
	if len(big["8"]) == 0 || len(big["2.5"]) == 0 {
		t.Error("new points missing")
	}
}

func TestValidationErrorsNameParameter(t *testing.T) {
	cases := []struct {
		sets   []string
		trials int
		want   []string // substrings of the error
	}{
		{[]string{"scal=2"}, 0, []string{`"scal"`, `"scale"`}},
		{[]string{"n=abc"}, 0, []string{`"n"`, "not an integer"}},
		{[]string{"n=2.5"}, 0, []string{`"n"`, "not an integer"}},
		{[]string{"scale=x1"}, 0, []string{`"scale"`, "not a number"}},
		{[]string{"scale=NaN"}, 0, []string{`"scale"`, "finite"}},
		{[]string{"scale=Inf"}, 0, []string{`"scale"`, "finite"}},
		{[]string{"scale=-1"}, 0, []string{`"scale"`, "≥ 0"}},
		{[]string{"n=51"}, 0, []string{`"n"`, "out of range [1, 50]"}},
		{[]string{"mode=odd"}, 0, []string{`"mode"`, "plain, fancy"}},
		{[]string{"verbose=maybe"}, 0, []string{`"verbose"`, "boolean"}},
		{[]string{"x="}, 0, []string{`"x"`, "empty"}},
		{[]string{"x=1,,2"}, 0, []string{`"x"`, "empty entry 2"}},
		{[]string{"x=1,inf"}, 0, []string{`"x"`, "entry 2", "finite"}},
		{[]string{"x=1,200"}, 0, []string{`"x"`, "entry 2", "out of range"}},
		{[]string{"x=1,1.0"}, 0, []string{`"x"`, "same value"}},
		{[]string{"n=2", "n=3"}, 0, []string{`"n"`, "twice"}},
		{[]string{"noequals"}, 0, []string{`"noequals"`, "name=value"}},
		{[]string{"trials=0"}, 0, []string{"trials", "≥ 1"}},
		{[]string{"trials=two"}, 0, []string{"trials", "not an integer"}},
		{nil, -1, []string{"trials", "≥ 1"}},
		{[]string{"scale=20", "n=20"}, 0, []string{"noise", "scale > 10"}},
	}
	for _, c := range cases {
		_, err := runner.Run(context.Background(), sweeptest.Noise(), runner.Options{Sets: c.sets, Trials: c.trials})
		if err == nil {
			t.Errorf("sets %q trials %d: no error", c.sets, c.trials)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("sets %q: error %q does not mention %q", c.sets, err, w)
			}
		}
	}
	// All problems are reported together.
	_, err := runner.Run(context.Background(), sweeptest.Noise(), runner.Options{Sets: []string{"n=0", "scale=NaN"}})
	if err == nil || !strings.Contains(err.Error(), `"n"`) || !strings.Contains(err.Error(), `"scale"`) {
		t.Errorf("two bad values: error %v should name both", err)
	}
}

func TestValidationBeforeWork(t *testing.T) {
	spec := sweeptest.Noise()
	var calls atomic.Int32
	spec.Setup = func(runner.Values, *rand.Rand) (any, error) { calls.Add(1); return 0.0, nil }
	if _, err := runner.Run(context.Background(), spec, runner.Options{Sets: []string{"x=1,nope"}}); err == nil {
		t.Fatal("no error")
	}
	if calls.Load() != 0 {
		t.Error("Setup ran before validation finished")
	}
}

func TestOverridesAndValues(t *testing.T) {
	spec := sweeptest.Noise()
	v, n, err := runner.Resolve(spec, nil, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || v.Int("n") != 2 {
		t.Errorf("quick: trials %d, n %d; want 2, 2", n, v.Int("n"))
	}
	v, n, err = runner.Resolve(spec, []string{"n=4", " trials = 3", "x= 8, 1e1 ,0.5", "mode=fancy", "verbose=true"}, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 || v.Int("n") != 4 || v.String("mode") != "fancy" || !v.Bool("verbose") || v.Float("scale") != 1 {
		t.Errorf("sets over quick: trials %d, n %d, mode %s, verbose %v", n, v.Int("n"), v.String("mode"), v.Bool("verbose"))
	}
	if got := v.XList(); !slices.Equal(got, []float64{8, 10, 0.5}) {
		t.Errorf("XList %v", got)
	}
	if got := v.Map()["x"]; got != "8,1e1,0.5" {
		t.Errorf("Map x = %q", got)
	}
	if _, n, _ = runner.Resolve(spec, []string{"trials=3"}, true, 9); n != 9 {
		t.Errorf("explicit trials: %d, want 9", n)
	}
	w := v.With("scale", "2.5")
	if w.Float("scale") != 2.5 || v.Float("scale") != 1 {
		t.Error("With modified the original or did not set the copy")
	}
	if w.Float("n") != 4 {
		t.Error("Float on an Int parameter")
	}
	for name, f := range map[string]func(){
		"unknown":     func() { v.Int("nope") },
		"kind":        func() { v.Int("scale") },
		"list":        func() { v.Float("x") },
		"With":        func() { v.With("nope", "1") },
		"bool/string": func() { v.Bool("mode") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestSpecCheck(t *testing.T) {
	mods := map[string]func(*runner.Spec){
		"no run": func(s *runner.Spec) { s.Run = nil },
		"bad X":  func(s *runner.Spec) { s.X = "mode" },
		"reserved": func(s *runner.Spec) {
			s.Params = append(s.Params, runner.Param{Name: "trials", Kind: runner.Int, Default: "1"})
		},
		"dup param":     func(s *runner.Spec) { s.Params = append(s.Params, s.Params[1]) },
		"bad default":   func(s *runner.Spec) { s.Params[1].Default = "-3" },
		"quick unknown": func(s *runner.Spec) { s.Quick = map[string]string{"zz": "1"} },
		"trials":        func(s *runner.Spec) { s.Trials = 0 },
		"metric name":   func(s *runner.Spec) { s.Metrics = []string{"a/b"} },
		"linear":        func(s *runner.Spec) { s.LinearY = []string{"zz"} },
		"ideal":         func(s *runner.Spec) { s.Ideal = map[string]float64{"zz": 0.9} },
	}
	if err := sweeptest.Noise().Check(); err != nil {
		t.Fatalf("valid spec: %v", err)
	}
	for name, mod := range mods {
		s := sweeptest.Noise()
		mod(&s)
		if err := s.Check(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestSkipsAndNotes(t *testing.T) {
	var prog bytes.Buffer
	res := sweeptest.MustRun(t, sweeptest.Noise(), runner.Options{Trials: 3, Sets: []string{"x=1,1.5,2"}, Progress: &prog})
	for _, tr := range res.Tasks {
		for _, r := range tr.Rows {
			if r.Scheme == "c" && tr.X < 2 {
				t.Errorf("skipped scheme has a row at x=%g", tr.X)
			}
		}
	}
	want := []runner.Note{{"c", "x", 1, "x=1 < 2"}, {"c", "x", 1.5, "x=1.5 < 2"}}
	if !slices.Equal(res.Notes, want) {
		t.Errorf("notes %v, want %v", res.Notes, want)
	}
	out := prog.String()
	if strings.Count(out, "note: c not applicable at x=1: x=1 < 2\n") != 1 {
		t.Errorf("progress output lacks the note exactly once:\n%s", out)
	}
	if !strings.Contains(out, "noise: 9 tasks done in") {
		t.Errorf("no final progress line:\n%s", out)
	}
}

func TestTaskErrorNamesTask(t *testing.T) {
	spec := sweeptest.Noise()
	spec.Run = func(t runner.Task) (runner.TaskOutput, error) {
		if t.X == 2 && t.Trial == 3 {
			return runner.TaskOutput{}, errors.New("boom")
		}
		return runner.TaskOutput{}, nil
	}
	_, err := runner.Run(context.Background(), spec, runner.Options{Workers: 2})
	if err == nil || !strings.Contains(err.Error(), "x=2 trial 3") || !strings.Contains(err.Error(), "boom") {
		t.Errorf("error %v should name x=2 trial 3", err)
	}
	spec.Run = func(t runner.Task) (runner.TaskOutput, error) {
		return runner.TaskOutput{Rows: []runner.Row{{Scheme: "zz", Metric: "err", Value: 1}}}, nil
	}
	if _, err := runner.Run(context.Background(), spec, runner.Options{}); err == nil || !strings.Contains(err.Error(), `"zz"`) {
		t.Errorf("unknown scheme: %v", err)
	}
	spec.Run = func(t runner.Task) (runner.TaskOutput, error) { panic("oops") }
	if _, err := runner.Run(context.Background(), spec, runner.Options{}); err == nil || !strings.Contains(err.Error(), "panic: oops") {
		t.Errorf("panic: %v", err)
	}
}

func TestCancel(t *testing.T) {
	spec := sweeptest.Noise()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The second task to start cancels, whichever it is (the scheduler
	// may start the tasks of one worker long before the other's): then at
	// most the other worker's task in flight starts after it.
	var ran atomic.Int32
	spec.Run = func(t runner.Task) (runner.TaskOutput, error) {
		if ran.Add(1) == 2 {
			cancel()
		}
		if err := t.Ctx.Err(); err != nil {
			return runner.TaskOutput{}, err
		}
		return runner.TaskOutput{}, nil
	}
	_, err := runner.Run(ctx, spec, runner.Options{Trials: 100, Workers: 2})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := ran.Load(); n > 3 {
		t.Errorf("%d of 300 tasks started, cancelled by the second: want at most 3 (2 workers)", n)
	}
}

func TestOnTask(t *testing.T) {
	var keys []runner.TaskKey
	res := sweeptest.MustRun(t, sweeptest.Noise(), runner.Options{Trials: 2, Workers: 3, OnTask: func(r runner.TaskResult) error {
		keys = append(keys, r.TaskKey)
		return nil
	}})
	if len(keys) != len(res.Tasks) {
		t.Errorf("OnTask called %d times for %d tasks", len(keys), len(res.Tasks))
	}
	_, err := runner.Run(context.Background(), sweeptest.Noise(), runner.Options{OnTask: func(runner.TaskResult) error { return errors.New("disk full") }})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("OnTask error not returned: %v", err)
	}
}

func TestSeeds(t *testing.T) {
	draw := func(r *rand.Rand) uint64 { return r.Uint64() }
	base := draw(runner.TaskRng(1, "noise", 0))
	if draw(runner.TaskRng(1, "noise", 0)) != base {
		t.Error("same key, different stream")
	}
	others := []uint64{
		draw(runner.TaskRng(2, "noise", 0)), draw(runner.TaskRng(1, "noisy", 0)),
		draw(runner.TaskRng(1, "noise", 1)), draw(runner.SetupRng(1, "noise")),
	}
	for i, o := range others {
		if o == base {
			t.Errorf("variant %d gives the same stream", i)
		}
	}
}

func TestTrajectorySplitsRowsByCheckpoint(t *testing.T) {
	// One call per trial; a random walk observed at the checkpoints. The
	// rows land at their checkpoints, results do not depend on the number
	// of workers, and a row off the checkpoint list is an error.
	calls := 0
	var mu sync.Mutex
	spec := runner.Spec{
		ID: "walk", X: "steps", Metrics: []string{"pos"}, Schemes: []string{"w"}, Trials: 3, Trajectory: true,
		Params: []runner.Param{{Name: "steps", Kind: runner.Int, Default: "1,10,100"}},
		Run: func(t runner.Task) (runner.TaskOutput, error) {
			mu.Lock()
			calls++
			mu.Unlock()
			if !math.IsNaN(t.X) || t.Point != -1 {
				return runner.TaskOutput{}, fmt.Errorf("trajectory task got X=%v point %d", t.X, t.Point)
			}
			var o runner.TaskOutput
			pos, done := 0.0, 0
			for _, c := range t.Params.XList() {
				for ; done < int(c); done++ {
					pos += t.Rng.NormFloat64()
				}
				o.Rows = append(o.Rows, runner.Row{Scheme: "w", Metric: "pos", Value: pos, X: c})
			}
			return o, nil
		},
	}
	a, err := runner.Run(context.Background(), spec, runner.Options{Workers: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	b, err := runner.Run(context.Background(), spec, runner.Options{Workers: 3, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 6 || len(a.Tasks) != 9 || !reflect.DeepEqual(a.Tasks, b.Tasks) {
		t.Fatalf("%d calls, %d records; equal across workers: %v", calls, len(a.Tasks), reflect.DeepEqual(a.Tasks, b.Tasks))
	}
	for _, tr := range a.Tasks {
		if len(tr.Rows) != 1 {
			t.Fatalf("task %+v has %d rows", tr.TaskKey, len(tr.Rows))
		}
	}
	spec.Run = func(t runner.Task) (runner.TaskOutput, error) {
		return runner.TaskOutput{Rows: []runner.Row{{Scheme: "w", Metric: "pos", Value: 1, X: 5}}}, nil
	}
	if _, err := runner.Run(context.Background(), spec, runner.Options{}); err == nil || !strings.Contains(err.Error(), "not a checkpoint") {
		t.Fatalf("row off the checkpoints: %v", err)
	}
}

func TestPositiveParam(t *testing.T) {
	spec := runner.Spec{ID: "p", X: "x", Metrics: []string{"m"}, Schemes: []string{"s"}, Trials: 1,
		Params: []runner.Param{{Name: "x", Kind: runner.Float, Default: "1"}, {Name: "eta", Kind: runner.Float, Default: "0.1", Positive: true}},
		Run:    func(runner.Task) (runner.TaskOutput, error) { return runner.TaskOutput{}, nil }}
	for _, bad := range []string{"eta=0", "eta=-1e-9"} {
		if _, _, err := runner.Resolve(spec, []string{bad}, false, 0); err == nil || !strings.Contains(err.Error(), "eta") {
			t.Errorf("%s: error %v should reject it and name eta", bad, err)
		}
	}
	if _, _, err := runner.Resolve(spec, []string{"eta=1e-300"}, false, 0); err != nil {
		t.Errorf("tiny positive rejected: %v", err)
	}
}
