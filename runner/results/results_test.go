package results_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/internal/sweeptest"
	"github.com/wcmc-project/wcmc/runner/results"
)

// writtenRun runs noiseSpec with opts and writes its files to a temporary
// directory.
func writtenRun(t *testing.T, opts runner.Options) (string, *runner.Result) {
	t.Helper()
	res := sweeptest.MustRun(t, sweeptest.Noise(), opts)
	dir := t.TempDir()
	if _, _, err := results.WriteFiles(dir, res); err != nil {
		t.Fatal(err)
	}
	return dir, res
}

func TestLoadRoundTrip(t *testing.T) {
	opts := runner.Options{Seed: 7, Trials: 4, Sets: []string{"x=1,2,4", "scale=2.5"}, Machine: "test machine"}
	dir, res := writtenRun(t, opts)
	got, err := results.Load(dir, sweeptest.Noise())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(results.Summarize(got), results.Summarize(res)) {
		t.Errorf("summaries differ:\n%+v\n%+v", results.Summarize(got), results.Summarize(res))
	}
	r1, s1 := sweeptest.CSV(t, res)
	r2, s2 := sweeptest.CSV(t, got)
	if !bytes.Equal(r1, r2) || !bytes.Equal(s1, s2) {
		t.Error("CSV of the loaded result differs from the original")
	}
	if got.Seed != 7 || got.Trials != 4 || got.Quick || !reflect.DeepEqual(got.Values.Map(), res.Values.Map()) {
		t.Errorf("loaded seed %d trials %d quick %v params %v", got.Seed, got.Trials, got.Quick, got.Values.Map())
	}
	if !reflect.DeepEqual(got.Notes, res.Notes) {
		t.Errorf("notes %v, want %v", got.Notes, res.Notes)
	}
	if !got.Start.Equal(res.Start) || !got.End.Equal(res.End) {
		t.Errorf("times %v–%v, want %v–%v", got.Start, got.End, res.Start, res.End)
	}
	// The session that computed it, with its machine and workers, comes
	// back (its wall time to the nanosecond lost in float seconds).
	if len(res.Sessions) != 1 || res.Sessions[0].Machine != "test machine" || res.Sessions[0].Workers != runtime.GOMAXPROCS(0) || res.Sessions[0].Tasks != len(res.Tasks) {
		t.Fatalf("computed sessions %+v", res.Sessions)
	}
	sameSessions(t, got.Sessions, res.Sessions)
}

// sameSessions fails unless got are want read back from JSON: the same
// starts, tasks, machines and workers, wall times within float seconds'
// rounding.
func sameSessions(t *testing.T, got, want []runner.Session) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d sessions %+v, want %d %+v", len(got), got, len(want), want)
	}
	for i := range got {
		g, w := got[i], want[i]
		if !g.Began.Equal(w.Began) || g.Tasks != w.Tasks || g.Machine != w.Machine || g.Workers != w.Workers || (g.Wall-w.Wall).Abs() > time.Microsecond {
			t.Errorf("session %d: %+v, want %+v", i, g, w)
		}
	}
}

func TestSessionsRoundTrip(t *testing.T) {
	// A run computed on two machines, and on one whose machine was not
	// recorded, comes back as it was; results stored before sessions were
	// recorded come back with none.
	dir, res := writtenRun(t, runner.Options{Seed: 7, Trials: 2, Sets: []string{"x=1,2"}})
	at := time.Date(2026, 11, 27, 2, 0, 0, 123456789, time.UTC)
	res.Sessions = []runner.Session{
		{Began: at, Tasks: 1, Wall: 90*time.Second + 7, Machine: "A, 2 CPUs, linux/amd64, BLAS gonum", Workers: 2},
		{Began: at.Add(time.Hour), Tasks: 1, Wall: time.Second},
		{Began: at.Add(26 * time.Hour), Tasks: 2, Wall: 3 * time.Minute, Machine: "B", Workers: 1},
	}
	if _, _, err := results.WriteFiles(dir, res); err != nil {
		t.Fatal(err)
	}
	got, err := results.Load(dir, sweeptest.Noise())
	if err != nil {
		t.Fatal(err)
	}
	sameSessions(t, got.Sessions, res.Sessions)

	dropField(t, filepath.Join(dir, "noise.json"), "sessions")
	if got, err = results.Load(dir, sweeptest.Noise()); err != nil || got.Sessions != nil {
		t.Errorf("results without sessions: %+v, %v", got.Sessions, err)
	}
	for i, tr := range got.Tasks {
		want := res.Tasks[i]
		if tr.TaskKey != want.TaskKey || !reflect.DeepEqual(tr.Rows, want.Rows) || !reflect.DeepEqual(tr.Skipped, want.Skipped) {
			t.Fatalf("task %d: %+v, want %+v", i, tr, want)
		}
		// Info comes back through JSON: numbers as float64, NaN as "NaN".
		if it := tr.Info["b"]["iters"]; it != float64(7) {
			t.Errorf("task %d: info b.iters = %v (%T)", i, it, it)
		}
		if o := tr.Info["b"]["obj"]; o != "NaN" {
			t.Errorf("task %d: info b.obj = %v", i, o)
		}
	}
}

