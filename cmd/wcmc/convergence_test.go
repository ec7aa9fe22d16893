package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/experiment"
	"github.com/wcmc-project/wcmc/runner"
)

// TestRunWarnsOnceAboutChains: a quick probit run, whose worker chains
// (T = 200 draws) are too short for ESS ≥ 400 and whose reference (2000
// Gibbs draws) misses the recommended values, ends with one warning line
// on stderr, the reference's, naming the settings that help, and one note
// on the worker chains judged against their length; with chains long
// enough for the limits (T = 400), the workers' verdict is the warning
// and there is no note; a run that records no chains (the toy) warns
// about none.
func TestRunWarnsOnceAboutChains(t *testing.T) {
	if testing.Short() {
		t.Skip("runs quick probit experiments (-short)")
	}
	spec, err := experiment.Lookup("probit-snr")
	if err != nil {
		t.Fatal(err)
	}
	lines := func(stderr, prefix string) []string {
		var out []string
		for _, l := range strings.Split(stderr, "\n") {
			if strings.Contains(l, prefix) {
				out = append(out, l)
			}
		}
		return out
	}
	dir := t.TempDir()
	var o, e bytes.Buffer
	code := execute(context.Background(), []runner.Spec{spec},
		[]string{"run", "probit-snr", "--quick", "--trials", "2", "--set", "snr_db=20", "--set", "schemes=gcmc", "--out", dir, "--quiet"}, &o, &e)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	json := regexp.QuoteMeta(filepath.Join(dir, "probit-snr.json"))
	want := regexp.MustCompile(`^warning: probit-snr: reference chain below recommended \(R̂ [0-9.]+, bulk ESS \d+, tail ESS \d+; \d+ of 5 parameters\), ` +
		`try a larger --set ref_samples \(now 2000\), --set ref_sampler=hmc or a longer --set burnin \(now 100\); recorded in ` + json + `$`)
	if w := lines(e.String(), "warning:"); len(w) != 1 || !want.MatchString(w[0]) {
		t.Errorf("warnings %q, want one matching %s", w, want)
	}
	wantNote := regexp.MustCompile(`^note: probit-snr: the 40 worker chains have 200 draws each: ESS ≥ 400 cannot apply to them, .*` +
		`Judged against their length instead, \d+ of 40 have bulk and tail ESS ≥ 10% of their draws \(median bulk ESS \d+ of 200; max R̂ [0-9.]+\): ` +
		`.*a worker's 200 draws estimate its subposterior about as well as \d+ independent ones would; --set sampler=hmc .*; per worker and trial in ` + json + `$`)
	if n := lines(e.String(), "note:"); len(n) != 1 || !wantNote.MatchString(n[0]) {
		t.Errorf("notes %q, want one matching %s", n, wantNote)
	}

	// Chains of T = 400 draws are judged against the limits: the workers'
	// verdict is a warning naming the sampler, and there is no note.
	e.Reset()
	code = execute(context.Background(), []runner.Spec{spec},
		[]string{"run", "probit-snr", "--quick", "--trials", "1", "--set", "T=400", "--set", "snr_db=20", "--set", "schemes=gcmc", "--out", t.TempDir(), "--quiet"}, &o, &e)
	if w := lines(e.String(), "warning:"); code != 0 || len(w) != 1 || !strings.Contains(w[0], "of 20 worker chains below recommended (R̂ ≤ 1.01, ESS ≥ 400;") ||
		!strings.Contains(w[0], "try --set sampler=hmc") || len(lines(e.String(), "note:")) != 0 {
		t.Errorf("T = 400: exit %d, stderr %q: want one warning on the worker chains, no note", code, e.String())
	}

	// Thresholds every chain meets silence it; out-of-range ones are refused.
	base := []string{"run", "probit-snr", "--quick", "--trials", "2", "--set", "snr_db=20", "--set", "schemes=gcmc", "--quiet"}
	e.Reset()
	code = execute(context.Background(), []runner.Spec{spec}, append(base, "--out", t.TempDir(), "--max-rhat", "100", "--min-ess", "0"), &o, &e)
	if code != 0 || strings.Contains(e.String(), "warning:") || strings.Contains(e.String(), "worker chains") {
		t.Errorf("--max-rhat 100 --min-ess 0: exit %d, stderr %q: want no warning and no note", code, e.String())
	}
	for _, bad := range [][]string{{"--max-rhat", "0.9"}, {"--min-ess", "-1"}} {
		e.Reset()
		code = execute(context.Background(), []runner.Spec{spec}, append(append(base, "--out", t.TempDir()), bad...), &o, &e)
		if code == 0 || !strings.Contains(e.String(), bad[0]+" must be") {
			t.Errorf("%v: exit %d, stderr %q", bad, code, e.String())
		}
	}

	code, _, errOut := runCLI(t, "run", "toy", "--out", t.TempDir(), "--quiet")
	if code != 0 || strings.Contains(errOut, "warning:") {
		t.Errorf("toy run: exit %d, stderr %q: want no warning", code, errOut)
	}
}
