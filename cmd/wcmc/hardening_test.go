package main

// Regression tests of issue 18's bad-input audit: each case failed (lost
// results, overwrote an input, crashed or answered wrongly) before.

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/internal/memlimit"
	"github.com/wcmc-project/wcmc/runner"
)

// wantError fails unless err mentions every one of want.
func wantError(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q should mention %q", what, err, w)
		}
	}
}

// TestRunRefusesBeforeWork: `run --out ""` (an unset $DIR) computed and
// then claimed "6 tasks saved in gauss-snr.journal.jsonl" with no file
// anywhere, or failed on `mkdir :` after the work; `--shard 0/0` (or a
// count of 0 from the environment) ran the whole sweep; `--set K=1_0` was
// taken as 10 and recorded as "1_0". All are refused before any work, and
// nothing is written.
func TestRunRefusesBeforeWork(t *testing.T) {
	noSchedulerEnv(t)
	t.Chdir(t.TempDir())
	for _, c := range []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"run", "toy", "--out", "", "--shard", "0/2"}, nil, "--out is empty"},
		{[]string{"run", "toy", "--out", ""}, nil, "--out is empty"},
		{[]string{"run", "toy", "--shard", "0/0", "--out", "o"}, nil, `shard "0/0": the count n must be ≥ 1`},
		{[]string{"run", "toy", "--out", "o"}, []string{"JOB_COMPLETION_INDEX", "0", "WCMC_SHARD_COUNT", "0"}, "WCMC_SHARD_COUNT=0: the number of shards must be ≥ 1"},
		{[]string{"run", "toy", "--out", "o"}, []string{"SLURM_ARRAY_TASK_ID", "0", "SLURM_ARRAY_TASK_COUNT", "0"}, "SLURM_ARRAY_TASK_COUNT=0: the number of shards must be ≥ 1"},
		{[]string{"run", "toy", "--set", "k=1_0", "--out", "o"}, nil, `parameter "k": "1_0" is not a number`},
		{[]string{"run", "toy", "--set", "x=1,2_0", "--out", "o"}, nil, `"2_0" is not a number`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			for i := 0; i < len(c.env); i += 2 {
				t.Setenv(c.env[i], c.env[i+1])
			}
			code, stdout, stderr := runCLI(t, c.args...)
			if code == 0 || !strings.Contains(stderr, c.want) || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want a refusal mentioning %q", code, stdout, stderr, c.want)
			}
			if entries, _ := os.ReadDir("."); len(entries) != 0 {
				t.Errorf("files written: %v", entries)
			}
		})
	}
}

