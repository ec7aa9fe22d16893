package stageprof

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// synthetic builds a CPU profile whose samples have the given stacks (leaf
// first), labels and CPU nanoseconds.
func synthetic(samples []struct {
	stack  []string
	labels map[string][]string
	nanos  int64
}) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
	}
	fns := map[string]*profile.Function{}
	for _, s := range samples {
		var locs []*profile.Location
		for _, name := range s.stack {
			f := fns[name]
			if f == nil {
				f = &profile.Function{ID: uint64(len(fns) + 1), Name: name}
				fns[name] = f
				p.Function = append(p.Function, f)
			}
			l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
			p.Location = append(p.Location, l)
			locs = append(locs, l)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{1, s.nanos}, Label: s.labels})
	}
	return p
}

// TestAttribute checks the stage rules on a synthetic profile: the
// outermost matching wcmc function decides (journal.Run, the root of
// every task, does not), the wvcmc label overrides the stack, stage=setup
// prefixes every stage but GC's, and unmatched samples are "other".
func TestAttribute(t *testing.T) {
	const w = "github.com/wcmc-project/wcmc/"
	root := []string{w + "runner.(*Plan).Execute", w + "runner/journal.Run", "main.main"}
	stack := func(leaf ...string) []string { return append(leaf, root...) }
	p := synthetic([]struct {
		stack  []string
		labels map[string][]string
		nanos  int64
	}{
		{stack(w+"model.dotRow", w+"sampler.(*Gibbs).Sweep", w+"experiment.runProbitTrial"), nil, 3e9},
		{stack(w+"model.normCDF", w+"model.PredictiveProb", w+"metric.PredictiveKL"), nil, 2e9},
		{stack(w+"model.dotRow", w+"consensus.(*Variational).ValueGrad"), map[string][]string{"wvcmc": {"noma/newton"}}, 5e9},
		{stack(w + "sampler.(*HMC).Step"), map[string][]string{"stage": {"setup"}}, 4e9},
		{[]string{"runtime.scanobject", "runtime.gcBgMarkWorker"}, map[string][]string{"stage": {"setup"}}, 1e9},
		{stack("encoding/json.Marshal", w+"runner/journal.encodeRecord"), nil, 0.5e9},
		{stack("runtime.memmove"), nil, 0.25e9},
		{stack("runtime.memmove"), nil, 0}, // no CPU: ignored
	})
	tab, err := Attribute(p)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"sampling": 3, "predictive KL": 2, "wvcmc noma/newton": 5, "setup: sampling": 4,
		"GC (background)": 1, "journal (I/O)": 0.5, "other": 0.25,
	}
	if math.Abs(tab.Total-15.75) > 1e-12 {
		t.Errorf("total %v s, want 15.75", tab.Total)
	}
	if len(tab.Rows) != len(want) {
		t.Errorf("stages %v, want %v", tab.Rows, want)
	}
	for i, r := range tab.Rows {
		if math.Abs(r.Seconds-want[r.Stage]) > 1e-12 {
			t.Errorf("%s: %v s, want %v", r.Stage, r.Seconds, want[r.Stage])
		}
		if i > 0 && r.Seconds > tab.Rows[i-1].Seconds {
			t.Errorf("rows not sorted: %v", tab.Rows)
		}
	}
	if _, err := Attribute(&profile.Profile{SampleType: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}}}); err == nil {
		t.Error("an allocation profile was attributed as CPU")
	}
}

