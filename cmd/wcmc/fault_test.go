//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wcmc-project/wcmc/experiment"
	"github.com/wcmc-project/wcmc/internal/atomicfile"
)

// Fault injection on the real binary: a gauss-snr sweep (quick settings,
// 24 trials: 72 tasks of a few tens of ms) is stopped by SIGTERM, resumed,
// stopped by two SIGTERMs, resumed, killed by SIGKILL, given a torn
// journal line, and resumed to the end; its
// CSV and summary must equal an uninterrupted run's byte for byte. The same
// sweep in three shards (--shard, a Kubernetes index, a Slurm index),
// merged, must too.

// faultSweepArgs are the arguments of the sweep into out, in the order in which
// wcmc writes its resume command.
func faultSweepArgs(out string) []string {
	return []string{"run", "gauss-snr", "--quick", "--trials", "24", "--seed", "3", "--out", out, "--workers", "2"}
}

// faultBuild compiles the command into a temporary directory.
func faultBuild(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the wcmc binary")
	}
	bin := filepath.Join(t.TempDir(), "wcmc")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// wcmcProc is a running wcmc.
type wcmcProc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan error
}

func startWCMC(t *testing.T, bin string, env []string, args ...string) *wcmcProc {
	t.Helper()
	p := &wcmcProc{cmd: exec.Command(bin, args...), done: make(chan error, 1)}
	p.cmd.Env = append(faultEnv(), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// faultEnv is the environment without scheduler variables, which would
// shard the run, and with SOURCE_DATE_EPOCH fixed, so that the PDF
// figures of two runs carry the same dates (figure.SourceDate).
func faultEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "JOB_COMPLETION_INDEX=") && !strings.HasPrefix(kv, "SLURM_ARRAY_") && !strings.HasPrefix(kv, "WCMC_SHARD_COUNT=") &&
			!strings.HasPrefix(kv, "SOURCE_DATE_EPOCH=") {
			env = append(env, kv)
		}
	}
	return append(env, "SOURCE_DATE_EPOCH=1700000000")
}