// TestStepsRefuseInputAsOutput: `evaluate --reference reference.npy --out
// reference.npy` turned the reference into CSV text, and aggregate wrote
// onto its --data or into the signals of --rx; an output that is an input
// (by path, through a symbolic link, or a hard link) is now refused before
// any work, and the input is unchanged. The files evaluate reads beside
// the reference (its summary and sampler record) are inputs too.
func TestStepsRefuseInputAsOutput(t *testing.T) {
	dir := t.TempDir()
	stepsFixture(t, dir)
	p := func(n string) string { return filepath.Join(dir, n) }
	data := p("data.csv")
	b, _ := os.ReadFile(stepsData)
	writeText(t, data, string(b))
	if err := os.Symlink(p("reference.npy"), p("ref-link.npy")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(p("rx-noma/received.npy"), p("hard.npy")); err != nil {
		t.Fatal(err)
	}
	inputs := []string{p("reference.npy"), p("reference.summary.csv"), p("reference.sampler.json"), data, p("rx-noma/received.npy"), p("rx-noma/link.json"), p("rx-oma/received-2.npy"), p("samples/samples-1.npy"), p("shards/shard-1.csv")}
	before := map[string][]byte{}
	for _, f := range inputs {
		before[f], _ = os.ReadFile(f)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"evaluate", "--reference", p("reference.npy"), "--out", p("reference.npy"), p("samples/samples-1.npy")}, []string{"would overwrite the input " + p("reference.npy")}},
		{[]string{"evaluate", "--reference", p("reference.npy"), "--out", p("ref-link.npy"), p("samples/samples-1.npy")}, []string{"output " + p("ref-link.npy"), "would overwrite the input"}},
		{[]string{"evaluate", "--reference", p("reference.npy"), "--out", p("samples/../samples/samples-1.npy"), p("samples/samples-1.npy")}, []string{"would overwrite the input"}},
		{[]string{"evaluate", "--reference", p("reference.npy"), "--out", "", p("samples/samples-1.npy")}, []string{"--out is empty"}},
		{[]string{"evaluate", "--allow-unconverged-reference", "--reference", p("reference.npy"), "--out", p("reference.summary.csv"), p("samples/samples-1.npy")}, []string{"would overwrite the input " + p("reference.summary.csv")}},
		{[]string{"evaluate", "--allow-unconverged-reference", "--reference", p("reference.npy"), "--out", p("reference.sampler.json"), p("samples/samples-1.npy")}, []string{"would overwrite the input " + p("reference.sampler.json")}},
		{[]string{"aggregate", "--rx", p("rx-noma"), "--data", data, "--out", data}, []string{"would overwrite the input " + data}},
		{[]string{"aggregate", "--rx", p("rx-noma"), "--scheme", "wgcmc", "--out", p("rx-noma/received.npy")}, []string{"would overwrite the input " + p("rx-noma/received.npy")}},
		{[]string{"aggregate", "--rx", p("rx-noma"), "--scheme", "wgcmc", "--out", p("rx-noma/link.json")}, []string{"would overwrite the input"}},
		{[]string{"aggregate", "--rx", p("rx-noma"), "--scheme", "wgcmc", "--out", p("hard.npy")}, []string{"output " + p("hard.npy"), "would overwrite the input"}},
		{[]string{"aggregate", "--rx", p("rx-oma/link.json"), "--scheme", "wgcmc", "--out", p("rx-oma/received-2.npy")}, []string{"would overwrite the input"}},
		{[]string{"aggregate", "--rx", p("rx-noma"), "--scheme", "wgcmc", "--out", p("rx-noma")}, []string{"is a directory"}},
		{[]string{"aggregate", "--scheme", "noiseless", "--out", p("samples/samples-1.npy"), p("samples/samples-1.npy"), p("samples/samples-2.npy")}, []string{"would overwrite the input"}},
		{[]string{"transmit", "--out", p("samples"), "--access", "noma", p("samples/received.npy"), p("samples/samples-2.npy")}, nil},
		{[]string{"partition", "--data", p("shards/shard-1.csv"), "--K", "2", "--out", p("shards")}, []string{"would overwrite the input " + p("shards/shard-1.csv")}},
		{[]string{"partition", "--data", data, "--K", "2", "--out", ""}, []string{"--out is empty"}},
	} {
		if c.args[0] == "transmit" {
			// A sample file named like the signal file transmit writes.
			writeNPY(t, p("samples/received.npy"), 30, 3, nil)
			c.want = []string{"output " + p("samples/received.npy"), "would overwrite the input"}
		}
		_, err := runSteps(c.args...)
		wantError(t, strings.Join(c.args[:2], " "), err, c.want...)
	}
	for f, b := range before {
		if now, _ := os.ReadFile(f); !bytes.Equal(now, b) {
			t.Errorf("input %s changed", f)
		}
	}
	assertNoTemp(t, dir)
}

