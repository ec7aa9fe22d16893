//go:build unix

package atomicfile

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPendingLeftovers reproduces the leftover of a killed write, in a
// child process: SIGKILL mid-write leaves ".NAME.tmpDIGITS", which
// RemoveStale deletes on the next start (and only for the names it is
// given); a child that catches SIGTERM and calls RemovePending before
// exiting leaves nothing.
func TestPendingLeftovers(t *testing.T) {
	if dir := os.Getenv("ATOMICFILE_CHILD_DIR"); dir != "" {
		p, err := Create(filepath.Join(dir, "run.png"))
		if err != nil {
			panic(err)
		}
		p.WriteString("half a figure")
		if os.Getenv("ATOMICFILE_CHILD_CLEAN") != "" {
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, syscall.SIGTERM)
			go func() {
				<-sig
				RemovePending()
				os.Exit(1)
			}()
		}
		os.Stdout.WriteString("ready\n")
		time.Sleep(time.Minute)
		return
	}
	for _, c := range []struct {
		name  string
		sig   syscall.Signal
		clean bool
	}{{"SIGKILL", syscall.SIGKILL, false}, {"SIGTERM", syscall.SIGTERM, true}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			other := filepath.Join(dir, ".other.csv.tmp123")
			os.WriteFile(other, nil, 0o644)
			cmd := exec.Command(os.Args[0], "-test.run=^TestPendingLeftovers$")
			cmd.Env = append(os.Environ(), "ATOMICFILE_CHILD_DIR="+dir)
			if c.clean {
				cmd.Env = append(cmd.Env, "ATOMICFILE_CHILD_CLEAN=1")
			}
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, _ := bufio.NewReader(out).ReadString('\n')
			if line != "ready\n" {
				t.Fatalf("child said %q", line)
			}
			cmd.Process.Signal(c.sig)
			cmd.Wait()
			temps, _ := filepath.Glob(filepath.Join(dir, ".run.png.tmp*"))
			if c.clean {
				if len(temps) != 0 {
					t.Fatalf("RemovePending on SIGTERM left %v", temps)
				}
				return
			}
			if len(temps) != 1 {
				t.Fatalf("after SIGKILL mid-write: temporary files %v, want one (the leftover to clean)", temps)
			}
			removed, err := RemoveStale(dir, func(n string) bool { return n == "run.png" })
			if err != nil || len(removed) != 1 || removed[0] != temps[0] {
				t.Fatalf("RemoveStale: %v, %v; want [%s]", removed, err, temps[0])
			}
			if _, err := os.Stat(other); err != nil {
				t.Errorf("RemoveStale removed the temporary file of another name: %v", err)
			}
		})
	}
}

// TestSetCommitKilledBetweenRenames kills, in a child process, a Set's
// commit of three files over their old versions at an exact point (the
// fault-injection hook): before its first rename, and after its second.
// The commit record left behind says which files are replaced and which
// not yet (Unfinished); the next writer of those names finishes the
// commit (RemoveStale calls Recover), leaving the three new files and
// nothing else. A record cut short while being written is dropped, the
// files staying as they were.
func TestSetCommitKilledBetweenRenames(t *testing.T) {
	names := []string{"a.csv", "b.csv", "c.json"}
	if dir := os.Getenv("ATOMICFILE_COMMIT_DIR"); dir != "" {
		var s Set
		for _, n := range names {
			if err := s.Add(filepath.Join(dir, n), func(w io.Writer) error { _, err := io.WriteString(w, "new "+n); return err }); err != nil {
				panic(err)
			}
		}
		s.Commit()
		os.Exit(0) // not killed: the parent sees it
	}
	ours := func(n string) bool { return slices.Contains(names, n) }
	contents := func(dir string) []string {
		var out []string
		for _, n := range names {
			b, _ := os.ReadFile(filepath.Join(dir, n))
			out = append(out, string(b))
		}
		return out
	}
	start := func(t *testing.T, kill string) string {
		dir := t.TempDir()
		for _, n := range names {
			os.WriteFile(filepath.Join(dir, n), []byte("old "+n), 0o644)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestSetCommitKilledBetweenRenames$")
		cmd.Env = append(os.Environ(), "ATOMICFILE_COMMIT_DIR="+dir, KillEnv+"="+kill)
		err := cmd.Run()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("the child was not killed at %s: %v", kill, err)
		}
		return dir
	}
	for _, c := range []struct {
		kill     string
		killed   []string // contents right after the kill
		replaced string   // what Unfinished reports
	}{
		{KillFileRename + ":1", []string{"old a.csv", "old b.csv", "old c.json"}, "none replaced, a.csv, b.csv, c.json not yet"},
		{KillFileDone + ":2", []string{"new a.csv", "new b.csv", "old c.json"}, "a.csv, b.csv replaced, c.json not yet"},
	} {
		t.Run(c.kill, func(t *testing.T) {
			dir := start(t, c.kill)
			if got := contents(dir); !slices.Equal(got, c.killed) {
				t.Fatalf("after the kill: %q, want %q", got, c.killed)
			}
			record := filepath.Join(dir, ".a.csv"+recordSuffix)
			err := Unfinished(dir, ours)
			for _, w := range []string{"a.csv, b.csv, c.json in " + dir, c.replaced, record, "the next command that writes them finishes"} {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Unfinished: %v, want it to mention %q", err, w)
				}
			}
			if err := Unfinished(dir, func(n string) bool { return n == "other.csv" }); err != nil {
				t.Errorf("Unfinished for other names: %v", err)
			}
			if _, err := RemoveStale(dir, ours); err != nil {
				t.Fatal(err)
			}
			want := []string{"new a.csv", "new b.csv", "new c.json"}
			if got := contents(dir); !slices.Equal(got, want) {
				t.Errorf("after the next writer's RemoveStale: %q, want %q", got, want)
			}
			if left := dirNames(t, dir); !slices.Equal(left, names) {
				t.Errorf("files left: %v, want only %v", left, names)
			}
			if err := Unfinished(dir, ours); err != nil {
				t.Errorf("Unfinished after the recovery: %v", err)
			}
		})
	}

	t.Run("record cut short", func(t *testing.T) {
		dir := start(t, KillFileRename+":1")
		record := filepath.Join(dir, ".a.csv"+recordSuffix)
		b, err := os.ReadFile(record)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(record, b[:len(b)/2], 0o644)
		if err := Unfinished(dir, ours); err != nil {
			t.Errorf("Unfinished with a record cut short (no rename made): %v", err)
		}
		if _, err := RemoveStale(dir, ours); err != nil {
			t.Fatal(err)
		}
		if got, want := contents(dir), []string{"old a.csv", "old b.csv", "old c.json"}; !slices.Equal(got, want) {
			t.Errorf("after RemoveStale: %q, want the old files %q", got, want)
		}
		if left := dirNames(t, dir); !slices.Equal(left, names) {
			t.Errorf("files left: %v, want only %v", left, names)
		}
	})
}

// dirNames lists the names in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
