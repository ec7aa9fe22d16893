package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/diagnostics"
	"github.com/wcmc-project/wcmc/npy"
)

// writeReference writes chains (each draws × d) to path as wcmc posterior
// does: the (C, S, d) array and, with summary, the diagnostics beside it.
func writeReference(t *testing.T, path string, chains []*mat.Dense, summary bool) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := npy.WriteChains(f, chains); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if !summary {
		return
	}
	s, err := summarize(path, diagnostics.Recommended, chains...)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeAll([]outFile{s.file()}); err != nil {
		t.Fatal(err)
	}
}

// normalChains returns chains of independent N(mean[c], 1) draws.
func normalChains(rng *rand.Rand, draws, d int, mean ...float64) []*mat.Dense {
	out := make([]*mat.Dense, len(mean))
	for c, m := range mean {
		out[c] = mat.NewDense(draws, d, nil)
		for i := range draws {
			for j := range d {
				out[c].Set(i, j, m+rng.NormFloat64())
			}
		}
	}
	return out
}

// TestEvaluateChecksReference: evaluate refuses a reference whose
// diagnostics fail (two chains with different means), naming the
// parameters and the flag that overrides it; with the flag it warns and
// evaluates; a converged reference passes silently; a reference without
// diagnostics, or with another file's, is evaluated with a warning that
// its convergence is unknown.
func TestEvaluateChecksReference(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(4, 5))
	const d = 3
	writeReference(t, p("bad.npy"), normalChains(rng, 1000, d, 0, 3), true)
	writeReference(t, p("good.npy"), normalChains(rng, 2000, d, 0, 0), true)
	writeReference(t, p("bare.npy"), normalChains(rng, 2000, d, 0, 0), false)
	writeReference(t, p("stale.npy"), normalChains(rng, 2000, d, 0, 0), false)
	if err := os.Link(p("good.summary.csv"), p("stale.summary.csv")); err != nil {
		t.Fatal(err)
	}
	if err := npy.WriteFile(p("samples.npy"), normalChains(rng, 500, d, 0)[0]); err != nil {
		t.Fatal(err)
	}

	// Unconverged: refused, nothing printed on stdout.
	code, out, errOut := runCLI(t, "evaluate", "--reference", p("bad.npy"), p("samples.npy"))
	for _, want := range []string{"the reference " + p("bad.npy") + " fails its convergence checks (" + p("bad.summary.csv") + ")",
		"3 of 3 parameters miss R̂ ≤ 1.01 or bulk and tail ESS ≥ 400", "theta[1], theta[2], theta[3]", "--allow-unconverged-reference"} {
		if code == 0 || !strings.Contains(errOut, want) {
			t.Errorf("unconverged reference: exit %d, stderr %q: want a refusal containing %q", code, errOut, want)
		}
	}
	if out != "" {
		t.Errorf("unconverged reference: stdout %q, want nothing", out)
	}
	// With the flag: a warning naming the parameters, and the metrics.
	code, out, errOut = runCLI(t, "evaluate", "--reference", p("bad.npy"), "--allow-unconverged-reference", p("samples.npy"))
	if code != 0 || !strings.HasPrefix(errOut, "warning: the reference "+p("bad.npy")+" fails its convergence checks") ||
		!strings.Contains(errOut, "theta[1], theta[2], theta[3]") || !strings.HasPrefix(out, "file,err2,mean_err,cov_err,coverage90,w2,err2_scaled\n"+p("samples.npy")+",") {
		t.Errorf("--allow-unconverged-reference: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// Thresholds the chains meet pass them.
	if code, _, errOut = runCLI(t, "evaluate", "--reference", p("bad.npy"), "--max-rhat", "100", "--min-ess", "0", p("samples.npy")); code != 0 || errOut != "" {
		t.Errorf("--max-rhat 100 --min-ess 0: exit %d, stderr %q", code, errOut)
	}
	// Converged: silent.
	code, out, errOut = runCLI(t, "evaluate", "--reference", p("good.npy"), p("samples.npy"))
	if code != 0 || errOut != "" || !strings.HasPrefix(out, "file,err2,mean_err,cov_err,coverage90,w2,err2_scaled\n") {
		t.Errorf("converged reference: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// No diagnostics, or another file's: unknown, evaluated with a warning.
	for name, why := range map[string]string{"bare.npy": "has no diagnostics beside it", "stale.npy": "it is not the reference's"} {
		code, out, errOut = runCLI(t, "evaluate", "--reference", p(name), p("samples.npy"))
		if code != 0 || !strings.HasPrefix(errOut, "warning: ") || !strings.Contains(errOut, why) ||
			!strings.Contains(errOut, "its convergence is unknown") || !strings.HasPrefix(out, "file,err2,mean_err,cov_err,coverage90,w2,err2_scaled\n") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q: want a warning that %s", name, code, out, errOut, why)
		}
	}
}

// TestEvaluateDegenerateReference: a reference with a constant parameter,
// or with no more draws than parameters, is refused before any samples
// file is read, with the reference's name, the reason and the remedy.
func TestEvaluateDegenerateReference(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(6, 7))
	const d = 3
	constant := normalChains(rng, 500, d, 0)
	for i := range 500 {
		constant[0].Set(i, 1, 2.5)
	}
	writeReference(t, p("const.npy"), constant, false)
	writeReference(t, p("few.npy"), normalChains(rng, d, d, 0), false)
	if err := npy.WriteFile(p("samples.npy"), normalChains(rng, 500, d, 0)[0]); err != nil {
		t.Fatal(err)
	}
	for name, why := range map[string]string{"const.npy": "parameter 2 is constant in all 500 draws", "few.npy": "3 draws of d = 3 parameters"} {
		code, out, errOut := runCLI(t, "evaluate", "--reference", p(name), p("samples.npy"))
		if code == 0 || out != "" || !strings.Contains(errOut, "wcmc: "+p(name)+": reference: "+why) ||
			!strings.Contains(errOut, "a reference needs more draws than parameters, every parameter varying (draw one with wcmc posterior, --samples)") || strings.Contains(errOut, "samples.npy") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q: want a refusal naming the reference, %q and the remedy", name, code, out, errOut, why)
		}
	}
}
