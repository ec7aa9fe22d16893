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

// TestRunWarnsOnceAboutChains: a quick probit run, whose chains are far
// too short for the recommended R̂ and ESS, ends with exactly one warning
// line on stderr about them, counting the worker chains and naming the
// reference; a run that records no chains (the toy) warns about none.
func TestRunWarnsOnceAboutChains(t *testing.T) {
	spec, err := experiment.Lookup("probit-snr")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var o, e bytes.Buffer
	code := execute(context.Background(), []runner.Spec{spec},
		[]string{"run", "probit-snr", "--quick", "--trials", "2", "--set", "snr_db=20", "--set", "schemes=gcmc", "--out", dir, "--quiet"}, &o, &e)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	var warnings []string
	for _, l := range strings.Split(e.String(), "\n") {
		if strings.Contains(l, "warning:") {
			warnings = append(warnings, l)
		}
	}
	want := regexp.MustCompile(`^warning: probit-snr: \d+ of \d+ worker chains below recommended \(R̂ ≤ 1\.01, ESS ≥ 400; max R̂ [0-9.]+, min bulk ESS \d+, min tail ESS \d+\); reference (OK|chain below recommended .*); per worker and trial in ` +
		regexp.QuoteMeta(filepath.Join(dir, "probit-snr.json")) + `$`)
	if len(warnings) != 1 || !want.MatchString(warnings[0]) {
		t.Errorf("warnings %q, want one matching %s", warnings, want)
	}

	// Thresholds every chain meets silence it; out-of-range ones are refused.
	base := []string{"run", "probit-snr", "--quick", "--trials", "2", "--set", "snr_db=20", "--set", "schemes=gcmc", "--quiet"}
	e.Reset()
	code = execute(context.Background(), []runner.Spec{spec}, append(base, "--out", t.TempDir(), "--max-rhat", "100", "--min-ess", "0"), &o, &e)
	if code != 0 || strings.Contains(e.String(), "warning:") {
		t.Errorf("--max-rhat 100 --min-ess 0: exit %d, stderr %q: want no warning", code, e.String())
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
