package main

import (
	"os"
	"testing"

	"github.com/wcmc-project/wcmc/model"
)

// TestMain installs the BLAS main installs before any command runs
// (model.UseFastBLAS), so that the tests run the commands as the binary
// does: its arithmetic (the digits of the walkthrough in docs/OWN_DATA.md)
// and its machine line.
func TestMain(m *testing.M) {
	model.UseFastBLAS()
	os.Exit(m.Run())
}
