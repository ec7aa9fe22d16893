package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/diagnostics"
	"github.com/wcmc-project/wcmc/npy"
)

// TestSampleChainsFiles runs wcmc sample and wcmc posterior with --sampler
// hmc --chains 3: the .npy holds the (3, S, d) array of the library's
// chains bit for bit, the summary is that of the three chains (R̂ across
// them), and FILE.sampler.json records the sampler and each chain's
// statistics.
func TestSampleChainsFiles(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	data, err := wcmc.LoadCSV(stepsData)
	if err != nil {
		t.Fatal(err)
	}
	s := wcmc.Sampling{S: 50, BurnIn: 30, PriorVar: 1, Sampler: wcmc.HMC, Chains: 3, Thin: 2}
	flags := []string{"--S", "50", "--burnin", "30", "--sampler", "hmc", "--chains", "3", "--thin", "2", "--seed", "5"}
	worker, err := wcmc.SampleWorkerChains(data, 1, 2, s, 5)
	if err != nil {
		t.Fatal(err)
	}
	global, err := wcmc.PosteriorChains(data, s, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want *wcmc.Draws
	}{
		{append([]string{"sample", "--shard", stepsData, "--K", "2", "--worker", "1", "--out", p("samples-1.npy")}, flags...), worker},
		{append([]string{"posterior", "--data", stepsData, "--out", p("reference.npy")}, flags...), global},
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		if code != 0 {
			t.Fatalf("wcmc %s: exit %d: %s", c.args[0], code, stderr)
		}
		out := c.args[indexOf(c.args, "--out")+1]
		chains, err := npy.ReadChainsFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(chains) != 3 {
			t.Fatalf("%s: %d chains in the file, want 3", out, len(chains))
		}
		for i := range chains {
			sameBits(t, fmt.Sprintf("%s chain %d", out, i+1), chains[i], c.want.Chains[i])
		}
		wantSum, err := diagnostics.SummarizeChains(c.want.Chains)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := diagnostics.WriteCSV(&buf, diagnostics.Names("theta", len(wantSum)), wantSum); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(strings.TrimSuffix(out, ".npy") + ".summary.csv"); err != nil || !bytes.Equal(got, buf.Bytes()) {
			t.Errorf("%s: summary is not that of the 3 chains (%v)", out, err)
		}
		var rec samplerRecord
		if err := readJSON(strings.TrimSuffix(out, ".npy")+".sampler.json", &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Format != samplerFormat || rec.Sampler != "hmc" || rec.Chains != 3 || rec.Draws != 50 || rec.Thin != 2 ||
			rec.BurnIn != 30 || fmt.Sprint(rec.Shape) != "[3 50 3]" || len(rec.Stats) != 3 {
			t.Errorf("%s: record %+v", out, rec)
		}
		for i, st := range rec.Stats {
			w := c.want.Stats[i]
			if st.Chain != i+1 || st.Steps != 100 || st.AcceptRate != w.AcceptRate || st.StepSize != w.StepSize || st.Divergences != w.Divergences {
				t.Errorf("%s: chain %d stats %+v, library %+v", out, i+1, st, w)
			}
		}
		if !strings.Contains(stdout, "over 3 chains") || !strings.Contains(stdout, "chain 3: acceptance rate") || !strings.Contains(stdout, "3×50×3") {
			t.Errorf("%s: stdout\n%s", c.args[0], stdout)
		}
	}
	assertNoTemp(t, dir)
}

func indexOf(args []string, s string) int {
	for i, a := range args {
		if a == s {
			return i
		}
	}
	return -1
}

// TestStepsReadChainFiles: transmit, aggregate (noiseless) and evaluate
// read a (C, S, d) sample file as its chains pooled, C·S samples: the
// outputs equal those from 2-D files holding the pooled matrices.
func TestStepsReadChainFiles(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	if err := os.Mkdir(p("2d"), 0o755); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--S", "20", "--burnin", "10", "--chains", "2", "--K", "2"}
	for k := 1; k <= 2; k++ {
		mustRun(t, append([]string{"sample", "--shard", stepsData, "--worker", fmt.Sprint(k), "--out", p(fmt.Sprintf("3d/samples-%d.npy", k))}, flags...)...)
		pooled := mustNPY(t, p(fmt.Sprintf("3d/samples-%d.npy", k)))
		if r, _ := pooled.Dims(); r != 40 {
			t.Fatalf("worker %d: %d pooled samples, want 2 chains × 20", k, r)
		}
		if err := npy.WriteFile(p(fmt.Sprintf("2d/samples-%d.npy", k)), pooled); err != nil {
			t.Fatal(err)
		}
	}
	mustRun(t, "posterior", "--data", stepsData, "--S", "30", "--chains", "2", "--out", p("3d/ref.npy"))
	if err := npy.WriteFile(p("2d/ref.npy"), mustNPY(t, p("3d/ref.npy"))); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"3d", "2d"} {
		files := []string{p(l + "/samples-1.npy"), p(l + "/samples-2.npy")}
		mustRun(t, append([]string{"transmit", "--access", "oma", "--out", p(l + "/rx")}, files...)...)
		mustRun(t, "aggregate", "--rx", p(l+"/rx"), "--scheme", "wgcmc", "--out", p(l+"/global.npy"))
		mustRun(t, append([]string{"aggregate", "--scheme", "noiseless", "--out", p(l + "/noiseless.npy")}, files...)...)
		mustRun(t, "evaluate", "--reference", p(l+"/ref.npy"), "--allow-unconverged-reference", "--out", p(l+"/metrics.csv"), p(l+"/global.npy"), p(l+"/noiseless.npy"))
	}
	for _, f := range []string{"global.npy", "noiseless.npy"} {
		sameBits(t, f, mustNPY(t, p("3d/"+f)), mustNPY(t, p("2d/"+f)))
	}
	a, _ := os.ReadFile(p("3d/metrics.csv"))
	b, _ := os.ReadFile(p("2d/metrics.csv"))
	if !bytes.Equal(bytes.ReplaceAll(a, []byte("/3d/"), []byte("/2d/")), b) || len(a) == 0 {
		t.Errorf("metrics differ:\n%s\n%s", a, b)
	}
}

