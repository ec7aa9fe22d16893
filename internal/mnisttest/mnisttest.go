// Package mnisttest finds the real MNIST files for the tests of the
// packages above dataset that need them (dataset's own tests, which it
// cannot serve without an import cycle, have their own).
package mnisttest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wcmc-project/wcmc/dataset"
)

// SharedDir is the shared data folder beside the project, relative to the
// directory of a package at the module's top level (the directory a test
// runs in).
var SharedDir = filepath.Join("..", "..", "shared", "data", "mnist")

// Dir returns a directory with the four real MNIST files: SharedDir, else
// GoMNIST in the Go module cache. Without them the test is skipped, or
// fails when the environment variable CI is set (CI must not pass by
// skipping the MNIST tests).
func Dir(t testing.TB) string {
	t.Helper()
	if dataset.MNISTSplitIn(SharedDir) == dataset.SplitFull {
		return SharedDir
	}
	dir, ok := dataset.FindGoMNIST()
	if ok {
		return dir
	}
	msg := "the four real MNIST files are neither in " + SharedDir + " nor in the Go module cache (" + dir + "); get them with: " + dataset.GoMNISTDownload
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}
