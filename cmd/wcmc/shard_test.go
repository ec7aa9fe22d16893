package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/internal/machine"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/journal"
)

func TestResolveShard(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	cases := []struct {
		name     string
		flag     string
		count    int
		countSet bool
		getenv   func(string) string
		want     runner.Shard
		source   string // substring; "" for an unsharded run
		err      string // substring of the error
	}{
		{name: "none", getenv: env()},
		{name: "flag", flag: "2/5", getenv: env("JOB_COMPLETION_INDEX", "1", "WCMC_SHARD_COUNT", "3"), want: runner.Shard{Index: 2, Count: 5}, source: "--shard"},
		{name: "flag whole", flag: "0/1", getenv: env("SLURM_ARRAY_TASK_ID", "4", "SLURM_ARRAY_TASK_COUNT", "8"), want: runner.Shard{Index: 0, Count: 1}},
		{name: "flag bad", flag: "5/5", getenv: env(), err: "--shard"},
		{name: "flag and count", flag: "1/4", count: 4, countSet: true, getenv: env(), err: "already gives the count"},
		{name: "k8s env count", getenv: env("JOB_COMPLETION_INDEX", "3", "WCMC_SHARD_COUNT", "4"), want: runner.Shard{Index: 3, Count: 4}, source: "JOB_COMPLETION_INDEX=3 and WCMC_SHARD_COUNT=4 (Kubernetes Indexed Job)"},
		{name: "k8s flag count", count: 6, countSet: true, getenv: env("JOB_COMPLETION_INDEX", "0", "WCMC_SHARD_COUNT", "4"), want: runner.Shard{Index: 0, Count: 6}, source: "--shard-count"},
		{name: "k8s no count", getenv: env("JOB_COMPLETION_INDEX", "3"), err: "--shard-count N or set WCMC_SHARD_COUNT"},
		{name: "k8s index too big", getenv: env("JOB_COMPLETION_INDEX", "4", "WCMC_SHARD_COUNT", "4"), err: "JOB_COMPLETION_INDEX=4"},
		{name: "k8s bad index", getenv: env("JOB_COMPLETION_INDEX", "x"), err: `JOB_COMPLETION_INDEX="x" is not an integer`},
		{name: "k8s bad count", getenv: env("JOB_COMPLETION_INDEX", "0", "WCMC_SHARD_COUNT", "many"), err: "WCMC_SHARD_COUNT"},
		{name: "slurm", getenv: env("SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_COUNT", "3"), want: runner.Shard{Index: 2, Count: 3}, source: "Slurm job array"},
		{name: "slurm min", getenv: env("SLURM_ARRAY_TASK_ID", "5", "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_COUNT", "5"), want: runner.Shard{Index: 4, Count: 5}, source: "SLURM_ARRAY_TASK_MIN=1"},
		{name: "slurm step", getenv: env("SLURM_ARRAY_TASK_ID", "6", "SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_STEP", "2", "SLURM_ARRAY_TASK_COUNT", "4"), want: runner.Shard{Index: 3, Count: 4}, source: "step 2"},
		{name: "slurm off step", getenv: env("SLURM_ARRAY_TASK_ID", "5", "SLURM_ARRAY_TASK_STEP", "2", "SLURM_ARRAY_TASK_COUNT", "4"), err: "not a range"},
		{name: "slurm list", getenv: env("SLURM_ARRAY_TASK_ID", "7", "SLURM_ARRAY_TASK_COUNT", "3"), err: "--array=0-2"},
		{name: "slurm no count", getenv: env("SLURM_ARRAY_TASK_ID", "1"), err: "SLURM_ARRAY_TASK_COUNT"},
		{name: "k8s before slurm", getenv: env("JOB_COMPLETION_INDEX", "1", "WCMC_SHARD_COUNT", "2", "SLURM_ARRAY_TASK_ID", "0", "SLURM_ARRAY_TASK_COUNT", "9"), want: runner.Shard{Index: 1, Count: 2}, source: "Kubernetes"},
		{name: "count alone", count: 3, countSet: true, getenv: env(), err: "--shard-count needs"},
		{name: "count zero", count: 0, countSet: true, getenv: env("JOB_COMPLETION_INDEX", "0"), err: "≥ 1"},
	}
	for _, c := range cases {
		s, source, err := resolveShard(c.flag, c.count, c.countSet, c.getenv)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || s != c.want || !strings.Contains(source, c.source) || (c.source == "") != (source == "") {
			t.Errorf("%s: %v, %q, %v; want %v, %q", c.name, s, source, err, c.want, c.source)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"gauss-snr": "gauss-snr", "snr_db=-10,5,30": "snr_db=-10,5,30", "a b": "'a b'", "it's": `'it'\''s'`, "": "''", "$HOME": "'$HOME'"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// stopSpec is a toy sweep (4 points × trials) that cancels the run's
// context at point 1, trial 1, as a SIGINT would.
func stopSpec(cancel func()) runner.Spec {
	return runner.Spec{
		ID: "toy", X: "x", Metrics: []string{"m"}, Schemes: []string{"s"}, Trials: 3,
		Params: []runner.Param{{Name: "x", Kind: runner.Float, Default: "1,2,3,4"}, {Name: "label", Kind: runner.String, Default: "a"}},
		Run: func(t runner.Task) (runner.TaskOutput, error) {
			if t.Point == 1 && t.Trial == 1 && cancel != nil {
				cancel()
			}
			return runner.TaskOutput{Rows: []runner.Row{{Scheme: "s", Metric: "m", Value: t.X + t.Rng.Float64()}}}, nil
		},
	}
}

func noSchedulerEnv(t *testing.T) {
	for _, k := range []string{"JOB_COMPLETION_INDEX", "WCMC_SHARD_COUNT", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_STEP"} {
		t.Setenv(k, "")
	}
}

func TestRunInterruptAndResumeInProcess(t *testing.T) {
	noSchedulerEnv(t)
	dir := filepath.Join(t.TempDir(), "out dir") // a space: the printed command quotes it
	ref := t.TempDir()
	args := []string{"run", "toy", "--workers", "1", "--set", "label=it's", "--out", dir}
	var stdout, stderr bytes.Buffer
	if code := execute(context.Background(), []runner.Spec{stopSpec(nil)}, []string{"run", "toy", "--workers", "1", "--set", "label=it's", "--out", ref}, &stdout, &stderr); code != 0 {
		t.Fatalf("reference: %s", stderr.String())
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr.Reset()
	if code := execute(ctx, []runner.Spec{stopSpec(cancel)}, args, &stdout, &stderr); code == 0 {
		t.Fatal("an interrupted run exited 0")
	}
	want := `wcmc run toy --set 'label=it'\''s' --out '` + dir + `' --workers 1 --resume`
	if !strings.Contains(stderr.String(), "resume with:\n  "+want+"\n") {
		t.Fatalf("stderr lacks the resume command %s:\n%s", want, stderr.String())
	}
	// A fresh run refuses and says how to resume.
	stderr.Reset()
	if code := execute(context.Background(), []runner.Spec{stopSpec(nil)}, args, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "finished tasks") {
		t.Fatalf("fresh run over the journal:\n%s", stderr.String())
	}
	stderr.Reset()
	if code := execute(context.Background(), []runner.Spec{stopSpec(nil)}, append(args, "--resume"), &stdout, &stderr); code != 0 {
		t.Fatalf("resume: %s", stderr.String())
	}
	for _, name := range []string{"toy.csv", "toy.summary.csv"} {
		a, _ := os.ReadFile(filepath.Join(dir, name))
		b, _ := os.ReadFile(filepath.Join(ref, name))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs after the resume", name)
		}
	}
	if _, err := os.Stat(journal.Path(dir, "toy")); err == nil {
		t.Error("journal left after the final files were written")
	}
}

func TestMergeCommand(t *testing.T) {
	noSchedulerEnv(t)
	specs := []runner.Spec{stopSpec(nil)}
	root := t.TempDir()
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := execute(context.Background(), specs, args, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	// A finished run and a merge say how long the result took and where.
	here := ", on " + machine.Describe() + ", "
	if code, out, e := run("run", "toy", "--out", filepath.Join(root, "ref")); code != 0 || !strings.Contains(out, "toy: wall time ") || !strings.Contains(out, here) {
		t.Fatalf("run: exit %d, no wall time and machine %q in\n%s%s", code, here, out, e)
	}
	var dirs []string
	for _, s := range []string{"0/2", "1/2"} {
		d := filepath.Join(root, "s"+s[:1])
		code, out, e := run("run", "toy", "--shard", s, "--out", d)
		if code != 0 || !strings.Contains(out, "shard "+s+" of toy: 6 tasks saved") || !strings.Contains(e, "wcmc: shard "+s+", from --shard") {
			t.Fatalf("shard %s: exit %d\n%s%s", s, code, out, e)
		}
		dirs = append(dirs, d)
	}
	if code, _, e := run("merge", dirs[0]); code == 0 || !strings.Contains(e, "--out") {
		t.Errorf("merge without --out: %s", e)
	}
	if code, _, e := run(append([]string{"merge", "--out", filepath.Join(root, "m1")}, dirs[0])...); code == 0 || !strings.Contains(e, "shard 1/2 (6 tasks): no directory given") {
		t.Errorf("merge of one of two shards: %s", e)
	}
	code, out, e := run(append([]string{"merge", "--out", filepath.Join(root, "m")}, dirs...)...)
	if code != 0 || !strings.Contains(out, "merged 2 directories: 12 tasks of toy, wall time ") || !strings.Contains(out, here) {
		t.Fatalf("merge: exit %d\n%s%s", code, out, e)
	}
	for _, name := range []string{"toy.csv", "toy.summary.csv"} {
		a, _ := os.ReadFile(filepath.Join(root, "m", name))
		b, _ := os.ReadFile(filepath.Join(root, "ref", name))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("merged %s differs from the single run's", name)
		}
	}
	if strings.Contains(e, "different arithmetic") {
		t.Errorf("merge of shards computed on one machine says they differ in arithmetic:\n%s", e)
	}
	// A shard computed under another BLAS (the journal's own writer, with
	// another machine line): the merge says so.
	elsewhere := filepath.Join(root, "s1-elsewhere")
	var o journal.Options
	o.Dir, o.Shard, o.Seed = elsewhere, runner.Shard{Index: 1, Count: 2}, 1 // as wcmc run --shard 1/2
	o.Machine = "Elsewhere, 4 CPUs, linux/arm64, BLAS another BLAS"
	if _, err := journal.Run(context.Background(), specs[0], o); err != nil {
		t.Fatalf("shard 1/2 elsewhere: %v", err)
	}
	code, _, e = run("merge", "--out", filepath.Join(root, "m2"), dirs[0], elsewhere)
	if want := "note: toy: computed with different arithmetic (" + machine.Arithmetic(machine.Describe()) + "; another BLAS, linux/arm64): "; code != 0 || !strings.Contains(e, want) {
		t.Errorf("merge of shards computed under two BLAS: exit %d, no %q in\n%s", code, want, e)
	}
	if code, _, e := run("run", "toy", "--shard", "2/2"); code == 0 || !strings.Contains(e, "0..1") {
		t.Errorf("--shard 2/2: %s", e)
	}
}

// TestMergeRemovesStaleTemporaries: a merge killed while writing left
// .ID.*.tmpNNN files in --out that no later merge removed; the next merge
// removes those of the files it writes, says so, and leaves others alone.
func TestMergeRemovesStaleTemporaries(t *testing.T) {
	noSchedulerEnv(t)
	specs := []runner.Spec{stopSpec(nil)}
	root := t.TempDir()
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := execute(context.Background(), specs, args, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	var dirs []string
	for _, s := range []string{"0/2", "1/2"} {
		d := filepath.Join(root, "s"+s[:1])
		if code, out, e := run("run", "toy", "--shard", s, "--out", d); code != 0 {
			t.Fatalf("shard %s: exit %d\n%s%s", s, code, out, e)
		}
		dirs = append(dirs, d)
	}
	m := filepath.Join(root, "m")
	if err := os.MkdirAll(m, 0o755); err != nil {
		t.Fatal(err)
	}
	stale := []string{".toy.csv.tmp123", ".toy.summary.csv.tmp45", ".toy.json.tmp6", ".toy.png.tmp789"}
	keep := []string{".other.csv.tmp1", ".toy.run.json.tmp2", "toy.notes.txt"}
	for _, n := range append(append([]string{}, stale...), keep...) {
		writeText(t, filepath.Join(m, n), "partial")
	}
	code, out, e := run(append([]string{"merge", "--out", m}, dirs...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d\n%s%s", code, out, e)
	}
	for _, n := range stale {
		if _, err := os.Lstat(filepath.Join(m, n)); err == nil {
			t.Errorf("stale %s left in place", n)
		}
		if !strings.Contains(e, "removed "+filepath.Join(m, n)+", left by an earlier process killed while writing it") {
			t.Errorf("merge does not say it removed %s:\n%s", n, e)
		}
	}
	for _, n := range keep {
		if _, err := os.Lstat(filepath.Join(m, n)); err != nil {
			t.Errorf("%s, not a file merge writes, was removed", n)
		}
	}
}