// TestSamplerFlagErrors: bad sampler flags fail with a message naming the
// flag and write nothing.
func TestSamplerFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--sampler", "nuts"}, `--sampler "nuts": want gibbs or hmc`},
		{[]string{"--chains", "0"}, "--chains must be ≥ 1, got 0"},
		{[]string{"--thin", "0"}, "--thin must be ≥ 1, got 0"},
		{[]string{"--prior-var", "+Inf"}, "--prior-var must be finite"},
	} {
		for _, cmd := range [][]string{
			{"sample", "--shard", stepsData, "--K", "2", "--worker", "1"},
			{"posterior", "--data", stepsData},
		} {
			args := append(append(cmd, "--out", filepath.Join(dir, "x.npy")), c.flags...)
			code, _, stderr := runCLI(t, args...)
			if code == 0 || !strings.Contains(stderr, c.want) {
				t.Errorf("wcmc %s: exit %d, stderr %q, want %q", strings.Join(args, " "), code, stderr, c.want)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files written on error: %v", entries)
	}
}

// The Gibbs warning points to HMC; a single chain's record has no step size.
func TestGibbsWarningSuggestsHMC(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "s.npy")
	code, _, stderr := runCLI(t, "posterior", "--data", stepsData, "--S", "30", "--out", out)
	if code != 0 || !strings.Contains(stderr, "use --sampler hmc") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "s.sampler.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	st := rec["stats"].([]any)[0].(map[string]any)
	if _, has := st["step_size"]; has || rec["sampler"] != "gibbs" || st["accept_rate"] != 1.0 {
		t.Errorf("gibbs record %s", b)
	}
	if r, c := mustNPY(t, out).Dims(); r != 30 || c != 3 {
		t.Errorf("one chain: %d×%d, want a 30×3 matrix", r, c)
	}
}

// TestSamplingProgress: wcmc sample and wcmc posterior report the chains'
// transitions on stderr as wcmc run reports its tasks, ending with the
// total of all chains (3 × (burn-in 30 + 50 draws × thin 2) = 390); -q
// silences them, and the samples are the same bytes either way.
func TestSamplingProgress(t *testing.T) {
	dir := t.TempDir()
	flags := []string{"--S", "50", "--burnin", "30", "--chains", "3", "--thin", "2"}
	for _, c := range []struct {
		args []string
		line string
	}{
		{[]string{"sample", "--shard", stepsData, "--K", "2", "--worker", "1"}, "worker 1: 390 transitions done in "},
		{[]string{"posterior", "--data", stepsData}, "posterior: 390 transitions done in "},
	} {
		var files [2][]byte
		for i, quiet := range []bool{false, true} {
			out := filepath.Join(dir, fmt.Sprintf("%s-%v.npy", c.args[0], quiet))
			args := append(append(c.args, flags...), "--out", out)
			if quiet {
				args = append([]string{"-q"}, args...)
			}
			code, _, stderr := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("wcmc %s: exit %d: %s", strings.Join(args, " "), code, stderr)
			}
			if got := strings.Contains(stderr, c.line); got == quiet {
				t.Errorf("wcmc %s (quiet %v): stderr %q, want %q only without -q", c.args[0], quiet, stderr, c.line)
			}
			var err error
			if files[i], err = os.ReadFile(out); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(files[0], files[1]) {
			t.Errorf("wcmc %s: the samples differ with and without -q", c.args[0])
		}
	}
}
