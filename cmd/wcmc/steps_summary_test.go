package main

import (
	"bytes"
	"encoding/csv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/diagnostics"
)

// wcmc sample and wcmc posterior write FILE.summary.csv beside the samples,
// holding the diagnostics of the very draws written, print the table, and
// warn on stderr about short, badly mixed chains without failing.
func TestSampleAndPosteriorSummary(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	for _, c := range []struct{ args []string }{
		{[]string{"sample", "--shard", stepsData, "--K", "2", "--worker", "1", "--S", "40", "--burnin", "5", "--out", p("samples/samples-1.npy")}},
		{[]string{"posterior", "--data", stepsData, "--S", "40", "--burnin", "5", "--out", p("reference.npy")}},
	} {
		code, stdout, stderr := runCLI(t, c.args...)
		if code != 0 {
			t.Fatalf("wcmc %s: exit %d, stderr %s", strings.Join(c.args, " "), code, stderr)
		}
		out := c.args[len(c.args)-1]
		sum := strings.TrimSuffix(out, ".npy") + ".summary.csv"
		theta := mustNPY(t, out)
		_, d := theta.Dims()
		want, err := diagnostics.SummarizeChains([]*mat.Dense{theta})
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(sum)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", sum, err)
		}
		if got := strings.Join(recs[0], ","); got != "param,mean,sd,q05,q50,q95,mcse_mean,ess_bulk,ess_tail,rhat" {
			t.Errorf("%s: header %q", sum, got)
		}
		if len(recs) != d+1 {
			t.Fatalf("%s: %d rows for d = %d", sum, len(recs)-1, d)
		}
		for j, r := range recs[1:] {
			w := want[j]
			for k, v := range []float64{w.Mean, w.SD, w.Q05, w.Q50, w.Q95, w.MCSEMean, w.ESSBulk, w.ESSTail, w.Rhat} {
				if got, err := strconv.ParseFloat(r[k+1], 64); err != nil || got != v {
					t.Errorf("%s, %s, %s = %s, want %v", sum, r[0], recs[0][k+1], r[k+1], v)
				}
			}
			if r[0] != "theta["+strconv.Itoa(j+1)+"]" {
				t.Errorf("%s: row %d is %q", sum, j+1, r[0])
			}
		}
		if !strings.Contains(stdout, "ess_bulk  ess_tail") || !strings.Contains(stdout, "theta[3]") || !strings.Contains(stdout, sum) {
			t.Errorf("%s: stdout lacks the table:\n%s", c.args[0], stdout)
		}
		// 40 Gibbs draws cannot have an ESS of 400.
		if !strings.Contains(stderr, "warning: "+out+": 3 of 3 parameters fail") ||
			!strings.Contains(stderr, "theta[1] (") || !strings.Contains(stderr, "bulk ESS") || !strings.Contains(stderr, "Vehtari") {
			t.Errorf("%s: stderr %q", c.args[0], stderr)
		}
	}
	assertNoTemp(t, dir)
}

// Draws that pass the thresholds print the table and no warning.
func TestSampleSummaryNoWarning(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	theta := mat.NewDense(4000, 2, nil)
	for i := range 4000 {
		theta.Set(i, 0, rng.NormFloat64())
		theta.Set(i, 1, 5+rng.NormFloat64())
	}
	s, err := summarize("dir/x.npy", diagnostics.Recommended, theta)
	if err != nil {
		t.Fatal(err)
	}
	if s.path != "dir/x.summary.csv" {
		t.Errorf("summary path %s", s.path)
	}
	var stdout, stderr bytes.Buffer
	s.print(&stdout, &stderr, "dir/x.npy", 1, "gibbs")
	if stderr.Len() != 0 {
		t.Errorf("warning for iid draws: %s", stderr.String())
	}
	if !strings.Contains(stdout.String(), "split-R̂ over the two halves of the one chain") || strings.Count(stdout.String(), "\n") != 4 {
		t.Errorf("stdout:\n%s", stdout.String())
	}
}

// The warning thresholds are flags: loose ones silence the warning that
// 40 Gibbs draws raise at the recommended ones, and bad ones are refused
// before anything is drawn.
func TestSummaryThresholdFlags(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "reference.npy")
	base := []string{"posterior", "--data", stepsData, "--samples", "40", "--burnin", "5", "--out", out}
	code, _, stderr := runCLI(t, append(base, "--max-rhat", "100", "--min-ess", "0")...)
	if code != 0 || strings.Contains(stderr, "warning") {
		t.Errorf("loose thresholds: exit %d, stderr %q", code, stderr)
	}
	for _, c := range []struct{ flag, value, want string }{
		{"--max-rhat", "0.5", "--max-rhat must be a finite number ≥ 1"},
		{"--min-ess", "-1", "--min-ess must be a finite number ≥ 0"},
	} {
		bad := filepath.Join(dir, "bad.npy")
		code, _, stderr := runCLI(t, "posterior", "--data", stepsData, "--samples", "40", c.flag, c.value, "--out", bad)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s %s: exit %d, stderr %q", c.flag, c.value, code, stderr)
		}
		if _, err := os.Stat(bad); !os.IsNotExist(err) {
			t.Errorf("%s %s: wrote %s", c.flag, c.value, bad)
		}
	}
}