// wait returns the exit code.
func (p *wcmcProc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("wcmc %v did not finish\n%s", p.cmd.Args, p.stderr.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

func faultMustSucceed(t *testing.T, p *wcmcProc) {
	t.Helper()
	if code := p.wait(t); code != 0 {
		t.Fatalf("wcmc %v: exit %d\n%s", p.cmd.Args[1:], code, p.stderr.String())
	}
}

func faultLines(path string) int {
	data, _ := os.ReadFile(path)
	return bytes.Count(data, []byte("\n"))
}

// gaussSNRRows is the number of CSV rows of one gauss-snr task at its
// quick size: its 6 analog schemes times its metrics.
func gaussSNRRows(t *testing.T) int {
	t.Helper()
	spec, err := experiment.Lookup("gauss-snr")
	if err != nil {
		t.Fatal(err)
	}
	return 6 * len(spec.Metrics)
}

// faultWaitRecords polls the journal until it holds at least n records; the
// process must still be running then.
func faultWaitRecords(t *testing.T, p *wcmcProc, journal string, n int) int {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if got := faultLines(journal); got >= n {
			return got
		}
		select {
		case <-p.done:
			t.Fatalf("wcmc exited before journaling %d tasks\n%s", n, p.stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	t.Fatalf("no %d records in %s", n, journal)
	return 0
}

func faultSameFiles(t *testing.T, dir, ref string, names ...string) {
	t.Helper()
	for _, name := range names {
		a, err1 := os.ReadFile(filepath.Join(dir, name))
		b, err2 := os.ReadFile(filepath.Join(ref, name))
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", name, err1, err2)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from the uninterrupted run's", filepath.Join(dir, name))
		}
	}
}

func TestFaultInjectionKillResumeShardMerge(t *testing.T) {
	bin := faultBuild(t)
	root := t.TempDir()
	ref := filepath.Join(root, "ref")
	faultMustSucceed(t, startWCMC(t, bin, nil, faultSweepArgs(ref)...))
	const total = 72
	if n, want := faultLines(filepath.Join(ref, "gauss-snr.csv")), 1+total*gaussSNRRows(t); n != want {
		t.Fatalf("reference CSV has %d lines, want %d", n, want)
	}

	t.Run("kill and resume", func(t *testing.T) {
		out := filepath.Join(root, "killed")
		journal := filepath.Join(out, "gauss-snr.journal.jsonl")
		args := faultSweepArgs(out)

		// SIGTERM: a clean stop that says how to resume.
		p := startWCMC(t, bin, nil, args...)
		faultWaitRecords(t, p, journal, 3)
		p.cmd.Process.Signal(syscall.SIGTERM)
		if code := p.wait(t); code == 0 {
			t.Fatalf("exit 0 after SIGTERM")
		}
		stderr := p.stderr.String()
		want := strings.Join(append([]string{"wcmc"}, args...), " ") + " --resume"
		_, after, ok := strings.Cut(stderr, "resume with:\n  ")
		if !ok || strings.TrimSpace(after) != want {
			t.Fatalf("stderr after SIGTERM should end with the resume command %q:\n%s", want, stderr)
		}
		saved := faultLines(journal)
		if saved < 3 || saved >= total || !strings.Contains(stderr, "tasks finished, saved in "+journal) {
			t.Fatalf("%d tasks journaled after SIGTERM:\n%s", saved, stderr)
		}
		if _, err := os.Stat(filepath.Join(out, "gauss-snr.csv")); err == nil {
			t.Fatal("an interrupted run wrote the final CSV")
		}

		// A fresh run over it refuses to overwrite the finished tasks.
		p = startWCMC(t, bin, nil, args...)
		if code := p.wait(t); code == 0 || !strings.Contains(p.stderr.String(), "--resume") || faultLines(journal) != saved {
			t.Fatalf("fresh run over an unfinished journal: exit %d, %d records\n%s", code, faultLines(journal), p.stderr.String())
		}

		// The printed command resumes; two SIGTERMs stop it at once.
		p = startWCMC(t, bin, nil, strings.Fields(want)[1:]...)
		faultWaitRecords(t, p, journal, saved+3)
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.cmd.Process.Signal(syscall.SIGTERM)
		if code := p.wait(t); code == 0 || !strings.Contains(p.stderr.String(), "resume with:\n  "+want) {
			t.Fatalf("two SIGTERMs: exit %d\n%s", code, p.stderr.String())
		}

		// Resume again; SIGKILL it mid-sweep.
		p = startWCMC(t, bin, nil, strings.Fields(want)[1:]...)
		faultWaitRecords(t, p, journal, faultLines(journal)+3)
		p.cmd.Process.Kill()
		p.wait(t)
		killed := faultLines(journal)
		if killed >= total {
			t.Fatalf("the run finished before SIGKILL (%d records)", killed)
		}
		// A crash mid-write leaves a torn last line.
		f, err := os.OpenFile(journal, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"point":1,"x":5,"trial":7,"rows":[{"scheme":"gcmc","met`)
		f.Close()

		p = startWCMC(t, bin, nil, append(args, "--resume")...)
		faultMustSucceed(t, p)
		if !strings.Contains(p.stderr.String(), "torn last line") || !strings.Contains(p.stderr.String(), "resuming") {
			t.Errorf("resume stderr:\n%s", p.stderr.String())
		}
		faultSameFiles(t, out, ref, "gauss-snr.csv", "gauss-snr.summary.csv")
		entries, _ := os.ReadDir(out)
		for _, e := range entries {
			if strings.Contains(e.Name(), "journal") || strings.Contains(e.Name(), "run.json") || strings.HasPrefix(e.Name(), ".") {
				t.Errorf("left behind: %s", e.Name())
			}
		}
	})

	t.Run("shards merge", func(t *testing.T) {
		var dirs []string
		for i, env := range [][]string{
			nil,
			{"JOB_COMPLETION_INDEX=1", "WCMC_SHARD_COUNT=3"},
			{"SLURM_ARRAY_TASK_ID=3", "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_COUNT=3"},
		} {
			dir := filepath.Join(root, "shard", string(rune('0'+i)))
			args := faultSweepArgs(dir)
			if env == nil {
				args = append(args, "--shard", "0/3")
			}
			p := startWCMC(t, bin, env, args...)
			faultMustSucceed(t, p)
			if want := "shard " + string(rune('0'+i)) + "/3"; !strings.Contains(p.stderr.String(), want) {
				t.Errorf("stderr does not say %q:\n%s", want, p.stderr.String())
			}
			if _, err := os.Stat(filepath.Join(dir, "gauss-snr.csv")); err == nil {
				t.Errorf("shard %d wrote the final CSV", i)
			}
			dirs = append(dirs, dir)
		}
		merged := filepath.Join(root, "merged")
		faultMustSucceed(t, startWCMC(t, bin, nil, append([]string{"merge", "--out", merged}, dirs...)...))
		faultSameFiles(t, merged, ref, "gauss-snr.csv", "gauss-snr.summary.csv")

		// Two of three shards: refused, naming the missing one.
		p := startWCMC(t, bin, nil, "merge", "--out", filepath.Join(root, "bad"), dirs[0], dirs[2])
		if code := p.wait(t); code == 0 || !strings.Contains(p.stderr.String(), "shard 1/3 (24 tasks): no directory given") {
			t.Errorf("merge of 2 of 3 shards: exit %d\n%s", code, p.stderr.String())
		}
	})
}

// TestStepStopsOnSignal: a step busy computing (here transmit over a
// Rayleigh channel, 2 × 300000 blocks, a few seconds) stops on SIGINT or
// SIGTERM, exits non-zero saying so, and writes nothing; the steps used to
// ignore both and finish with exit 0. (How soon it stops is not asserted:
// a bound on time would fail on a loaded machine; a step that ignored the
// signal would finish and write its output, which is asserted.)
func TestStepStopsOnSignal(t *testing.T) {
	bin := faultBuild(t)
	dir := t.TempDir()
	var files []string
	for k := 1; k <= 2; k++ {
		files = append(files, writeNPY(t, filepath.Join(dir, "samples", "samples-"+string(rune('0'+k))+".npy"), 300000, 3, nil))
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		out := filepath.Join(dir, "rx-"+sig.String())
		// A signal that arrives before wcmc has installed its handler kills
		// the process as it would any program: that start-up window, not
		// wcmc, is what a loaded machine can hit, so such an attempt is
		// made again with a longer wait before the signal.
		var p *wcmcProc
		code := 0
		for wait := 250 * time.Millisecond; ; wait *= 2 {
			p = startWCMC(t, bin, nil, append([]string{"transmit", "--access", "oma", "--out", out}, files...)...)
			time.Sleep(wait)
			p.cmd.Process.Signal(sig)
			code = p.wait(t)
			ws, _ := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || wait >= 8*time.Second {
				break
			}
		}
		if code == 0 {
			t.Fatalf("%v: transmit finished before the signal; make it longer\n%s", sig, p.stderr.String())
		}
		if !strings.Contains(p.stderr.String(), "interrupted") {
			t.Errorf("%v: exit %d\n%s", sig, code, p.stderr.String())
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: %s written", sig, out)
		}
	}
	assertNoTemp(t, dir)
}

// TestRunKilledBetweenFinalRenames kills a run at its tenth file renamed
// into place, in the middle of its final files (the journal's identity
// takes at most the first two): the folder holds new and old files and
// the commit record listing them. The resume finishes that commit before
// anything else, says so, and ends with the files of an uninterrupted run
// and nothing else.
func TestRunKilledBetweenFinalRenames(t *testing.T) {
	bin := faultBuild(t)
	root := t.TempDir()
	args := func(out string) []string { return []string{"run", "gauss-snr", "--quick", "--seed", "4", "--out", out} }
	ref := filepath.Join(root, "ref")
	faultMustSucceed(t, startWCMC(t, bin, nil, args(ref)...))
	out := filepath.Join(root, "killed")
	p := startWCMC(t, bin, []string{atomicfile.KillEnv + "=" + atomicfile.KillFileDone + ":10"}, args(out)...)
	p.wait(t)
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("wcmc was not killed at its tenth rename (%v)\n%s", p.cmd.ProcessState, p.stderr.String())
	}
	if records, _ := filepath.Glob(filepath.Join(out, ".*.commit")); len(records) != 1 {
		t.Fatalf("commit records after the kill: %v, want one", records)
	}
	r := startWCMC(t, bin, nil, append(args(out), "--resume")...)
	faultMustSucceed(t, r)
	if !strings.Contains(r.stderr.String(), "files in "+out+" in place: a process killed between the renames") {
		t.Errorf("the resume does not say it finished the commit:\n%s", r.stderr.String())
	}
	if got, want := faultDirNames(t, out), faultDirNames(t, ref); !slices.Equal(got, want) {
		t.Errorf("files after the resume: %v, want those of the uninterrupted run: %v", got, want)
	}
	faultSameFiles(t, out, ref, "gauss-snr.csv", "gauss-snr.summary.csv")
}

// TestTermDuringFinalWrites sends a run SIGTERM at its tenth file renamed
// into place, once every task is done and the results are being
// committed: the commit finishes, the run exits 0 with the files of an
// uninterrupted run and no journal, and says nothing of stopping tasks or
// resuming.
func TestTermDuringFinalWrites(t *testing.T) {
	bin := faultBuild(t)
	root := t.TempDir()
	args := func(out string) []string { return []string{"run", "gauss-snr", "--quick", "--seed", "4", "--out", out} }
	ref := filepath.Join(root, "ref")
	faultMustSucceed(t, startWCMC(t, bin, nil, args(ref)...))
	out := filepath.Join(root, "termed")
	p := startWCMC(t, bin, []string{atomicfile.KillEnv + "=" + atomicfile.KillFileDone + ":10:TERM"}, args(out)...)
	if code := p.wait(t); code != 0 {
		t.Fatalf("SIGTERM during the final writes: exit %d, want 0\n%s", code, p.stderr.String())
	}
	for _, w := range []string{"no new task starts", "resume", "stopped"} {
		if strings.Contains(p.stderr.String(), w) {
			t.Errorf("SIGTERM during the final writes: stderr mentions %q:\n%s", w, p.stderr.String())
		}
	}
	if got, want := faultDirNames(t, out), faultDirNames(t, ref); !slices.Equal(got, want) {
		t.Errorf("files: %v, want those of the uninterrupted run: %v", got, want)
	}
	faultSameFiles(t, out, ref, "gauss-snr.csv", "gauss-snr.summary.csv")
}
