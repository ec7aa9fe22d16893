package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestScriptsPassShellcheck runs shellcheck on the recipes' shell scripts
// (deploy/*.sh), as on the manifests' inline scripts; under CI a missing
// shellcheck fails the test.
func TestScriptsPassShellcheck(t *testing.T) {
	scripts, err := filepath.Glob("*.sh")
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) == 0 {
		t.Fatal("no deploy/*.sh script found")
	}
	requireShellcheck(t)
	for _, s := range scripts {
		if out, err := exec.Command("shellcheck", s).CombinedOutput(); err != nil {
			t.Errorf("%s: shellcheck: %v\n%s", s, err, out)
		}
	}
}

// TestSlurmResubmitOneIndex submits through deploy/slurm-array.sh with a
// stand-in sbatch that records its arguments, then runs the recorded array
// task as Slurm runs a one-task resubmission (ARRAY=3 of 8 shards:
// SLURM_ARRAY_TASK_ID=3, SLURM_ARRAY_TASK_COUNT=1, SLURM_ARRAY_TASK_MIN=3)
// with the real wcmc in --dry-run: it must run shard 3/8, not the whole
// sweep (0/1, which SLURM_ARRAY_TASK_COUNT alone would give).
func TestSlurmResubmitOneIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the wcmc binary")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	wcmc := filepath.Join(dir, "wcmc")
	if out, err := buildWCMC(wcmc, nil).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// sbatch: each call's arguments, one per line, in calls/N.
	sbatch := "#!/usr/bin/env bash\nn=$(ls \"$CALLS\" | wc -l)\nprintf '%s\\n' \"$@\" >\"$CALLS/$n\"\necho $((100 + n))\n"
	if err := os.WriteFile(filepath.Join(bin, "sbatch"), []byte(sbatch), 0o755); err != nil {
		t.Fatal(err)
	}
	calls := filepath.Join(dir, "calls")
	if err := os.Mkdir(calls, 0o755); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLURM_") && !strings.HasPrefix(kv, "JOB_COMPLETION_INDEX=") &&
			!strings.HasPrefix(kv, "WCMC_SHARD_COUNT=") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "CALLS="+calls,
		"WCMC="+wcmc, "RESULTS="+filepath.Join(dir, "results"))

	submit := exec.Command("bash", "slurm-array.sh", "probit-snr", "8", "--dry-run")
	submit.Env = append(env, "ARRAY=3")
	if out, err := submit.CombinedOutput(); err != nil {
		t.Fatalf("submit: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(calls, "0"))
	if err != nil {
		t.Fatal(err)
	}
	argv := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if !slices.Contains(argv, "--array=3") {
		t.Fatalf("the array was submitted as %q, want --array=3", argv)
	}
	script := slices.IndexFunc(argv, func(a string) bool { return strings.HasSuffix(a, "slurm-array.sh") })
	if script < 0 {
		t.Fatalf("no script in sbatch %q", argv)
	}
	task := exec.Command("bash", argv[script:]...)
	task.Env = append(env, "SLURM_ARRAY_TASK_ID=3", "SLURM_ARRAY_TASK_COUNT=1", "SLURM_ARRAY_TASK_MIN=3",
		"SLURM_ARRAY_TASK_MAX=3", "SLURM_CPUS_PER_TASK=1")
	out, err := task.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "shard 3/8 of probit-snr holds 40 of 320 tasks") {
		t.Errorf("the resubmitted task %q: %v\n%s", argv[script:], err, out)
	}

	for _, bad := range []string{"8", "3,9", "x"} {
		c := exec.Command("bash", "slurm-array.sh", "probit-snr", "8")
		c.Env = append(env, "ARRAY="+bad)
		if out, err := c.CombinedOutput(); err == nil || !strings.Contains(string(out), "ARRAY") {
			t.Errorf("ARRAY=%s: %v\n%s", bad, err, out)
		}
	}
}

// TestDockerfilePins: the Dockerfile's base images are pinned to an exact
// version or a digest, never a moving tag, and so is tini.
func TestDockerfilePins(t *testing.T) {
	data, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	exact := regexp.MustCompile(`^ARG (BUILD|RUNTIME)_IMAGE=[^:@\s]+(:[^\s]*\d+\.\d+[^\s]*|@sha256:[0-9a-f]{64})$`)
	images := 0
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "ARG ") && strings.Contains(line, "_IMAGE=") {
			images++
			if !exact.MatchString(line) {
				t.Errorf("%q: pin the image to an exact version or a digest", line)
			}
		}
	}
	if images != 2 {
		t.Errorf("found %d base image arguments, want BUILD_IMAGE and RUNTIME_IMAGE", images)
	}
	if !regexp.MustCompile(`apt-get install [^\n]*\btini=\d[^\s]*`).Match(data) {
		t.Error("tini is installed without a pinned version (tini=VERSION)")
	}
}

// TestStartsUnderAddressSpaceLimit builds wcmc as the recipes do
// (CGO_ENABLED=0) and starts it under a 1 GB address-space cap (ulimit -v,
// as clusters set), where a cgo build's threads cannot reserve their
// stacks.
func TestStartsUnderAddressSpaceLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the wcmc binary")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	wcmc := filepath.Join(t.TempDir(), "wcmc")
	if out, err := buildWCMC(wcmc, []string{"CGO_ENABLED=0"}).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, args := range []string{"version", "list"} {
		out, err := exec.Command("bash", "-c", "ulimit -v 1000000 && "+wcmc+" "+args).CombinedOutput()
		if err != nil {
			t.Errorf("wcmc %s under ulimit -v 1000000: %v\n%s", args, err, out)
		}
	}
}

// buildWCMC returns the command that builds wcmc to out as the recipes do:
// `go build ./cmd/wcmc` at the repository root, in the library's module
// (deploy/ is a module of its own), with env added to the environment.
func buildWCMC(out string, env []string) *exec.Cmd {
	cmd := exec.Command("go", "build", "-o", out, "./cmd/wcmc")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), env...)
	return cmd
}
