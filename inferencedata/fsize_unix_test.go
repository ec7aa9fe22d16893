//go:build unix

package inferencedata

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// fsizeChild is the environment variable under which
// TestWriteFileSizeLimit's child process writes under a file size limit.
const fsizeChild = "WCMC_TEST_FSIZE_CHILD"

// TestWriteFileSizeLimit: under a file size limit (ulimit -f) Write's
// error named a file in its temporary directory, already removed, and not
// the limit; it names the store and says a size limit was reached. The
// limit is set in a child process, so that it binds no other test; the
// store is named relative to its working directory, as on a command line.
func TestWriteFileSizeLimit(t *testing.T) {
	if os.Getenv(fsizeChild) != "" {
		lim := syscall.Rlimit{Cur: 1000, Max: 1000}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			fmt.Println("setrlimit:", err)
			os.Exit(3)
		}
		fmt.Println(Write("out.zarr", testData()))
		os.Exit(0)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteFileSizeLimit$")
	cmd.Env = append(os.Environ(), fsizeChild+"=1")
	cmd.Dir = dir
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, b)
	}
	msg := strings.TrimSpace(string(b))
	if !strings.Contains(msg, "writing out.zarr: write out.zarr/posterior/") || strings.Contains(msg, ".tmp") || !strings.Contains(msg, "file size limit") {
		t.Errorf("error %q: want one naming out.zarr and the file size limit, and no temporary path", msg)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left in %s: %v", dir, entries)
	}
}
