package runner

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// noiseSpec is a toy experiment: scheme "a" reports x + N(0,1) draws,
// scheme "b" reports |N(0,1)|·scale, scheme "c" is skipped below x = 2.
func noiseSpec() Spec {
	return Spec{
		ID:          "noise",
		Figure:      "Fig. 0",
		Description: "toy noise",
		X:           "x",
		XLabel:      "x (units)",
		Metrics:     []string{"err", "aux"},
		MetricLabel: map[string]string{"err": "error"},
		Schemes:     []string{"a", "b", "c"},
		Params: []Param{
			{Name: "x", Kind: Float, Default: "1,2,4", Doc: "swept", Min: 0.5, Max: 100, HasMin: true, HasMax: true},
			{Name: "scale", Kind: Float, Default: "1", Doc: "scale", Min: 0, HasMin: true},
			{Name: "n", Kind: Int, Default: "3", Doc: "draws", Min: 1, Max: 50, HasMin: true, HasMax: true},
			{Name: "mode", Kind: String, Default: "plain", Choices: []string{"plain", "fancy"}},
			{Name: "verbose", Kind: Bool, Default: "false"},
		},
		Trials: 5,
		Quick:  map[string]string{"trials": "2", "n": "2"},
		Validate: func(v Values) error {
			if v.Float("scale") > 10 && v.Int("n") > 10 {
				return errors.New("scale > 10 needs n ≤ 10")
			}
			return nil
		},
		Setup: func(v Values, rng *rand.Rand) (any, error) {
			return rng.Float64(), nil
		},
		Run: func(t Task) (Outcome, error) {
			var o Outcome
			off := t.Shared.(float64)
			for range t.Params.Int("n") {
				o.Rows = append(o.Rows, Row{Scheme: "a", Metric: "err", Value: t.X + t.Rng.NormFloat64() + off})
			}
			o.Rows = append(o.Rows, Row{Scheme: "b", Metric: "err", Value: math.Abs(t.Rng.NormFloat64()) * t.Params.Float("scale")})
			o.Rows = append(o.Rows, Row{Scheme: "b", Metric: "aux", Value: float64(t.Trial)})
			if t.X < 2 {
				o.Skipped = append(o.Skipped, Skip{"c", fmt.Sprintf("x=%g < 2", t.X)})
			} else {
				o.Rows = append(o.Rows, Row{Scheme: "c", Metric: "err", Value: t.X * t.Rng.Float64()})
			}
			o.Info = map[string]map[string]any{"b": {"iters": 7, "obj": math.NaN()}, "a": {"p": t.Point}}
			return o, nil
		},
	}
}

func mustRun(t *testing.T, spec Spec, opts Options) *Result {
	t.Helper()
	res, err := Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func csvBytes(t *testing.T, res *Result) (rows, summary []byte) {
	t.Helper()
	var a, b bytes.Buffer
	if err := writeRows(&a, res); err != nil {
		t.Fatal(err)
	}
	if err := writeSummary(&b, res.Spec.ID, Summarize(res)); err != nil {
		t.Fatal(err)
	}
	return a.Bytes(), b.Bytes()
}

func TestDeterministicAcrossWorkers(t *testing.T) {
	spec := noiseSpec()
	opts := Options{Seed: 42, Trials: 20, Sets: []string{"x=1,2,3,4,5,6"}}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	opts.Workers = 1
	r1, s1 := csvBytes(t, mustRun(t, spec, opts))
	runtime.GOMAXPROCS(4)
	opts.Workers = 4
	r4, s4 := csvBytes(t, mustRun(t, spec, opts))
	opts.Workers = 0
	r0, s0 := csvBytes(t, mustRun(t, spec, opts))
	if !bytes.Equal(r1, r4) || !bytes.Equal(r1, r0) {
		t.Error("rows CSV differs between worker counts")
	}
	if !bytes.Equal(s1, s4) || !bytes.Equal(s1, s0) {
		t.Error("summary CSV differs between worker counts")
	}
	opts.Seed = 43
	r43, _ := csvBytes(t, mustRun(t, spec, opts))
	if bytes.Equal(r1, r43) {
		t.Error("seed 43 gives the same rows as seed 42")
	}
}

// rowsByX groups the CSV lines of res by their x column.
func rowsByX(t *testing.T, res *Result) map[string][]string {
	t.Helper()
	rows, _ := csvBytes(t, res)
	out := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(rows)), "\n")[1:] {
		x := strings.Split(line, ",")[3]
		out[x] = append(out[x], line)
	}
	return out
}

