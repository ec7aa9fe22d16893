package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/internal/stageprof"
)

// TestRunProfile checks run --profile: the run's CPU profile (which parses)
// and allocation profile in the directory, and the stage table on stderr.
// (No assertion on the times, which depend on the machine.)
func TestRunProfile(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "prof")
	code, _, errOut := runCLI(t, "run", "toy", "--out", dir, "--set", "x=1,2.5", "--profile", prof)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f, err := os.Open(filepath.Join(prof, "toy.cpu.pprof"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := stageprof.Read(f); err != nil {
		t.Fatalf("the CPU profile: %v", err)
	}
	if _, err := os.Stat(filepath.Join(prof, "toy.allocs.pprof")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "CPU profile by stage") || !strings.Contains(errOut, "toy.cpu.pprof") {
		t.Errorf("stderr lacks the stage table:\n%s", errOut)
	}
}