func TestLoadMatching(t *testing.T) {
	opts := runner.Options{Seed: 7, Trials: 3, Sets: []string{"scale=2.5"}}
	dir, _ := writtenRun(t, opts)
	plan := func(o runner.Options) *runner.Plan {
		p, err := runner.NewPlan(sweeptest.Noise(), o)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if _, err := results.LoadMatching(dir, plan(opts)); err != nil {
		t.Fatalf("same settings: %v", err)
	}
	// Numbers compare as values: 2.50 is the stored 2.5.
	same := opts
	same.Sets = []string{"scale=2.50"}
	if _, err := results.LoadMatching(dir, plan(same)); err != nil {
		t.Errorf("scale=2.50 vs stored 2.5: %v", err)
	}
	for _, c := range []struct {
		field string
		opts  runner.Options
	}{
		{"seed", runner.Options{Seed: 8, Trials: 3, Sets: []string{"scale=2.5"}}},
		{"trials", runner.Options{Seed: 7, Trials: 4, Sets: []string{"scale=2.5"}}},
		{"quick", runner.Options{Seed: 7, Trials: 3, Sets: []string{"scale=2.5"}, Quick: true}},
		{"parameter scale", runner.Options{Seed: 7, Trials: 3, Sets: []string{"scale=3"}}},
		{"parameter x", runner.Options{Seed: 7, Trials: 3, Sets: []string{"scale=2.5", "x=1,2"}}},
	} {
		_, err := results.LoadMatching(dir, plan(c.opts))
		var me *results.MismatchError
		if !errors.Is(err, results.ErrMismatch) || !errors.As(err, &me) || me.Field != c.field {
			t.Errorf("%s differs: error %v, want a mismatch of %q", c.field, err, c.field)
		}
	}
	old := runner.Version
	runner.Version = "other"
	_, err := results.LoadMatching(dir, plan(opts))
	runner.Version = old
	if !errors.Is(err, results.ErrMismatch) || !strings.Contains(err.Error(), "version") {
		t.Errorf("other version: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := results.Load(t.TempDir(), sweeptest.Noise()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("empty directory: %v, want fs.ErrNotExist", err)
	}

	dir, _ := writtenRun(t, runner.Options{Seed: 1, Trials: 2})
	jsonPath := filepath.Join(dir, "noise.json")
	csvPath := filepath.Join(dir, "noise.csv")
	origJSON, _ := os.ReadFile(jsonPath)
	origCSV, _ := os.ReadFile(csvPath)
	restore := func() {
		os.WriteFile(jsonPath, origJSON, 0o644)
		os.WriteFile(csvPath, origCSV, 0o644)
	}

	// A parameter the experiment no longer has, or lacks: a mismatch.
	editParams := func(f func(map[string]any)) {
		var m map[string]any
		if err := json.Unmarshal(origJSON, &m); err != nil {
			t.Fatal(err)
		}
		f(m["params"].(map[string]any))
		b, _ := json.Marshal(m)
		os.WriteFile(jsonPath, b, 0o644)
	}
	editParams(func(p map[string]any) { p["gone"] = "1" })
	if _, err := results.Load(dir, sweeptest.Noise()); !errors.Is(err, results.ErrMismatch) {
		t.Errorf("unknown stored parameter: %v, want ErrMismatch", err)
	}
	editParams(func(p map[string]any) { delete(p, "scale") })
	if _, err := results.Load(dir, sweeptest.Noise()); !errors.Is(err, results.ErrMismatch) {
		t.Errorf("missing stored parameter: %v, want ErrMismatch", err)
	}
	// … unless it was added since with a default that runs as before.
	added := sweeptest.Noise()
	for i := range added.Params {
		if added.Params[i].Name == "scale" {
			added.Params[i].Added = true
			if res, err := results.Load(dir, added); err != nil || res.Values.Raw("scale") != added.Params[i].Default {
				t.Errorf("parameter added since: %v", err)
			}
		}
	}
	restore()

	// Another experiment's files.
	other := sweeptest.Noise()
	other.ID = "noise2"
	os.WriteFile(filepath.Join(dir, "noise2.json"), origJSON, 0o644)
	if _, err := results.Load(dir, other); err == nil || !strings.Contains(err.Error(), `"noise"`) {
		t.Errorf("wrong experiment in JSON: %v", err)
	}

	// The rows are checked as read: in results written before digests
	// were recorded (which Load accepts without the check; they had no
	// format either), as here.
	var m map[string]any
	if err := json.Unmarshal(origJSON, &m); err != nil || m["digests"] == nil {
		t.Fatalf("no digests in %s (%v)", jsonPath, err)
	}
	delete(m, "digests")
	delete(m, "format")
	noDigests, _ := json.Marshal(m)
	os.WriteFile(jsonPath, noDigests, 0o644)

	// Lost rows of one task: incomplete.
	lines := strings.Split(strings.TrimSpace(string(origCSV)), "\n")
	var kept []string
	for _, l := range lines {
		if !strings.Contains(l, ",x,4,1,") { // x = 4, trial 1
			kept = append(kept, l)
		}
	}
	os.WriteFile(csvPath, []byte(strings.Join(kept, "\n")+"\n"), 0o644)
	if _, err := results.Load(dir, sweeptest.Noise()); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Errorf("missing task rows: %v", err)
	}
	// A row outside the sweep, and a malformed value.
	for _, bad := range []string{"noise,a,x,3,0,err,1", "noise,a,x,1,0,err,abc", "noise,a,x,1,9,err,1", "noise,z,x,1,0,err,1"} {
		os.WriteFile(csvPath, append(append([]byte{}, origCSV...), bad+"\n"...), 0o644)
		if _, err := results.Load(dir, sweeptest.Noise()); err == nil || !strings.Contains(err.Error(), "line") {
			t.Errorf("bad row %q: %v", bad, err)
		}
	}
	restore()
	if _, err := results.Load(dir, sweeptest.Noise()); err != nil {
		t.Errorf("restored files: %v", err)
	}
}

// TestResultsWithoutDigests: with the "digests" of ID.json deleted, an
// edited ID.csv was read back and reused by reproduce unchecked. Results
// of the current format always record them: without them Load refuses the
// result; results of the format before digests load (readable), but
// LoadMatching does not offer them for reuse, saying why.
func TestResultsWithoutDigests(t *testing.T) {
	opts := runner.Options{Seed: 3, Trials: 2}
	dir, _ := writtenRun(t, opts)
	plan, err := runner.NewPlan(sweeptest.Noise(), opts)
	if err != nil {
		t.Fatal(err)
	}
	jsonPath, csvPath := filepath.Join(dir, "noise.json"), filepath.Join(dir, "noise.csv")
	b, _ := os.ReadFile(csvPath)
	lines := strings.Split(string(b), "\n")
	i := strings.LastIndex(lines[1], ",")
	lines[1] = lines[1][:i] + ",12345"
	os.WriteFile(csvPath, []byte(strings.Join(lines, "\n")), 0o644)

	dropField(t, jsonPath, "digests")
	for name, load := range map[string]func() error{
		"Load":         func() error { _, err := results.Load(dir, sweeptest.Noise()); return err },
		"LoadMatching": func() error { _, err := results.LoadMatching(dir, plan); return err },
	} {
		err := load()
		for _, want := range []string{jsonPath, "records no SHA-256 of noise.csv", "run the experiment again"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s of a current-format result without digests: error %v, want one naming %q", name, err, want)
			}
		}
	}

	dropField(t, jsonPath, "format")
	if _, err := results.Load(dir, sweeptest.Noise()); err != nil {
		t.Errorf("Load of a result of the format before digests: %v", err)
	}
	_, err = results.LoadMatching(dir, plan)
	for _, want := range []string{jsonPath, "records no SHA-256", "cannot be checked"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadMatching of a result of the format before digests: error %v, want one naming %q", err, want)
		}
	}
}