func TestAddingPointKeepsOtherPoints(t *testing.T) {
	spec := noiseSpec()
	spec.Setup = nil
	spec.Run = func(t Task) (Outcome, error) {
		return Outcome{Rows: []Row{{Scheme: "a", Metric: "err", Value: t.Rng.NormFloat64()}, {Scheme: "b", Metric: "err", Value: t.Rng.Float64()}}}, nil
	}
	small := rowsByX(t, mustRun(t, spec, Options{Seed: 7, Sets: []string{"x=1,4"}}))
	big := rowsByX(t, mustRun(t, spec, Options{Seed: 7, Sets: []string{"x=8, 4, 2.5, 1"}, Workers: 3}))
	for _, x := range []string{"1", "4"} {
		if len(small[x]) == 0 || !slices.Equal(small[x], big[x]) {
			t.Errorf("x=%s: rows changed when points were added:\n%v\n%v", x, small[x], big[x])
		}
	}
	if len(big["8"]) == 0 || len(big["2.5"]) == 0 {
		t.Error("new points missing")
	}
}

func TestHeaders(t *testing.T) {
	rows, summary := csvBytes(t, mustRun(t, noiseSpec(), Options{Seed: 1, Quick: true}))
	if got, _, _ := strings.Cut(string(rows), "\n"); got != "experiment,scheme,x_name,x,trial,metric,value" {
		t.Errorf("rows header %q", got)
	}
	if got, _, _ := strings.Cut(string(summary), "\n"); got != "experiment,scheme,x_name,x,metric,mean,q05,q95,n" {
		t.Errorf("summary header %q", got)
	}
}

func TestSummaryKnownValues(t *testing.T) {
	spec := noiseSpec()
	spec.Setup = nil
	spec.Run = func(t Task) (Outcome, error) {
		// Trial k of 20 reports k+1 (scheme a) and 100-k (scheme b), so the
		// values are 1..20 and 81..100 in whatever order.
		return Outcome{Rows: []Row{{Scheme: "b", Metric: "err", Value: float64(100 - t.Trial)}, {Scheme: "a", Metric: "err", Value: float64(t.Trial + 1)}}}, nil
	}
	res := mustRun(t, spec, Options{Trials: 20, Sets: []string{"x=3"}})
	got := Summarize(res)
	// Empirical quantile: the smallest value at or above the fraction p of
	// the 20 values: q05 = 1st value, q95 = 19th value.
	want := []SummaryRow{
		{Scheme: "a", XName: "x", X: 3, Metric: "err", Mean: 10.5, Q05: 1, Q95: 19, N: 20},
		{Scheme: "b", XName: "x", X: 3, Metric: "err", Mean: 90.5, Q05: 81, Q95: 99, N: 20},
	}
	if !slices.Equal(got, want) {
		t.Errorf("summary\n got %+v\nwant %+v", got, want)
	}
}

