package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writtenRun runs noiseSpec with opts and writes its files to a temporary
// directory.
func writtenRun(t *testing.T, opts Options) (string, *Result) {
	t.Helper()
	res := mustRun(t, noiseSpec(), opts)
	dir := t.TempDir()
	if _, _, err := WriteFiles(dir, res); err != nil {
		t.Fatal(err)
	}
	return dir, res
}

func TestLoadResultRoundTrip(t *testing.T) {
	opts := Options{Seed: 7, Trials: 4, Sets: []string{"x=1,2,4", "scale=2.5"}}
	dir, res := writtenRun(t, opts)
	got, err := LoadResult(dir, noiseSpec())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(Summarize(got), Summarize(res)) {
		t.Errorf("summaries differ:\n%+v\n%+v", Summarize(got), Summarize(res))
	}
	r1, s1 := csvBytes(t, res)
	r2, s2 := csvBytes(t, got)
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
	opts := Options{Seed: 7, Trials: 3, Sets: []string{"scale=2.5"}}
	dir, _ := writtenRun(t, opts)
	plan := func(o Options) *Plan {
		p, err := NewPlan(noiseSpec(), o)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if _, err := LoadMatching(dir, plan(opts)); err != nil {
		t.Fatalf("same settings: %v", err)
	}
	// Numbers compare as values: 2.50 is the stored 2.5.
	same := opts
	same.Sets = []string{"scale=2.50"}
	if _, err := LoadMatching(dir, plan(same)); err != nil {
		t.Errorf("scale=2.50 vs stored 2.5: %v", err)
	}
	for _, c := range []struct {
		field string
		opts  Options
	}{
		{"seed", Options{Seed: 8, Trials: 3, Sets: []string{"scale=2.5"}}},
		{"trials", Options{Seed: 7, Trials: 4, Sets: []string{"scale=2.5"}}},
		{"quick", Options{Seed: 7, Trials: 3, Sets: []string{"scale=2.5"}, Quick: true}},
		{"parameter scale", Options{Seed: 7, Trials: 3, Sets: []string{"scale=3"}}},
		{"parameter x", Options{Seed: 7, Trials: 3, Sets: []string{"scale=2.5", "x=1,2"}}},
	} {
		_, err := LoadMatching(dir, plan(c.opts))
		var me *MismatchError
		if !errors.Is(err, ErrMismatch) || !errors.As(err, &me) || me.Field != c.field {
			t.Errorf("%s differs: error %v, want a mismatch of %q", c.field, err, c.field)
		}
	}
	old := Version
	Version = "other"
	_, err := LoadMatching(dir, plan(opts))
	Version = old
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "version") {
		t.Errorf("other version: %v", err)
	}
}

func TestLoadResultErrors(t *testing.T) {
	if _, err := LoadResult(t.TempDir(), noiseSpec()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("empty directory: %v, want fs.ErrNotExist", err)
	}

	dir, _ := writtenRun(t, Options{Seed: 1, Trials: 2})
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
	if _, err := LoadResult(dir, noiseSpec()); !errors.Is(err, ErrMismatch) {
		t.Errorf("unknown stored parameter: %v, want ErrMismatch", err)
	}
	editParams(func(p map[string]any) { delete(p, "scale") })
	if _, err := LoadResult(dir, noiseSpec()); !errors.Is(err, ErrMismatch) {
		t.Errorf("missing stored parameter: %v, want ErrMismatch", err)
	}
	restore()

	// Another experiment's files.
	other := noiseSpec()
	other.ID = "noise2"
	os.WriteFile(filepath.Join(dir, "noise2.json"), origJSON, 0o644)
	if _, err := LoadResult(dir, other); err == nil || !strings.Contains(err.Error(), `"noise"`) {
		t.Errorf("wrong experiment in JSON: %v", err)
	}

	// Lost rows of one task: incomplete.
	lines := strings.Split(strings.TrimSpace(string(origCSV)), "\n")
	var kept []string
	for _, l := range lines {
		if !strings.Contains(l, ",x,4,1,") { // x = 4, trial 1
			kept = append(kept, l)
		}
	}
	os.WriteFile(csvPath, []byte(strings.Join(kept, "\n")+"\n"), 0o644)
	if _, err := LoadResult(dir, noiseSpec()); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Errorf("missing task rows: %v", err)
	}
	// A row outside the sweep, and a malformed value.
	for _, bad := range []string{"noise,a,x,3,0,err,1", "noise,a,x,1,0,err,abc", "noise,a,x,1,9,err,1", "noise,z,x,1,0,err,1"} {
		os.WriteFile(csvPath, append(append([]byte{}, origCSV...), bad+"\n"...), 0o644)
		if _, err := LoadResult(dir, noiseSpec()); err == nil || !strings.Contains(err.Error(), "line") {
			t.Errorf("bad row %q: %v", bad, err)
		}
	}
	restore()
	if _, err := LoadResult(dir, noiseSpec()); err != nil {
		t.Errorf("restored files: %v", err)
	}
}