func TestHeaders(t *testing.T) {
	rows, summary := sweeptest.CSV(t, sweeptest.MustRun(t, sweeptest.Noise(), runner.Options{Seed: 1, Quick: true}))
	if got, _, _ := strings.Cut(string(rows), "\n"); got != "experiment,scheme,x_name,x,trial,metric,value" {
		t.Errorf("rows header %q", got)
	}
	if got, _, _ := strings.Cut(string(summary), "\n"); got != "experiment,scheme,x_name,x,metric,mean,q05,q95,n" {
		t.Errorf("summary header %q", got)
	}
}

func TestSummaryKnownValues(t *testing.T) {
	spec := sweeptest.Noise()
	spec.Setup = nil
	spec.Run = func(t runner.Task) (runner.TaskOutput, error) {
		// Trial k of 20 reports k+1 (scheme a) and 100-k (scheme b), so the
		// values are 1..20 and 81..100 in whatever order.
		return runner.TaskOutput{Rows: []runner.Row{{Scheme: "b", Metric: "err", Value: float64(100 - t.Trial)}, {Scheme: "a", Metric: "err", Value: float64(t.Trial + 1)}}}, nil
	}
	res := sweeptest.MustRun(t, spec, runner.Options{Trials: 20, Sets: []string{"x=3"}})
	got := results.Summarize(res)
	// Empirical quantile: the smallest value at or above the fraction p of
	// the 20 values: q05 = 1st value, q95 = 19th value. The sample variance
	// of 20 consecutive integers is 20·21/12 = 35.
	want := []results.SummaryRow{
		{Scheme: "a", XName: "x", X: 3, Metric: "err", Mean: 10.5, SD: math.Sqrt(35), Q05: 1, Q95: 19, N: 20},
		{Scheme: "b", XName: "x", X: 3, Metric: "err", Mean: 90.5, SD: math.Sqrt(35), Q05: 81, Q95: 99, N: 20},
	}
	if !slices.Equal(got, want) {
		t.Errorf("summary\n got %+v\nwant %+v", got, want)
	}
}

