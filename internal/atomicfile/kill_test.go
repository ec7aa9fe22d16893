//go:build unix

package atomicfile

import (
	"bufio"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
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