// TestStepsRefuseAbsurdSizes: `transmit --repetition 100000` crashed out of
// memory and `--repetition 1400` (m_r above the experiments' 4096) ran on;
// `run gauss-snr --set T=1e11` and `run probit-snr --set N=/ref_samples=/
// n_test=1e11` crashed with a Go stack trace. They are refused with the
// size and the memory it needs.
func TestStepsRefuseAbsurdSizes(t *testing.T) {
	t.Setenv(memlimit.Env, "4G")
	noSchedulerEnv(t)
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	s1 := writeNPY(t, p("samples/samples-1.npy"), 30, 3, nil)
	s2 := writeNPY(t, p("samples/samples-2.npy"), 30, 3, nil)
	_, err := runSteps("transmit", "--repetition", "100000", "--out", p("rx"), s1, s2)
	wantError(t, "repetition 100000", err, "--repetition 100000 with d = 3", "m_r = l·d = 300000", "more than 4096")
	_, err = runSteps("transmit", "--repetition", "1400", "--out", p("rx"), s1, s2)
	wantError(t, "repetition 1400", err, "m_r = l·d = 4200", "more than 4096")
	big := writeNPY(t, p("big/samples-1.npy"), 1, 3, nil)
	t.Setenv(memlimit.Env, "500")
	_, err = runSteps("transmit", "--out", p("rx"), big)
	wantError(t, "memory", err, "transmit: 1 signal stream(s) of S×m_r = 1×6", "needs about", "more than the 500 bytes available", memlimit.Env+"=500")
	t.Setenv(memlimit.Env, "4G")

	for _, c := range []struct{ id, set, want string }{
		{"gauss-snr", "T=1e11", "T = 1e11"},
		{"probit-snr", "N=1e11", "N = 1e11"},
		{"probit-snr", "ref_samples=1e11", "ref_samples = 1e11"},
		{"probit-snr", "n_test=1e11", "n_test = 1e11"},
	} {
		code, _, stderr := reproRun(t, "run", c.id, "--quick", "--set", c.set, "--out", p("run"))
		if code == 0 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "needs about") || !strings.Contains(stderr, "more than the 4 GiB available") {
			t.Errorf("run %s --set %s: exit %d\n%s", c.id, c.set, code, stderr)
		}
	}
	if _, err := os.Stat(p("run")); err == nil {
		t.Error("a refused run created its output directory")
	}
}

// TestTransmitChecksWhatExperimentsCheck: `--snr 1e6` wrote "N0": 0, which
// aggregation then used; `--snr -1e6` failed with "json: unsupported value:
// +Inf"; samples of 1e154 or denormals were "all zero"; covariates of
// 1e308 gave "matrix singular". Each now names the real problem.
func TestTransmitChecksWhatExperimentsCheck(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	s1 := writeNPY(t, p("samples/samples-1.npy"), 30, 3, nil)
	s2 := writeNPY(t, p("samples/samples-2.npy"), 30, 3, nil)
	scaled := func(name string, c float64) string {
		return writeNPY(t, p(name), 30, 3, func(m *mat.Dense) { m.Scale(c, m) })
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--snr", "1e6", s1, s2}, []string{"--snr 1e+06 dB: must be in [-100, 100] dB", "N0"}},
		{[]string{"--snr", "-1e6", s1, s2}, []string{"--snr -1e+06 dB: must be in [-100, 100] dB"}},
		{[]string{"--power", "1e-300", s1, s2}, []string{"--power 1e-300: must be in [1e-12, 1e+12]"}},
		{[]string{s1, scaled("huge/samples-2.npy", 1e154)}, []string{"worker 2: samples too large (largest |θ| = ", "rescale"}},
		{[]string{scaled("tiny/samples-1.npy", 1e-320), s2}, []string{"worker 1: samples too small", "not zero"}},
	} {
		_, err := runSteps(append([]string{"transmit", "--out", p("rx")}, c.args...)...)
		wantError(t, strings.Join(c.args, " "), err, c.want...)
	}
	if _, err := os.Stat(p("rx")); err == nil {
		t.Error("a refused transmit wrote its output")
	}
	big := writeText(t, p("big.csv"), "1,1e308,0.5\n0,0.2,-1e308\n1,0.3,0.1\n0,-0.5,0.2\n")
	_, err := runSteps("partition", "--data", big, "--K", "2", "--out", p("sh"))
	wantError(t, "covariates of 1e308", err, "big.csv: data point 1, covariate 1 is 1e+308", "rescale the covariates")
}