// TestRecorder profiles a computation and checks the files: a CPU profile
// that parses as one, an allocation profile, and the Markdown naming the
// run (no assertion on the sampled times, which depend on the machine).
func TestRecorder(t *testing.T) {
	dir := t.TempDir()
	r, err := NewRecorder(dir)
	if err != nil {
		t.Fatal(err)
	}
	var sink []float64
	busy := func() error {
		for i := range 200000 {
			sink = append(sink, math.Sqrt(float64(i)))
		}
		return nil
	}
	if err := r.Profile("busy", false, busy); err != nil {
		t.Fatal(err)
	}
	_ = sink
	for _, name := range []string{"busy.cpu.pprof", "busy.allocs.pprof"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.HasPrefix(name, "busy.allocs") && len(p.SampleType) == 0 {
			t.Errorf("%s: no sample types", name)
		}
	}
	if len(r.Runs) != 1 || r.Runs[0].ID != "busy" || r.Runs[0].Wall <= 0 {
		t.Fatalf("runs %+v", r.Runs)
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| `busy` |") || !strings.Contains(md.String(), "### `busy`") {
		t.Errorf("markdown:\n%s", md.String())
	}

	// A resumed computation's profiles cover both sessions: the duration
	// is the sum.
	if err := r.Profile("busy", true, busy); err != nil {
		t.Fatal(err)
	}
	if len(r.Runs) != 2 || r.Runs[1].Wall <= r.Runs[0].Wall {
		t.Errorf("resumed: runs %+v", r.Runs)
	}
	// A stored profile that does not parse (a process killed while
	// writing it) is dropped, not merged: this session's is kept.
	if err := os.WriteFile(filepath.Join(dir, "cut.cpu.pprof"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Profile("cut", true, busy); err != nil {
		t.Fatalf("resumed over a cut profile: %v", err)
	}
	// Another reproduction that reuses the results loads the profile.
	r2, err := NewRecorder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := r2.Load("busy", "dev-0123abc+openblas"); !ok || err != nil {
		t.Fatalf("Load: %v, %v", ok, err)
	}
	if ok, err := r2.Load("absent", ""); ok || err != nil {
		t.Fatalf("Load of a missing profile: %v, %v", ok, err)
	}
	if len(r2.Runs) != 1 || !r2.Runs[0].Earlier || r2.Runs[0].Wall != r.Runs[1].Wall {
		t.Errorf("loaded: %+v, recorded %+v", r2.Runs, r.Runs[1])
	}
	md.Reset()
	if err := r2.WriteMarkdown(&md); err != nil || !strings.Contains(md.String(), "| `busy` (earlier, dev-0123abc+openblas) |") {
		t.Errorf("markdown of a loaded profile (%v):\n%s", err, md.String())
	}
}

// TestRecorderCheckpoints checks that a running computation's profiles are
// written at each checkpoint, so that a process killed mid-computation
// keeps them, and that the final profile covers every segment; and that a
// computation that is not resumed starts afresh over stale files.
func TestRecorderCheckpoints(t *testing.T) {
	dir := t.TempDir()
	r, err := NewRecorder(dir)
	if err != nil {
		t.Fatal(err)
	}
	ticks := make(chan time.Time)
	written := make(chan struct{})
	r.ticks, r.checkpointed = ticks, func() { written <- struct{}{} }
	cpuPath := filepath.Join(dir, "long.cpu.pprof")
	// A stale profile of an hour, from an earlier computation of the same
	// id: not resumed, it must not count.
	stale := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        10_000_000,
		DurationNanos: int64(time.Hour),
	}
	if err := write(cpuPath, stale); err != nil {
		t.Fatal(err)
	}
	var durations []int64
	long := func() error {
		// Killed before the first checkpoint, the stale profile would be
		// taken for this computation's by a resumed run.
		if _, err := os.Stat(cpuPath); err == nil {
			return errors.New("the stale profile was kept")
		}
		for range 2 {
			ticks <- time.Time{}
			<-written
			p, err := readProfile(cpuPath)
			if err != nil {
				return fmt.Errorf("checkpoint: %w", err)
			}
			durations = append(durations, p.DurationNanos)
		}
		return errors.New("interrupted")
	}
	if err := r.Profile("long", false, long); err == nil || err.Error() != "interrupted" {
		t.Fatalf("Profile returned %v, want the computation's error", err)
	}
	if len(durations) != 2 || durations[0] <= 0 || durations[1] <= durations[0] {
		t.Fatalf("checkpointed durations %v: want two, growing", durations)
	}
	final, err := readProfile(cpuPath)
	if err != nil {
		t.Fatal(err)
	}
	if final.DurationNanos <= durations[1] || final.DurationNanos >= int64(time.Hour) || time.Duration(final.DurationNanos) != r.Runs[0].Wall {
		t.Errorf("final duration %d after checkpoints %v (run wall %v)", final.DurationNanos, durations, r.Runs[0].Wall)
	}
	if _, err := readProfile(filepath.Join(dir, "long.allocs.pprof")); err != nil {
		t.Error(err)
	}
}

func readProfile(path string) (*profile.Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return profile.Parse(f)
}
