package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wcmc-project/wcmc/internal/atomicfile"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/internal/sweeptest"
)

// infoSpec is noiseSpec with richer diagnostics (ints, slices, a struct, a
// NaN), whose JSON round trip must not change a resumed result.
func infoSpec() runner.Spec {
	spec := sweeptest.Noise()
	run := spec.Run
	spec.Run = func(t runner.Task) (runner.TaskOutput, error) {
		o, err := run(t)
		// Infinite values (an infinite KL divergence) are values: they
		// must survive the journal.
		switch {
		case t.X == 4 && t.Trial == 1:
			o.Rows = append(o.Rows, runner.Row{Scheme: "c", Metric: "aux", Value: math.Inf(1)})
		case t.X == 2 && t.Trial == 0:
			o.Rows = append(o.Rows, runner.Row{Scheme: "c", Metric: "aux", Value: math.Inf(-1)})
		}
		o.Info["c"] = map[string]any{"v": []float64{1.5, math.Inf(1)}, "s": struct {
			B int
			A string
		}{3, "<x>"}, "n": int64(1) << 40}
		return o, err
	}
	return spec
}

// reference runs spec uninterrupted without a journal.
func reference(t *testing.T, spec runner.Spec, opts Options) *runner.Result {
	t.Helper()
	o := opts.Options
	o.Shard = runner.Shard{}
	return sweeptest.MustRun(t, spec, o)
}

// mustRun runs spec journaled, failing the test on an error.
func mustRun(t *testing.T, spec runner.Spec, opts Options) *runner.Result {
	t.Helper()
	res, err := Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// sameResult checks that two results have the same tasks (rows, skips,
// info) and write the same CSV and summary bytes.
func sameResult(t *testing.T, got, want *runner.Result) {
	t.Helper()
	if !reflect.DeepEqual(got.Tasks, want.Tasks) {
		t.Fatalf("task records differ:\n got %+v\nwant %+v", got.Tasks, want.Tasks)
	}
	r1, s1 := sweeptest.CSV(t, got)
	r2, s2 := sweeptest.CSV(t, want)
	if !bytes.Equal(r1, r2) || !bytes.Equal(s1, s2) {
		t.Fatal("CSV bytes differ")
	}
	if !reflect.DeepEqual(got.Notes, want.Notes) {
		t.Fatalf("notes %v, want %v", got.Notes, want.Notes)
	}
}

func journalLines(t *testing.T, dir, id string) []string {
	t.Helper()
	data, err := os.ReadFile(Path(dir, id))
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitAfter(string(data), "\n")
}

// interrupt runs spec journaled in dir and cancels it once n tasks are
// recorded; it returns the Interrupted error.
func interrupt(t *testing.T, spec runner.Spec, opts Options, n int) *Interrupted {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen atomic.Int32
	opts.OnTask = func(runner.TaskResult) error {
		if int(seen.Add(1)) == n {
			cancel()
		}
		return nil
	}
	_, err := Run(ctx, spec, opts)
	var in *Interrupted
	if !errors.As(err, &in) || !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: err = %v, want *Interrupted wrapping context.Canceled", err)
	}
	return in
}