func TestSummaryOrderAndNaN(t *testing.T) {
	spec := noiseSpec()
	spec.Setup = nil
	spec.Run = func(t Task) (Outcome, error) {
		return Outcome{Rows: []Row{{Scheme: "c", Metric: "aux", Value: 1}, {Scheme: "c", Metric: "err", Value: 1}, {Scheme: "a", Metric: "err", Value: 1}}}, nil
	}
	res := mustRun(t, spec, Options{Trials: 3, Sets: []string{"x=4,1"}})
	// A run refuses NaN (TestNonFiniteRefused); Summarize still propagates
	// one that a hand-built Result holds.
	for i := range res.Tasks {
		if res.Tasks[i].X == 4 && res.Tasks[i].Trial == 1 {
			res.Tasks[i].Rows[1].Value = math.NaN()
		}
	}
	got := Summarize(res)
	var keys []string
	for _, r := range got {
		keys = append(keys, fmt.Sprintf("%s/%g/%s", r.Scheme, r.X, r.Metric))
		if r.Scheme == "c" && r.Metric == "err" && r.X == 4 && !math.IsNaN(r.Mean) {
			t.Errorf("NaN value: mean %v, want NaN", r.Mean)
		}
	}
	want := []string{"a/4/err", "a/1/err", "c/4/err", "c/4/aux", "c/1/err", "c/1/aux"}
	if !slices.Equal(keys, want) {
		t.Errorf("order %v, want %v", keys, want)
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
		_, err := Run(context.Background(), noiseSpec(), Options{Sets: c.sets, Trials: c.trials})
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
	_, err := Run(context.Background(), noiseSpec(), Options{Sets: []string{"n=0", "scale=NaN"}})
	if err == nil || !strings.Contains(err.Error(), `"n"`) || !strings.Contains(err.Error(), `"scale"`) {
		t.Errorf("two bad values: error %v should name both", err)
	}
}

func TestValidationBeforeWork(t *testing.T) {
	spec := noiseSpec()
	var calls atomic.Int32
	spec.Setup = func(Values, *rand.Rand) (any, error) { calls.Add(1); return 0.0, nil }
	if _, err := Run(context.Background(), spec, Options{Sets: []string{"x=1,nope"}}); err == nil {
		t.Fatal("no error")
	}
	if calls.Load() != 0 {
		t.Error("Setup ran before validation finished")
	}
}

func TestOverridesAndValues(t *testing.T) {
	spec := noiseSpec()
	v, n, err := Resolve(spec, nil, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || v.Int("n") != 2 {
		t.Errorf("quick: trials %d, n %d; want 2, 2", n, v.Int("n"))
	}
	v, n, err = Resolve(spec, []string{"n=4", " trials = 3", "x= 8, 1e1 ,0.5", "mode=fancy", "verbose=true"}, true, 0)
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
	if _, n, _ = Resolve(spec, []string{"trials=3"}, true, 9); n != 9 {
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
	mods := map[string]func(*Spec){
		"no run":        func(s *Spec) { s.Run = nil },
		"bad X":         func(s *Spec) { s.X = "mode" },
		"reserved":      func(s *Spec) { s.Params = append(s.Params, Param{Name: "trials", Kind: Int, Default: "1"}) },
		"dup param":     func(s *Spec) { s.Params = append(s.Params, s.Params[1]) },
		"bad default":   func(s *Spec) { s.Params[1].Default = "-3" },
		"quick unknown": func(s *Spec) { s.Quick = map[string]string{"zz": "1"} },
		"trials":        func(s *Spec) { s.Trials = 0 },
		"metric name":   func(s *Spec) { s.Metrics = []string{"a/b"} },
		"linear":        func(s *Spec) { s.LinearY = []string{"zz"} },
	}
	if err := noiseSpec().Check(); err != nil {
		t.Fatalf("valid spec: %v", err)
	}
	for name, mod := range mods {
		s := noiseSpec()
		mod(&s)
		if err := s.Check(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestSkipsAndNotes(t *testing.T) {
	var prog bytes.Buffer
	res := mustRun(t, noiseSpec(), Options{Trials: 3, Sets: []string{"x=1,1.5,2"}, Progress: &prog})
	for _, tr := range res.Tasks {
		for _, r := range tr.Rows {
			if r.Scheme == "c" && tr.X < 2 {
				t.Errorf("skipped scheme has a row at x=%g", tr.X)
			}
		}
	}
	want := []Note{{"c", "x", 1, "x=1 < 2"}, {"c", "x", 1.5, "x=1.5 < 2"}}
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
	spec := noiseSpec()
	spec.Run = func(t Task) (Outcome, error) {
		if t.X == 2 && t.Trial == 3 {
			return Outcome{}, errors.New("boom")
		}
		return Outcome{}, nil
	}
	_, err := Run(context.Background(), spec, Options{Workers: 2})
	if err == nil || !strings.Contains(err.Error(), "x=2 trial 3") || !strings.Contains(err.Error(), "boom") {
		t.Errorf("error %v should name x=2 trial 3", err)
	}
	spec.Run = func(t Task) (Outcome, error) {
		return Outcome{Rows: []Row{{Scheme: "zz", Metric: "err", Value: 1}}}, nil
	}
	if _, err := Run(context.Background(), spec, Options{}); err == nil || !strings.Contains(err.Error(), `"zz"`) {
		t.Errorf("unknown scheme: %v", err)
	}
	spec.Run = func(t Task) (Outcome, error) { panic("oops") }
	if _, err := Run(context.Background(), spec, Options{}); err == nil || !strings.Contains(err.Error(), "panic: oops") {
		t.Errorf("panic: %v", err)
	}
}

func TestCancel(t *testing.T) {
	spec := noiseSpec()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ran atomic.Int32
	spec.Run = func(t Task) (Outcome, error) {
		ran.Add(1)
		if t.Point == 0 && t.Trial == 1 {
			cancel()
		}
		if err := t.Ctx.Err(); err != nil {
			return Outcome{}, err
		}
		return Outcome{}, nil
	}
	_, err := Run(ctx, spec, Options{Trials: 100, Workers: 2})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := ran.Load(); n >= 300 {
		t.Errorf("all %d tasks ran after cancellation", n)
	}
}

func TestOnTask(t *testing.T) {
	var keys []TaskKey
	res := mustRun(t, noiseSpec(), Options{Trials: 2, Workers: 3, OnTask: func(r TaskResult) error {
		keys = append(keys, r.TaskKey)
		return nil
	}})
	if len(keys) != len(res.Tasks) {
		t.Errorf("OnTask called %d times for %d tasks", len(keys), len(res.Tasks))
	}
	_, err := Run(context.Background(), noiseSpec(), Options{OnTask: func(TaskResult) error { return errors.New("disk full") }})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("OnTask error not returned: %v", err)
	}
}

func TestSeeds(t *testing.T) {
	draw := func(r *rand.Rand) uint64 { return r.Uint64() }
	base := draw(TaskRng(1, "noise", 2, 0))
	if draw(TaskRng(1, "noise", 2, 0)) != base {
		t.Error("same key, different stream")
	}
	others := []uint64{
		draw(TaskRng(2, "noise", 2, 0)), draw(TaskRng(1, "noisy", 2, 0)),
		draw(TaskRng(1, "noise", 2.5, 0)), draw(TaskRng(1, "noise", 2, 1)),
		draw(SetupRng(1, "noise")),
	}
	for i, o := range others {
		if o == base {
			t.Errorf("variant %d gives the same stream", i)
		}
	}
}

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out", "sub")
	res := mustRun(t, noiseSpec(), Options{Seed: 3, Quick: true})
	files, _, err := WriteFiles(dir, res)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	want := []string{"noise.csv", "noise.summary.csv", "noise.png", "noise.svg", "noise.aux.png", "noise.aux.svg", "noise.json"}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("files %v, want %v", names, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(want) {
		t.Errorf("directory holds %d entries, want %d (temp files left?)", len(entries), len(want))
	}
	for _, e := range entries {
		info, _ := e.Info()
		if strings.HasPrefix(e.Name(), ".") || info.Size() == 0 {
			t.Errorf("bad file %s (size %d)", e.Name(), info.Size())
		}
	}

	f, _ := os.Open(filepath.Join(dir, "noise.csv"))
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	// Quick: 2 trials × 3 points; per task n=2 rows of a, 2 of b, 1 of c when x ≥ 2.
	if got, want := len(recs)-1, 2*3*4+2*2; got != want {
		t.Errorf("CSV has %d rows, want %d", got, want)
	}

	var rec map[string]any
	data, _ := os.ReadFile(filepath.Join(dir, "noise.json"))
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("JSON: %v", err)
	}
	for _, k := range []string{"experiment", "figure", "description", "params", "seed", "trials", "quick", "version", "skipped", "info", "start", "end", "wall_seconds"} {
		if _, ok := rec[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if rec["trials"].(float64) != 2 || rec["quick"] != true || rec["params"].(map[string]any)["n"] != "2" {
		t.Errorf("JSON trials/quick/params wrong: %v %v %v", rec["trials"], rec["quick"], rec["params"])
	}
	info := rec["info"].([]any)
	if len(info) != 2*3*2 {
		t.Errorf("JSON has %d info records, want 12", len(info))
	}
	first := info[0].(map[string]any)
	if first["scheme"] != "a" || first["x"].(float64) != 1 || first["trial"].(float64) != 0 {
		t.Errorf("first info record %v", first)
	}
	if info[1].(map[string]any)["info"].(map[string]any)["obj"] != "NaN" {
		t.Errorf("NaN info not encoded as \"NaN\": %v", info[1])
	}
	if len(rec["skipped"].([]any)) != 1 {
		t.Errorf("skipped %v", rec["skipped"])
	}

	// Rewriting over existing files works and leaves no temp files.
	if err := Write(dir, res); err != nil {
		t.Fatal(err)
	}
	entries, _ = os.ReadDir(dir)
	if len(entries) != len(want) {
		t.Errorf("after rewrite: %d entries", len(entries))
	}
}

func TestTrajectorySplitsRowsByCheckpoint(t *testing.T) {
	// One call per trial; a random walk observed at the checkpoints. The
	// rows land at their checkpoints, results do not depend on the number
	// of workers, and a row off the checkpoint list is an error.
	calls := 0
	var mu sync.Mutex
	spec := Spec{
		ID: "walk", X: "steps", Metrics: []string{"pos"}, Schemes: []string{"w"}, Trials: 3, Trajectory: true,
		Params: []Param{{Name: "steps", Kind: Int, Default: "1,10,100"}},
		Run: func(t Task) (Outcome, error) {
			mu.Lock()
			calls++
			mu.Unlock()
			if !math.IsNaN(t.X) || t.Point != -1 {
				return Outcome{}, fmt.Errorf("trajectory task got X=%v point %d", t.X, t.Point)
			}
			var o Outcome
			pos, done := 0.0, 0
			for _, c := range t.Params.XList() {
				for ; done < int(c); done++ {
					pos += t.Rng.NormFloat64()
				}
				o.Rows = append(o.Rows, Row{Scheme: "w", Metric: "pos", Value: pos, X: c})
			}
			return o, nil
		},
	}
	a, err := Run(context.Background(), spec, Options{Workers: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(context.Background(), spec, Options{Workers: 3, Seed: 3})
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
	spec.Run = func(t Task) (Outcome, error) {
		return Outcome{Rows: []Row{{Scheme: "w", Metric: "pos", Value: 1, X: 5}}}, nil
	}
	if _, err := Run(context.Background(), spec, Options{}); err == nil || !strings.Contains(err.Error(), "not a checkpoint") {
		t.Fatalf("row off the checkpoints: %v", err)
	}
}

func TestPositiveParam(t *testing.T) {
	spec := Spec{ID: "p", X: "x", Metrics: []string{"m"}, Schemes: []string{"s"}, Trials: 1,
		Params: []Param{{Name: "x", Kind: Float, Default: "1"}, {Name: "eta", Kind: Float, Default: "0.1", Positive: true}},
		Run:    func(Task) (Outcome, error) { return Outcome{}, nil }}
	for _, bad := range []string{"eta=0", "eta=-1e-9"} {
		if _, _, err := Resolve(spec, []string{bad}, false, 0); err == nil || !strings.Contains(err.Error(), "eta") {
			t.Errorf("%s: error %v should reject it and name eta", bad, err)
		}
	}
	if _, _, err := Resolve(spec, []string{"eta=1e-300"}, false, 0); err != nil {
		t.Errorf("tiny positive rejected: %v", err)
	}
}
