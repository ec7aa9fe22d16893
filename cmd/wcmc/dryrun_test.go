package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunDryRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "never")
	code, stdout, stderr := reproRun(t, "run", "probit-snr", "--dry-run", "--shard", "1/8", "--out", out)
	if code != 0 || !strings.Contains(stdout, "shard 1/8 of probit-snr holds 40 of 320 tasks") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a dry run created %s (%v)", out, err)
	}
	code, _, stderr = reproRun(t, "run", "probit-snr", "--dry-run", "--set", "K=1_0", "--out", out)
	if code == 0 || !strings.Contains(stderr, `"1_0" is not a number`) {
		t.Errorf("a bad --set passed the dry run: exit %d, stderr %s", code, stderr)
	}
}