// TestPartitionRemovesStaleShards: a partition into fewer workers left the
// earlier partition's shard-j.csv for j > K beside its own; they are
// removed, and said so.
func TestPartitionRemovesStaleShards(t *testing.T) {
	out := t.TempDir()
	mustRun(t, "partition", "--data", stepsData, "--K", "4", "--out", out)
	stdout := mustRun(t, "partition", "--data", stepsData, "--K", "2", "--out", out)
	got, _ := filepath.Glob(filepath.Join(out, "shard-*.csv"))
	if len(got) != 2 || !strings.Contains(stdout, "removed 2 shard file(s) of an earlier partition") {
		t.Errorf("shards after K = 4 then K = 2: %v\n%s", got, stdout)
	}
}

// FuzzPartitionJSON: the partition.json reader of wcmc sample (workerCount)
// never panics, and the K it accepts is ≥ 1 and agrees with a given --K.
func FuzzPartitionJSON(f *testing.F) {
	f.Add([]byte(`{"format":"wcmc-partition/1","K":3,"shards":["shard-1.csv"]}`), 0, false)
	f.Add([]byte(`{"format":"wcmc-partition/1","K":-1}`), 2, true)
	f.Add([]byte(`{"format":"wcmc-partition/1","K":1e400}`), 1, true)
	f.Add([]byte(`[]`), 0, false)
	f.Fuzz(func(t *testing.T, data []byte, flagK int, given bool) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "partition.json"), data, 0o644)
		k, _, err := workerCount(filepath.Join(dir, "shard-1.csv"), flagK, given)
		if err != nil {
			return
		}
		if k < 1 || (given && k != flagK) {
			t.Fatalf("accepted K = %d (--K %d given %v) from %q", k, flagK, given, data)
		}
	})
}

// TestRunFailureSaysWhatIsKept: a run stopped by an error names only files
// that exist and says what to do. Every task failing (as when the journal
// cannot be written at all, under ulimit -f) leaves nothing and says so,
// rather than naming the removed journal; results that cannot be written
// leave the journal, named with the command that writes them once the
// cause is fixed.
func TestRunFailureSaysWhatIsKept(t *testing.T) {
	noSchedulerEnv(t)
	failing := toySpecs()[0]
	failing.Run = func(runner.Task) (runner.TaskOutput, error) { return runner.TaskOutput{}, errors.New("boom") }
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	if code := execute(context.Background(), []runner.Spec{failing}, []string{"run", "toy", "--quick", "--workers", "1", "--out", out}, &stdout, &stderr); code == 0 ||
		!strings.Contains(stderr.String(), "none of the 6 tasks finished: nothing was saved") || strings.Contains(stderr.String(), "journal") || strings.Contains(stderr.String(), "resume") {
		t.Errorf("every task failing: exit %d, stderr %q; want that nothing was saved, naming no journal and no resume", code, stderr.String())
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("every task failing left %s: %v", out, err)
	}

	out = t.TempDir()
	blocked := filepath.Join(out, "toy.csv")
	if err := os.Mkdir(blocked, 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "run", "toy", "--quick", "--out", out)
	journal := filepath.Join(out, "toy.journal.jsonl")
	resume := "wcmc run toy --quick --out " + out + " --resume"
	for _, w := range []string{"no result file was written or changed", "the 6 finished tasks are kept in " + journal, "write the results with:\n  " + resume} {
		if code == 0 || !strings.Contains(errOut, w) {
			t.Errorf("results not writable: exit %d, stderr %q; want %q", code, errOut, w)
		}
	}
	if _, err := os.Stat(journal); err != nil {
		t.Errorf("the journal the message names: %v", err)
	}
	os.Remove(blocked)
	if code, _, errOut := runCLI(t, strings.Fields(resume)[1:]...); code != 0 || !strings.Contains(errOut, "6 of 6 tasks done, 0 to run") {
		t.Errorf("the command the message gives: exit %d, stderr %q", code, errOut)
	}
	if fi, err := os.Stat(blocked); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("after the resume, %s: %v", blocked, err)
	}
}