func TestSummaryOrderAndNaN(t *testing.T) {
	spec := sweeptest.Noise()
	spec.Setup = nil
	spec.Run = func(t runner.Task) (runner.TaskOutput, error) {
		return runner.TaskOutput{Rows: []runner.Row{{Scheme: "c", Metric: "aux", Value: 1}, {Scheme: "c", Metric: "err", Value: 1}, {Scheme: "a", Metric: "err", Value: 1}}}, nil
	}
	res := sweeptest.MustRun(t, spec, runner.Options{Trials: 3, Sets: []string{"x=4,1"}})
	// A run refuses NaN (TestNonFiniteRefused); Summarize still propagates
	// one that a hand-built Result holds.
	for i := range res.Tasks {
		if res.Tasks[i].X == 4 && res.Tasks[i].Trial == 1 {
			res.Tasks[i].Rows[1].Value = math.NaN()
		}
	}
	got := results.Summarize(res)
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

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out", "sub")
	res := sweeptest.MustRun(t, sweeptest.Noise(), runner.Options{Seed: 3, Quick: true})
	files, _, err := results.WriteFiles(dir, res)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	want := []string{"noise.csv", "noise.summary.csv", "noise.png", "noise.svg", "noise.pdf", "noise.aux.png", "noise.aux.svg", "noise.aux.pdf", "noise.json"}
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
	if err := results.Write(dir, res); err != nil {
		t.Fatal(err)
	}
	entries, _ = os.ReadDir(dir)
	if len(entries) != len(want) {
		t.Errorf("after rewrite: %d entries", len(entries))
	}
}

