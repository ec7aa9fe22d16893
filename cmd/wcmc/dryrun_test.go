package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wcmc/experiment"
)

// runReal runs the command line on the real experiments.
func runReal(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = execute(context.Background(), experiment.All(), args, &o, &e)
	return code, o.String(), e.String()
}

func TestRunDryRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "never")
	code, stdout, stderr := runReal("run", "probit-snr", "--dry-run", "--shard", "1/8", "--out", out)
	if code != 0 || !strings.Contains(stdout, "shard 1/8 of probit-snr holds 40 of 320 tasks") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a dry run created %s (%v)", out, err)
	}
	code, _, stderr = runReal("run", "probit-snr", "--dry-run", "--set", "K=1_0", "--out", out)
	if code == 0 || !strings.Contains(stderr, `"1_0" is not a number`) {
		t.Errorf("a bad --set passed the dry run: exit %d, stderr %s", code, stderr)
	}
}
