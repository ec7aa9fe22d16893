package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/internal/memlimit"
	"github.com/wcmc-project/wcmc/npy"
)

// TestSamplePrecisionMemory: the sampler's d×d matrices count in the
// memory check, so a wide data set is refused before sampling.
func TestSamplePrecisionMemory(t *testing.T) {
	const d = 2000 // 6 d×d matrices: 183 MiB; the draws: 16 KiB
	t.Setenv(memlimit.Env, "64M")
	dir := t.TempDir()
	var b strings.Builder
	for i := 0; i < 4; i++ {
		b.WriteString([]string{"1", "0"}[i%2])
		for j := 0; j < d; j++ {
			fmt.Fprintf(&b, ",%d", (i+j)%3)
		}
		b.WriteByte('\n')
	}
	data := filepath.Join(dir, "wide.csv")
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "posterior", "--data", data, "--samples", "1", "--burnin", "0", "--out", filepath.Join(dir, "ref.npy"))
	if code == 0 || !strings.Contains(stderr, "d×d precision") || !strings.Contains(stderr, "more than the 64 MiB") {
		t.Errorf("posterior with d = %d under 64 MiB: exit %d, %s", d, code, stderr)
	}
}

// TestSamplingBounds: absurd --thin, --burnin and --chains are refused
// before anything runs, naming the bound.
func TestSamplingBounds(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ref.npy")
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--thin", "1000000000"}, "transitions, more than the 1e+09"},
		{[]string{"--burnin", "1000000000000000"}, "transitions, more than the 1e+09"},
		{[]string{"--chains", "1000000"}, "--chains 1000000: at most 1024"},
	} {
		args := append([]string{"posterior", "--data", stepsData, "--out", out}, c.flags...)
		code, _, stderr := runCLI(t, args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want an error with %q", c.flags, code, stderr, c.want)
		}
	}
}

// TestOutValidatedFirst: an empty or uncreatable --out is refused before
// any work (reproduce computed everything first; plot and export used
// their default).
func TestOutValidatedFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.npy") // never read
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"reproduce", "--quick", "--out", ""}, "--out is empty"},
		{[]string{"reproduce", "--quick", "--out", filepath.Join(file, "sub")}, "cannot create the directory"},
		{[]string{"plot", "trace", missing, "--out", ""}, "--out is empty"},
		{[]string{"plot", "rank", missing, "--out", filepath.Join(file, "base")}, "not an existing directory"},
		{[]string{"export", missing, "--out", ""}, "--out is empty"},
		{[]string{"run", "toy", "--out", ""}, "--out is empty"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("wcmc %s: exit %d, %q; want %q", strings.Join(c.args, " "), code, stderr, c.want)
		}
	}
}

// TestStoppedMessage: once the journal is removed, a stop does not name it.
func TestStoppedMessage(t *testing.T) {
	if m := stoppedMessage("", "wcmc run x --resume"); strings.Contains(m, "journal") || strings.Contains(m, "resume with") {
		t.Errorf("after the journal is removed: %q", m)
	}
	if m := stoppedMessage("out/x.journal.jsonl", "wcmc run x --resume"); !strings.Contains(m, "out/x.journal.jsonl") || !strings.Contains(m, "wcmc run x --resume") {
		t.Errorf("with a journal: %q", m)
	}
}

// TestSampleRunBytesBound: the memory check's estimate of a sample run is
// at least what wcmc posterior allocates in all (measured with the garbage
// collector off, so that the total is what could be resident at once), and
// not more than twice that beyond the fixed overhead.
func TestSampleRunBytesBound(t *testing.T) {
	set, err := readCovariates(stepsData, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, chains := range []int{1, 3} {
		s := wcmc.Sampling{S: 30000, BurnIn: 100, Thin: 1, Chains: chains}
		out := filepath.Join(t.TempDir(), "ref.npy")
		old := debug.SetGCPercent(-1)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		mustRun(t, "posterior", "-q", "--data", stepsData, "--samples", fmt.Sprint(s.S), "--burnin", fmt.Sprint(s.BurnIn),
			"--chains", fmt.Sprint(chains), "--out", out)
		runtime.ReadMemStats(&after)
		debug.SetGCPercent(old)
		used := float64(after.TotalAlloc - before.TotalAlloc)
		est := sampleRunBytes(s, set.Len(), set.Dim())
		if est < used || est-runOverhead > 2*used {
			t.Errorf("%d chain(s) of %d draws, d = %d: estimate %s (%s beyond the overhead), allocated %s",
				chains, s.S, set.Dim(), memlimit.Format(est), memlimit.Format(est-runOverhead), memlimit.Format(used))
		}
	}
}

// TestNoiselessNamesConstantWorker: a sample file constant in a parameter
// is named in cmc-noiseless's error, not left out of the consensus.
func TestNoiselessNamesConstantWorker(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	var files []string
	for k := range 3 {
		m := mat.NewDense(30, 3, nil)
		for i := range 30 {
			for j := range 3 {
				m.Set(i, j, rng.NormFloat64())
			}
			if k == 1 {
				m.Set(i, 2, 0.5)
			}
		}
		files = append(files, filepath.Join(dir, fmt.Sprintf("samples-%d.npy", k+1)))
		if err := npy.WriteFile(files[k], m); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "noiseless.npy")
	code, _, stderr := runCLI(t, append([]string{"aggregate", "--scheme", "cmc-noiseless", "--out", out}, files...)...)
	for _, w := range []string{files[1], "worker 2", "parameter 3 = 0.5"} {
		if code == 0 || !strings.Contains(stderr, w) {
			t.Errorf("worker 2 constant: exit %d, %q; want an error naming %q", code, stderr, w)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s written", out)
	}
}

// TestResumeCompleteRun: --resume on a folder whose run is complete says
// so and changes nothing (it named a journal that did not exist, and ran
// the sweep again); with other settings there is no journal to resume,
// and the message says that.
func TestResumeCompleteRun(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI(t, "run", "toy", "--out", dir); code != 0 {
		t.Fatalf("run toy: exit %d, %s", code, stderr)
	}
	js := filepath.Join(dir, "toy.json")
	before, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "run", "toy", "--out", dir, "--resume")
	if code != 0 || !strings.Contains(stderr, "this run is complete") || !strings.Contains(stderr, "nothing to resume") || strings.Contains(stderr, "journal") {
		t.Errorf("--resume of a complete run: exit %d, %q", code, stderr)
	}
	if after, _ := os.ReadFile(js); !bytes.Equal(before, after) {
		t.Errorf("--resume of a complete run rewrote %s", js)
	}
	code, _, stderr = runCLI(t, "run", "toy", "--out", dir, "--resume", "--seed", "2")
	want := "no journal " + filepath.Join(dir, "toy.journal.jsonl") + " to resume: starting the run"
	if code != 0 || !strings.Contains(stderr, want) {
		t.Errorf("--resume with another seed: exit %d, %q; want %q", code, stderr, want)
	}
}