func TestJournalResumeEqualsUninterrupted(t *testing.T) {
	spec := infoSpec()
	dir := t.TempDir()
	opts := Options{Options: runner.Options{Seed: 5, Trials: 6, Workers: 2, Machine: "machine A"}, Dir: dir}
	want := reference(t, spec, opts)

	in := interrupt(t, spec, opts, 4)
	lines := journalLines(t, dir, "noise")
	if in.Done < 4 || in.Done >= in.Total || in.Total != 18 || len(lines)-1 != in.Done {
		t.Fatalf("interrupted: %+v with %d journal lines", in, len(lines)-1)
	}
	// A crash mid-write leaves a torn last line: it is ignored.
	f, _ := os.OpenFile(Path(dir, "noise"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"point":2,"x":4,"trial":5,"rows":[{"sch`)
	f.Close()

	var prog bytes.Buffer
	var ran atomic.Int32
	opts.Resume, opts.Progress, opts.Machine, opts.Workers = true, &prog, "machine B", 1
	opts.OnTask = func(runner.TaskResult) error { ran.Add(1); return nil }
	got := mustRun(t, spec, opts)
	sameResult(t, got, want)
	if got.Resumed != in.Done || int(ran.Load()) != 18-in.Done {
		t.Errorf("resumed %d, ran %d; want %d and %d", got.Resumed, ran.Load(), in.Done, 18-in.Done)
	}
	for _, w := range []string{"torn last line", "resuming", "tasks done"} {
		if !strings.Contains(prog.String(), w) {
			t.Errorf("progress lacks %q:\n%s", w, prog.String())
		}
	}
	// The journal now holds every task once, with no torn line.
	f, _ = os.Open(Path(dir, "noise"))
	data, err := Read(f)
	f.Close()
	if err != nil || len(data.Records) != 18 || data.Torn != "" {
		t.Fatalf("journal after resume: %d records, torn %q, err %v", len(data.Records), data.Torn, err)
	}
	// Two sessions wrote it: each record names its session's start, the
	// interrupted one's records first, with the machine and workers it ran with.
	byBegan := map[time.Time]int{}
	for i, r := range data.Records {
		want := runner.Session{Machine: "machine A", Workers: 2}
		if i >= in.Done {
			want = runner.Session{Machine: "machine B", Workers: 1}
		}
		if r.Began.IsZero() || r.Done.Before(r.Began) || r.Machine != want.Machine || r.Workers != want.Workers {
			t.Fatalf("record %d: began %v, done %v, machine %q, %d workers (want %q, %d)", i, r.Began, r.Done, r.Machine, r.Workers, want.Machine, want.Workers)
		}
		byBegan[r.Began]++
	}
	if len(byBegan) != 2 || byBegan[data.Records[0].Began] != in.Done {
		t.Fatalf("sessions %v, want the %d interrupted tasks and the rest", byBegan, in.Done)
	}
	// The result lists both sessions, and its wall time is theirs.
	if len(got.Sessions) != 2 || got.Sessions[0].Tasks != in.Done || got.Sessions[1].Tasks != 18-in.Done ||
		got.Sessions[0].Where() != "machine A, 2 workers" || got.Sessions[1].Where() != "machine B, 1 worker" ||
		got.Wall != got.Sessions[0].Wall+got.Sessions[1].Wall || !got.Sessions[0].Began.Before(got.Sessions[1].Began) {
		t.Errorf("sessions %+v, wall %v: want the %d interrupted tasks on A, then %d on B", got.Sessions, got.Wall, in.Done, 18-in.Done)
	}
	// Resuming a finished journal runs nothing, not even Setup.
	spec.Setup = func(runner.Values, *rand.Rand) (any, error) { t.Fatal("Setup ran"); return nil, nil }
	ran.Store(0)
	again := mustRun(t, spec, opts)
	sameResult(t, again, want)
	if ran.Load() != 0 || again.Resumed != 18 {
		t.Errorf("finished journal: ran %d tasks, resumed %d", ran.Load(), again.Resumed)
	}
	if !reflect.DeepEqual(again.Sessions, got.Sessions) || again.Wall != got.Wall {
		t.Errorf("finished journal: sessions %+v, wall %v; want %+v, %v (a session that computed nothing is not one)",
			again.Sessions, again.Wall, got.Sessions, got.Wall)
	}
}

func TestResumeTrajectoryPartialTrial(t *testing.T) {
	// A kill between the records of one trajectory trial leaves part of
	// the trial journaled: the resumed run reruns the trial and keeps only
	// the missing checkpoints.
	spec := sweeptest.Walk()
	dir := t.TempDir()
	opts := Options{Options: runner.Options{Seed: 2, Trials: 3, Workers: 2}, Dir: dir}
	want := reference(t, spec, opts)
	mustRun(t, spec, opts)
	lines := journalLines(t, dir, "walk")
	kept := strings.Join(lines[:len(lines)-3], "") // drop the last 2 records
	if err := os.WriteFile(Path(dir, "walk"), []byte(kept), 0o644); err != nil {
		t.Fatal(err)
	}
	opts.Resume = true
	got := mustRun(t, spec, opts)
	sameResult(t, got, want)
	if got.Resumed != 9-2 {
		t.Errorf("resumed %d records, want 7", got.Resumed)
	}
}

func TestFreshRunKeepsUnfinishedJournal(t *testing.T) {
	spec := sweeptest.Noise()
	dir := t.TempDir()
	opts := Options{Options: runner.Options{Seed: 1, Trials: 4, Workers: 1}, Dir: dir}
	interrupt(t, spec, opts, 2)
	before, _ := os.ReadFile(Path(dir, "noise"))
	_, err := Run(context.Background(), spec, opts)
	if !errors.Is(err, ErrUnfinished) || !strings.Contains(err.Error(), "finished tasks") || !strings.Contains(err.Error(), "resume") {
		t.Fatalf("fresh run over an unfinished journal: %v", err)
	}
	after, _ := os.ReadFile(Path(dir, "noise"))
	if !bytes.Equal(before, after) {
		t.Error("the refused run changed the journal")
	}
	// After removing it, a fresh run starts over.
	if err := Remove(dir, "noise"); err != nil {
		t.Fatal(err)
	}
	mustRun(t, spec, opts)
	// Resuming in an empty directory starts the run.
	opts.Dir, opts.Resume = t.TempDir(), true
	sameResult(t, mustRun(t, spec, opts), reference(t, spec, opts))
}

func TestResumeRefusesAnotherRun(t *testing.T) {
	spec := sweeptest.Noise()
	dir := t.TempDir()
	base := Options{Options: runner.Options{Seed: 1, Trials: 4, Workers: 1, Sets: []string{"x=1,2,4", "n=3"}}, Dir: dir}
	interrupt(t, spec, base, 2)
	cases := []struct {
		mod  func(*Options)
		want []string
	}{
		{func(o *Options) { o.Seed = 2 }, []string{"another run", "seed 1, not 2"}},
		{func(o *Options) { o.Trials = 5 }, []string{"trials 4, not 5"}},
		{func(o *Options) { o.Sets = []string{"x=1,2,4", "n=4"} }, []string{`parameter "n" = "3", not "4"`}},
		{func(o *Options) { o.Sets = []string{"x=1,2", "n=3"} }, []string{`parameter "x"`}},
		{func(o *Options) { o.Shard = runner.Shard{Index: 1, Count: 2} }, []string{"shard 0/1 of a run, not of shard 1/2", "own output directory"}},
		{func(o *Options) { o.Shard, o.Resume = runner.Shard{Index: 1, Count: 2}, false }, []string{"shard 0/1 of a run, not of shard 1/2"}},
		{func(o *Options) { o.Dir = "" }, []string{"Options.Dir"}},
	}
	for _, c := range cases {
		o := base
		o.Resume = true
		c.mod(&o)
		_, err := Run(context.Background(), spec, o)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("resume with %+v: error %v should mention %q", o, err, w)
			}
		}
	}
	// The same values written differently are the same run.
	o := base
	o.Resume, o.Sets = true, []string{"x=1e0, 2.0,4", "n=3"}
	mustRun(t, spec, o)
}

func TestJournalDamage(t *testing.T) {
	spec := sweeptest.Noise()
	opts := Options{Options: runner.Options{Seed: 1, Trials: 2, Workers: 1}, Resume: true}

	// A bad line before the last is corruption, not a torn write.
	opts.Dir = t.TempDir()
	interrupt(t, spec, opts, 3)
	lines := journalLines(t, opts.Dir, "noise")
	lines[1] = "{garbage}\n"
	os.WriteFile(Path(opts.Dir, "noise"), []byte(strings.Join(lines, "")), 0o644)
	if _, err := Run(context.Background(), spec, opts); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("corrupt line 2: %v", err)
	}

	// A journal without its identity cannot be resumed.
	opts.Dir = t.TempDir()
	interrupt(t, spec, opts, 2)
	os.Remove(IdentityPath(opts.Dir, "noise"))
	if _, err := Run(context.Background(), spec, opts); err == nil || !strings.Contains(err.Error(), "run.json") {
		t.Errorf("no identity: %v", err)
	}

	// A record of another sweep point, or a task twice, is refused (the
	// edited lines resealed with a valid checksum, to reach those checks);
	// an edit that is not resealed fails its checksum, and a line without
	// one does not pass in a format-2 journal.
	noSum := regexp.MustCompile(`,"sum":"[0-9a-f]+"}`)
	for name, edit := range map[string]func(string) string{
		"of the sweep is": func(l string) string { return reseal(strings.Replace(l, `"x":1,`, `"x":1.5,`, 1)) },
		"recorded twice":  func(l string) string { return l + l },
		"not in":          func(l string) string { return reseal(strings.Replace(l, `"scheme":"a"`, `"scheme":"zz"`, 1)) },
		"checksum mismatch": func(l string) string {
			return strings.Replace(l, `"value":`, `"value":1`, 1)
		},
		"record 1: no checksum": func(l string) string { return noSum.ReplaceAllString(l, "}") },
	} {
		opts.Dir = t.TempDir()
		interrupt(t, spec, opts, 2)
		lines := journalLines(t, opts.Dir, "noise")
		lines[0] = edit(lines[0])
		os.WriteFile(Path(opts.Dir, "noise"), []byte(strings.Join(lines, "")), 0o644)
		if _, err := Run(context.Background(), spec, opts); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestJournalLocked(t *testing.T) {
	spec := sweeptest.Noise()
	plan, err := runner.NewPlan(spec, runner.Options{Trials: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	j, _, _, _, err := open(plan, dir, runner.Shard{}, plan.Tasks, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if _, err := Run(context.Background(), spec, Options{Options: runner.Options{Trials: 1}, Dir: dir, Resume: true}); err == nil || !strings.Contains(err.Error(), "another wcmc process") {
		t.Errorf("second writer: %v", err)
	}
}

func TestTaskErrorKeepsFinishedTasks(t *testing.T) {
	spec := sweeptest.Noise()
	run := spec.Run
	spec.Run = func(t runner.Task) (runner.TaskOutput, error) {
		if t.Point == 2 && t.Trial == 1 {
			return runner.TaskOutput{}, errors.New("boom")
		}
		return run(t)
	}
	dir := t.TempDir()
	_, err := Run(context.Background(), spec, Options{Options: runner.Options{Trials: 2, Workers: 1}, Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "boom") || !strings.Contains(err.Error(), "5 of 6 tasks finished and are saved") {
		t.Fatalf("error %v", err)
	}
	if n := len(journalLines(t, dir, "noise")) - 1; n != 5 {
		t.Errorf("journal holds %d records, want 5", n)
	}
	var failed *Failed
	if !errors.As(err, &failed) || failed.Done != 5 || failed.Total != 6 || failed.Journal != Path(dir, "noise") {
		t.Errorf("error %#v, want a *Failed with 5 of 6 tasks in %s", err, Path(dir, "noise"))
	}
}

// TestFailedRunNamesNoRemovedFile: a run stopped before any task is saved
// (every task fails, as when the journal cannot be written at all) removes
// the journal, the identity and the directory it created, and its error
// says nothing was saved instead of naming the removed journal; a run that
// cannot even write its identity leaves no empty journal either.
func TestFailedRunNamesNoRemovedFile(t *testing.T) {
	spec := sweeptest.Noise()
	spec.Run = func(runner.Task) (runner.TaskOutput, error) { return runner.TaskOutput{}, errors.New("boom") }
	dir := filepath.Join(t.TempDir(), "out")
	_, err := Run(context.Background(), spec, Options{Options: runner.Options{Trials: 2, Workers: 1}, Dir: dir})
	var failed *Failed
	if !errors.As(err, &failed) || failed.Done != 0 || !strings.Contains(err.Error(), "boom") ||
		!strings.Contains(err.Error(), "none of the 6 tasks finished: nothing was saved") || strings.Contains(err.Error(), Path(dir, "noise")) {
		t.Errorf("error %q: want a *Failed saying nothing was saved, without naming the removed journal", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the directory the run created is left behind: %v", err)
	}

	dir = t.TempDir()
	if err := os.Mkdir(IdentityPath(dir, "noise"), 0o755); err != nil { // unreadable and unwritable as a file
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), sweeptest.Noise(), Options{Options: runner.Options{Trials: 2}, Dir: dir}); err == nil {
		t.Fatal("a run whose identity is a directory started")
	}
	if _, err := os.Stat(Path(dir, "noise")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a run that could not start left its journal: %v", err)
	}
}

func TestReadJournalTornAndCorrupt(t *testing.T) {
	good := `{"point":0,"x":1,"trial":0,"rows":[],"done":"2026-01-02T03:04:05Z"}` + "\n"
	cases := []struct {
		data          string
		records       int
		valid         int
		torn, wantErr bool
	}{
		{"", 0, 0, false, false},
		{good, 1, len(good), false, false},
		{good + good, 2, 2 * len(good), false, false},
		{good + good[:20], 1, len(good), true, false},                      // cut mid-line
		{good + strings.TrimSuffix(good, "\n"), 1, len(good), true, false}, // newline not written
		{good + "\x00\x00\x00", 1, len(good), true, false},                 // zero-filled tail
		{good + "{bad}\n", 1, len(good), true, false},                      // last line unparsable
		{"{bad}\n" + good, 0, 0, false, true},                              // corrupt middle
		{good + "\n" + good, 1, len(good), false, true},                    // empty middle line
		{`{"point":0,"x":1,"trial":0,"done":"2026-01-02T03:04:05Z","extra":1}` + "\n", 0, 0, true, false},
		{`{"point":0,"x":1,"trial":0}` + "\n", 0, 0, true, false}, // no time
	}
	for i, c := range cases {
		d, err := Read(strings.NewReader(c.data))
		if (err != nil) != c.wantErr {
			t.Errorf("case %d: err %v", i, err)
			continue
		}
		if err != nil {
			continue
		}
		if len(d.Records) != c.records || d.Valid != int64(c.valid) || (d.Torn != "") != c.torn {
			t.Errorf("case %d: %d records, valid %d, torn %q", i, len(d.Records), d.Valid, d.Torn)
		}
	}
}

func TestSessionsSkipTheGapsAndKeepTheirMachines(t *testing.T) {
	// A run started at 10:00 on machine A finished tasks until 10:05, died,
	// and was resumed at 12:00 on machine B until 12:03; records of an
	// older journal carry no session or machine and count from the run's
	// start.
	at := func(h, m int) time.Time { return time.Date(2026, 1, 1, h, m, 0, 0, time.UTC) }
	rec := func(began, done time.Time, machine string) Record {
		return Record{Began: began, Done: done, Machine: machine}
	}
	records := []Record{
		rec(at(12, 0), at(12, 3), "B"), rec(at(10, 0), at(10, 2), "A"), rec(at(10, 0), at(10, 5), "A"),
		rec(at(10, 0), at(10, 1), "A"), rec(at(12, 0), at(12, 1), "B"),
	}
	got := sessions(records, at(10, 0))
	want := []runner.Session{
		{Began: at(10, 0), Tasks: 3, Wall: 5 * time.Minute, Machine: "A"},
		{Began: at(12, 0), Tasks: 2, Wall: 3 * time.Minute, Machine: "B"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("two sessions: %+v, want %+v (in the order they began)", got, want)
	}
	if d := computingTime(got); d != 8*time.Minute {
		t.Errorf("computing time %v, want 8m (5m + 3m, not the 2h gap)", d)
	}
	legacy := []Record{rec(time.Time{}, at(10, 4), ""), rec(at(12, 0), at(12, 3), "B")}
	got = sessions(legacy, at(10, 0))
	want = []runner.Session{{Began: at(10, 0), Tasks: 1, Wall: 4 * time.Minute}, {Began: at(12, 0), Tasks: 1, Wall: 3 * time.Minute, Machine: "B"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("legacy records: %+v, want %+v", got, want)
	}
	if got := sessions(nil, at(10, 0)); len(got) != 0 || computingTime(got) != 0 {
		t.Errorf("no records: %+v", got)
	}
	// Shards at the same time count once: 10:00–10:05 and 10:02–10:09
	// overlap, 11:00–11:01 does not.
	shards := []runner.Session{{Began: at(11, 0), Wall: time.Minute}, {Began: at(10, 2), Wall: 7 * time.Minute}, {Began: at(10, 0), Wall: 5 * time.Minute}}
	if d := computingTime(shards); d != 10*time.Minute {
		t.Errorf("overlapping shards: %v, want 10m (10:00–10:09 and 11:00–11:01)", d)
	}
}

func TestShardsMergeToSingleRun(t *testing.T) {
	for _, spec := range []runner.Spec{infoSpec(), sweeptest.Walk()} {
		opts := Options{Options: runner.Options{Seed: 9, Trials: 4, Workers: 2}}
		want := reference(t, spec, opts)
		for _, count := range []int{1, 3, 5, 13} { // 13 > units: empty shards
			var dirs []string
			computed := 0 // shards that computed a task
			for i := range count {
				o := opts
				o.Dir, o.Shard, o.Machine = t.TempDir(), runner.Shard{Index: i, Count: count}, fmt.Sprint("machine ", i)
				res := mustRun(t, spec, o)
				if res.Shard != o.Shard {
					t.Errorf("result shard %v", res.Shard)
				}
				if len(res.Tasks) > 0 {
					computed++
				}
				dirs = append(dirs, o.Dir)
			}
			slices.Reverse(dirs) // order does not matter
			got, err := Merge([]runner.Spec{sweeptest.Noise(), spec}, dirs, MergeOptions{})
			if err != nil {
				t.Fatalf("%s %d shards: %v", spec.ID, count, err)
			}
			sameResult(t, got, want)
			if got.End.Before(got.Start) || got.Start.IsZero() {
				t.Errorf("merged times %v – %v", got.Start, got.End)
			}
			// Every shard that computed a task is a session of the merged
			// run, with its machine; the wall time is theirs (one after
			// another here).
			tasks, machines := 0, map[string]bool{}
			for i, s := range got.Sessions {
				tasks += s.Tasks
				machines[s.Machine] = true
				if s.Tasks == 0 || !strings.HasPrefix(s.Machine, "machine ") || s.Workers != 2 || (i > 0 && s.Began.Before(got.Sessions[i-1].Began)) {
					t.Errorf("%s %d shards: session %d %+v", spec.ID, count, i, s)
				}
			}
			if tasks != len(got.Tasks) || len(got.Sessions) != computed || len(machines) != computed {
				t.Errorf("%s %d shards: %d sessions on %d machines hold %d tasks, want %d holding %d", spec.ID, count, len(got.Sessions), len(machines), tasks, computed, len(got.Tasks))
			}
			if got.Wall != computingTime(got.Sessions) || got.Wall > got.End.Sub(got.Start) {
				t.Errorf("%s %d shards: wall %v, sessions' %v, first start to last end %v", spec.ID, count, got.Wall, computingTime(got.Sessions), got.End.Sub(got.Start))
			}
		}
	}
}

func TestNaNRefused(t *testing.T) {
	spec := sweeptest.Noise()
	spec.Run = func(t runner.Task) (runner.TaskOutput, error) {
		v := 1.0
		if t.X == 4 && t.Trial == 1 {
			v = math.NaN()
		}
		return runner.TaskOutput{Rows: []runner.Row{{Scheme: "b", Metric: "aux", Value: v}}}, nil
	}
	_, err := Run(context.Background(), spec, Options{Options: runner.Options{Trials: 2}, Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "x=4 trial 1") || !strings.Contains(err.Error(), `scheme "b"`) || !strings.Contains(err.Error(), "aux = NaN") {
		t.Errorf("error %v should name the task, scheme and metric", err)
	}
}

// reseal replaces the checksum of an edited journal line (with or
// without its newline) by the checksum of its new content.
func reseal(line string) string {
	text, nl := strings.CutSuffix(line, "\n")
	i := strings.LastIndex(text, `,"sum":"`)
	body := text[:i] + "}"
	out := text[:i] + sumSuffix(lineSum([]byte(body)))
	if nl {
		out += "\n"
	}
	return out
}

// TestJournalLeftovers: a run whose setup fails leaves no empty journal,
// identity or directory behind (it left both files before); a shard
// without a directory is refused (its tasks would be lost); the temporary
// files of a killed writer of the run's files are removed at the next
// start, and only those.
func TestJournalLeftovers(t *testing.T) {
	spec := sweeptest.Noise()
	spec.Setup = func(runner.Values, *rand.Rand) (any, error) { return nil, errors.New("no data") }
	root := t.TempDir()
	for _, dir := range []string{filepath.Join(root, "new", "deep"), root} {
		_, err := Run(context.Background(), spec, Options{Options: runner.Options{Trials: 1}, Dir: dir})
		if err == nil || !strings.Contains(err.Error(), "no data") {
			t.Fatalf("failing setup: %v", err)
		}
		for _, p := range []string{Path(dir, "noise"), IdentityPath(dir, "noise")} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("a failed setup left %s", p)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(root, "new")); err == nil {
		t.Error("a failed setup left the directory it created")
	}
	if _, err := os.Stat(root); err != nil {
		t.Error("a failed setup removed a directory it did not create")
	}

	_, err := Run(context.Background(), sweeptest.Noise(), Options{Options: runner.Options{Trials: 1, Shard: runner.Shard{Index: 0, Count: 2}}})
	if err == nil || !strings.Contains(err.Error(), "needs a directory") {
		t.Errorf("shard without a directory: %v", err)
	}

	dir := t.TempDir()
	stale := []string{".noise.csv.tmp123", ".noise.png.tmp9", ".noise.run.json.tmp4"}
	keep := []string{".noise-2.csv.tmp5", ".other.csv.tmp6", "noise.csv.tmp7"}
	for _, n := range append(slices.Clone(stale), keep...) {
		os.WriteFile(filepath.Join(dir, n), []byte("half"), 0o644)
	}
	var log strings.Builder
	mustRun(t, sweeptest.Noise(), Options{Options: runner.Options{Trials: 1, Progress: &log}, Dir: dir})
	for _, n := range stale {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			t.Errorf("stale %s not removed", n)
		}
		if !strings.Contains(log.String(), "removed "+filepath.Join(dir, n)) {
			t.Errorf("log does not name %s:\n%s", n, log.String())
		}
	}
	for _, n := range keep {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s, not a temporary file of this run's, was removed", n)
		}
	}
}

// TestJournalResumeOtherVersion: a journal started by another wcmc version
// is not resumed (it was, with a warning), unless forced.
func TestJournalResumeOtherVersion(t *testing.T) {
	spec := sweeptest.Noise()
	opts := Options{Options: runner.Options{Seed: 1, Trials: 3, Workers: 1}, Dir: t.TempDir()}
	want := reference(t, spec, opts)
	interrupt(t, spec, opts, 2)
	setIdentity(t, opts.Dir, `"version": "`+runner.Version+`"`, `"version": "v0.9"`)
	opts.Resume = true
	if _, err := Run(context.Background(), spec, opts); err == nil || !strings.Contains(err.Error(), "cannot resume: tasks computed by wcmc v0.9") {
		t.Fatalf("resume of another version: %v", err)
	}
	var log strings.Builder
	opts.Force, opts.Progress = true, &log
	sameResult(t, mustRun(t, spec, opts), want)
	if !strings.Contains(log.String(), "warning: resuming anyway") {
		t.Errorf("no warning:\n%s", log.String())
	}
}

// A journal holding no finished task (its session was killed before one
// finished) is resumed as a fresh start: the run's start and wall time are
// this session's, not counted from the killed session's start a day ago.
func TestResumeWithNoFinishedTaskStartsNow(t *testing.T) {
	spec := infoSpec()
	dir := t.TempDir()
	opts := Options{Options: runner.Options{Seed: 5, Trials: 2, Workers: 2}, Dir: dir}
	p, err := runner.NewPlan(spec, opts.Options)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := p.ShardTasks(opts.Shard)
	if err != nil {
		t.Fatal(err)
	}
	killed := time.Now().UTC().Add(-30 * time.Hour)
	if err := writeIdentity(IdentityPath(dir, spec.ID), IdentityOf(p, opts.Shard, len(keys), killed)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(Path(dir, spec.ID), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	opts.Resume = true
	got := mustRun(t, spec, opts)
	if !got.Start.After(killed.Add(29*time.Hour)) || got.Wall <= 0 || got.Wall > time.Hour {
		t.Errorf("start %v, wall %v: counted from the killed session's start %v", got.Start, got.Wall, killed)
	}
}

// TestDataFolderMoved: a run whose input data moved to another folder
// between sessions resumes, and shards that read the same data from
// folders at other paths merge, into the uninterrupted result; other data
// is another run.
func TestDataFolderMoved(t *testing.T) {
	spec := sweeptest.WithData(sweeptest.Noise())
	a, moved, other := sweeptest.DataFolder(t, "mnist"), sweeptest.DataFolder(t, "mnist"), sweeptest.DataFolder(t, "fashion")
	opts := func(dir, data string) Options {
		return Options{Options: runner.Options{Seed: 5, Trials: 3, Workers: 1, Sets: []string{"data=" + data}}, Dir: dir}
	}
	want := reference(t, spec, opts("", a))

	dir := t.TempDir()
	interrupt(t, spec, opts(dir, a), 2)
	o := opts(dir, other)
	o.Resume = true
	if _, err := Run(context.Background(), spec, o); err == nil || !strings.Contains(err.Error(), `parameter "data"`) {
		t.Errorf("resume on other data: error %v, want one naming parameter \"data\"", err)
	}
	o = opts(dir, moved)
	o.Resume = true
	got := mustRun(t, spec, o)
	sameResult(t, got, want)
	if got.InputDigests["data"] != "content:mnist" {
		t.Errorf("resumed result's digests %v", got.InputDigests)
	}

	// The first shard's folder is gone by the merge (it was on another
	// machine): the shards' recorded digests decide.
	shards := func(second string) []string {
		first := sweeptest.DataFolder(t, "mnist")
		var dirs []string
		for i, data := range []string{first, second} {
			o := opts(t.TempDir(), data)
			o.Shard = runner.Shard{Index: i, Count: 2}
			mustRun(t, spec, o)
			dirs = append(dirs, o.Dir)
		}
		if err := os.RemoveAll(first); err != nil {
			t.Fatal(err)
		}
		return dirs
	}
	merged, err := Merge([]runner.Spec{spec}, shards(moved), MergeOptions{})
	if err != nil {
		t.Fatalf("shards on the same data in two folders: %v", err)
	}
	sameResult(t, merged, want)
	if merged.InputDigests["data"] != "content:mnist" {
		t.Errorf("merged result's digests %v", merged.InputDigests)
	}
	if _, err := Merge([]runner.Spec{spec}, shards(other), MergeOptions{}); err == nil || !strings.Contains(err.Error(), `parameter "data"`) {
		t.Errorf("shards on other data: error %v, want one naming parameter \"data\"", err)
	}
}

// TestDataChangedInPlace: data replaced in the same folder between
// sessions, or read from one folder by shards at different times, is
// another run: a resume and a merge compare the recorded digest even when
// the folder's path is the same, and name both digests.
func TestDataChangedInPlace(t *testing.T) {
	spec := sweeptest.WithData(sweeptest.Noise())
	data := sweeptest.DataFolder(t, "mnist")
	replace := func(content string) {
		if err := os.WriteFile(filepath.Join(data, "file"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts := func(dir string) Options {
		return Options{Options: runner.Options{Seed: 5, Trials: 3, Workers: 1, Sets: []string{"data=" + data}}, Dir: dir}
	}
	dir := t.TempDir()
	interrupt(t, spec, opts(dir), 2)
	replace("fashion")
	o := opts(dir)
	o.Resume = true
	_, err := Run(context.Background(), spec, o)
	for _, want := range []string{`parameter "data"`, "content:mnist", "content:fashion"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("resume on data replaced in place: error %v, want one naming %q", err, want)
		}
	}

	replace("mnist")
	var dirs []string
	for i := range 2 {
		if i == 1 {
			replace("fashion")
		}
		o := opts(t.TempDir())
		o.Shard = runner.Shard{Index: i, Count: 2}
		mustRun(t, spec, o)
		dirs = append(dirs, o.Dir)
	}
	_, err = Merge([]runner.Spec{spec}, dirs, MergeOptions{})
	for _, want := range []string{`parameter "data"`, "content:mnist", "content:fashion"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("merge of shards on two data sets in one folder: error %v, want one naming %q", err, want)
		}
	}
}

func TestResumingAFormat2JournalMakesItCurrent(t *testing.T) {
	// Lines naming their machine would read as damaged to a wcmc of format
	// 2: resuming such a journal rewrites its identity first, so that the
	// older wcmc refuses it by its format instead.
	spec := sweeptest.Noise()
	dir := t.TempDir()
	opts := Options{Options: runner.Options{Seed: 2, Trials: 4, Workers: 1, Machine: "M"}, Dir: dir}
	want := reference(t, spec, opts)
	interrupt(t, spec, opts, 2)
	setIdentity(t, dir, fmt.Sprintf(`"format": %d`, Format), `"format": 2`)
	opts.Resume = true
	sameResult(t, mustRun(t, spec, opts), want)
	id, err := ReadIdentity(IdentityPath(dir, "noise"))
	if err != nil || id.Format != Format || id.Sum == "" {
		t.Errorf("identity after resuming: format %d, %v; want %d", id.Format, err, Format)
	}
}

func TestJournalLinkIsRefused(t *testing.T) {
	spec := sweeptest.Noise()
	outside := t.TempDir()
	target := filepath.Join(outside, "one-line.txt")
	os.WriteFile(target, []byte("one line\n"), 0o644)
	for name, link := range map[string]func(dir string) (string, string){
		"journal":          func(dir string) (string, string) { return Path(dir, "noise"), target },
		"dangling journal": func(dir string) (string, string) { return Path(dir, "noise"), filepath.Join(outside, "absent") },
		"identity":         func(dir string) (string, string) { return IdentityPath(dir, "noise"), target },
	} {
		dir := t.TempDir()
		path, to := link(dir)
		if err := os.Symlink(to, path); err != nil {
			t.Skip(err)
		}
		_, err := Run(context.Background(), spec, Options{Options: runner.Options{Seed: 1, Trials: 2, Workers: 1}, Dir: dir})
		if !errors.Is(err, atomicfile.ErrLink) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming the link", name, err)
		}
	}
	if got, _ := os.ReadFile(target); string(got) != "one line\n" {
		t.Errorf("the linked file now holds %q", got)
	}
	if _, err := os.Lstat(filepath.Join(outside, "absent")); err == nil {
		t.Error("a file was created through the dangling link")
	}
}
