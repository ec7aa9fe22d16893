//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/internal/memlimit"
)

// TestAddressSpaceLimit runs the pure-Go binary (CGO_ENABLED=0, as the
// recipes build it) under ulimit -v 1.5 GiB. --samples 1000000 needs
// about 494 MiB of memory, which fits, but beside the Go runtime's
// reservations (about 1.2 GiB of address space) it does not: it used to
// pass the memory check and die in the runtime ("fatal error: out of
// memory", exit 2), and must now be refused before sampling, naming the
// cap and the ulimit -v it needs. --samples 20000 still runs.
func TestAddressSpaceLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the wcmc binary")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "wcmc")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	const capKiB = 1536 << 10
	set, err := readCovariates(stepsData, false)
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, memlimit.Env+"=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") {
			env = append(env, kv)
		}
	}
	run := func(samples int) (int, string) {
		out := filepath.Join(dir, fmt.Sprintf("ref-%d.npy", samples))
		cmd := exec.Command("bash", "-c", fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, capKiB),
			bin, "posterior", "-q", "--data", stepsData, "--samples", fmt.Sprint(samples), "--out", out)
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), stderr.String()
	}

	const big = 1000000
	if need := sampleRunBytes(wcmc.Sampling{S: big, BurnIn: 100, Thin: 1, Chains: 1}, set.Len(), set.Dim()); need >= capKiB<<10 {
		t.Fatalf("--samples %d needs %s: not a size that fits in memory", big, memlimit.Format(need))
	}
	code, stderr := run(big)
	if code != 1 || strings.Contains(stderr, "fatal error") || strings.Contains(stderr, "goroutine") {
		t.Errorf("--samples %d under ulimit -v %d: exit %d, want a refusal (exit 1):\n%s", big, capKiB, code, stderr)
	}
	for _, w := range []string{fmt.Sprintf("--samples %d", big), "of address space", "ulimit -v allows (RLIMIT_AS): raise it (ulimit -v "} {
		if !strings.Contains(stderr, w) {
			t.Errorf("--samples %d under ulimit -v %d: the refusal should mention %q:\n%s", big, capKiB, w, stderr)
		}
	}
	if code, stderr := run(20000); code != 0 {
		t.Errorf("--samples 20000 under ulimit -v %d: exit %d:\n%s", capKiB, code, stderr)
	}
}