// TestWriteRefuses: the writer refuses a hand-made NaN, +Inf and −Inf in
// one summary cell, and a shard's partial result, before writing anything.
func TestWriteRefuses(t *testing.T) {
	res := sweeptest.MustRun(t, sweeptest.Noise(), runner.Options{Trials: 2})
	res.Tasks[3].Rows[0].Value = math.NaN()
	dir := filepath.Join(t.TempDir(), "out")
	if _, _, err := results.WriteFiles(dir, res); err == nil || !strings.Contains(err.Error(), "NaN") || !strings.Contains(err.Error(), `scheme "a"`) {
		t.Errorf("WriteFiles with NaN: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files written despite the NaN: %v", entries)
	}
	// +Inf and −Inf in one summary cell average to NaN: refused too.
	res = sweeptest.MustRun(t, sweeptest.Noise(), runner.Options{Trials: 2})
	res.Tasks[2].Rows[0].Value, res.Tasks[3].Rows[0].Value = math.Inf(1), math.Inf(-1)
	if _, _, err := results.WriteFiles(dir, res); err == nil || !strings.Contains(err.Error(), "summary") {
		t.Errorf("WriteFiles with ±Inf in one cell: %v", err)
	}
	// A single +Inf is a value, written as such.
	res = sweeptest.MustRun(t, sweeptest.Noise(), runner.Options{Trials: 2})
	res.Tasks[3].Rows[0].Value = math.Inf(1)
	if _, _, err := results.WriteFiles(dir, res); err != nil {
		t.Errorf("WriteFiles with +Inf: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "noise.csv")); !strings.Contains(string(data), ",err,+Inf\n") {
		t.Error("+Inf not in the CSV")
	}
	// And a shard's partial result.
	res = sweeptest.MustRun(t, sweeptest.Noise(), runner.Options{Trials: 2, Shard: runner.Shard{Index: 1, Count: 2}})
	if _, _, err := results.WriteFiles(dir, res); err == nil || !strings.Contains(err.Error(), "shard 1/2") {
		t.Errorf("WriteFiles of a shard: %v", err)
	}
}

// dropField removes key from the JSON object in path, as a results file
// written before the field existed.
func dropField(t *testing.T, path, key string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if rec[key] == nil {
		t.Fatalf("%s has no %s: %s", path, key, b)
	}
	delete(rec, key)
	if b, err = json.Marshal(rec); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestEditedCSVIsRefused(t *testing.T) {
	opts := runner.Options{Seed: 1, Trials: 3}
	dir, _ := writtenRun(t, opts)
	p, err := runner.NewPlan(sweeptest.Noise(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"noise.csv", "noise.summary.csv"} {
		path := filepath.Join(dir, name)
		orig, _ := os.ReadFile(path)
		// A value changed by hand, in a file that still parses.
		lines := strings.Split(string(orig), "\n")
		lines[1] = lines[1][:strings.LastIndex(lines[1], ",")] + ",0.5"
		os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644)
		_, err := results.LoadMatching(dir, p)
		if err == nil || !strings.Contains(err.Error(), path+" was modified after it was written") {
			t.Errorf("%s edited: error %v, want one saying it was modified", name, err)
		}
		os.WriteFile(path, orig, 0o644)
	}
	if _, err := results.LoadMatching(dir, p); err != nil {
		t.Errorf("restored: %v", err)
	}
}

func TestWriteIsAllOrNothing(t *testing.T) {
	dir, _ := writtenRun(t, runner.Options{Seed: 1, Trials: 3})
	before := map[string][]byte{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		before[e.Name()], _ = os.ReadFile(filepath.Join(dir, e.Name()))
	}
	// The JSON, renamed last, cannot be replaced: a directory is in its way.
	json := filepath.Join(dir, "noise.json")
	os.Remove(json)
	os.MkdirAll(filepath.Join(json, "sub"), 0o755)
	delete(before, "noise.json")
	res := sweeptest.MustRun(t, sweeptest.Noise(), runner.Options{Seed: 2, Trials: 3})
	if _, _, err := results.WriteFiles(dir, res); err == nil {
		t.Fatal("the write succeeded")
	}
	entries, _ = os.ReadDir(dir)
	if len(entries) != len(before)+1 {
		t.Errorf("%d entries after the failed write, want %d", len(entries), len(before)+1)
	}
	for name, data := range before {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s changed by a failed write (%v)", name, err)
		}
	}
}

func TestWriteRefusesLinks(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "one-line.txt")
	os.WriteFile(target, []byte("keep\n"), 0o644)
	link := filepath.Join(dir, "noise.summary.csv")
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
	res := sweeptest.MustRun(t, sweeptest.Noise(), runner.Options{Seed: 1, Trials: 2})
	if _, _, err := results.WriteFiles(dir, res); err == nil || !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("error %v, want one naming the link", err)
	}
	if got, _ := os.ReadFile(target); string(got) != "keep\n" {
		t.Errorf("the link's target holds %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries, want the link alone", len(entries))
	}
}
