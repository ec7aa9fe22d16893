// Package pycheck finds the Python interpreter that interoperability tests
// run (e.g. xarray opening a zarr store written by wcmc).
package pycheck

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Python returns a Python 3 interpreter that imports every module: the
// first of $WCMC_PYTHON, python3 on the PATH and /usr/bin/python3 (where
// Debian's python3-* packages install when the PATH leads to another
// Python). When there is none it skips the test, or fails it if the
// environment variable CI is set (CI installs them: .ci/run). Under
// -short it skips the test (starting Python takes seconds).
func Python(t testing.TB, modules ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs Python (-short)")
	}
	imp := "import " + strings.Join(modules, ", ")
	var tried []string
	for _, py := range []string{os.Getenv("WCMC_PYTHON"), "python3", "/usr/bin/python3"} {
		if py == "" {
			continue
		}
		out, err := exec.Command(py, "-c", imp).CombinedOutput()
		if err == nil {
			return py
		}
		tried = append(tried, fmt.Sprintf("  %s: %v %s", py, err, bytes.TrimSpace(out)))
	}
	msg := fmt.Sprintf("no python3 that can %q:\n%s", imp, strings.Join(tried, "\n"))
	if os.Getenv("CI") != "" {
		t.Fatalf("CI is set and %s\n(.ci/run installs Debian's python3-xarray python3-zarr python3-numpy)", msg)
	}
	t.Skip(msg)
	return ""
}
