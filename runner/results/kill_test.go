//go:build unix

package results_test

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/wcmc-project/wcmc/internal/atomicfile"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/internal/sweeptest"
	"github.com/wcmc-project/wcmc/runner/results"
)

// TestLoadNamesAnInterruptedRewrite: results rewritten by a process killed
// after its second file renamed into place hold new and old files; Load
// refuses them with an error that names which are new, which old, and
// what finishes the replacement, rather than reporting an edited file.
func TestLoadNamesAnInterruptedRewrite(t *testing.T) {
	opts := runner.Options{Seed: 1, Trials: 3}
	if dir := os.Getenv("RESULTS_REWRITE_DIR"); dir != "" {
		res := sweeptest.MustRun(t, sweeptest.Noise(), runner.Options{Seed: 2, Trials: 3})
		results.WriteFiles(dir, res)
		os.Exit(0) // not killed: the parent sees it
	}
	dir, _ := writtenRun(t, opts)
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadNamesAnInterruptedRewrite$")
	cmd.Env = append(os.Environ(), "RESULTS_REWRITE_DIR="+dir, atomicfile.KillEnv+"="+atomicfile.KillFileDone+":2")
	err := cmd.Run()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the rewrite was not killed at its second rename: %v", err)
	}
	_, err = results.Load(dir, sweeptest.Noise())
	for _, w := range []string{"were being replaced together", "noise.csv, noise.summary.csv replaced, noise.png", "noise.json not yet", "--resume"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Load after the kill: %v; want it to mention %q", err, w)
		}
	}
	if err != nil && strings.Contains(err.Error(), "modified after it was written") {
		t.Errorf("Load after the kill reports an edited file: %v", err)
	}
}
