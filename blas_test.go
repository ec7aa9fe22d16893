package wcmc_test

import (
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"

	_ "github.com/wcmc-project/wcmc"
)

// blasAtImport is gonum's BLAS once wcmc and all it imports are
// initialised, before any test runs: what a program importing wcmc has.
var blasAtImport = blas64.Implementation()

// TestImportLeavesGonumBLAS checks that importing wcmc installs no BLAS
// (model.UseFastBLAS is the opt-in).
func TestImportLeavesGonumBLAS(t *testing.T) {
	if _, ok := blasAtImport.(gonum.Implementation); !ok {
		t.Errorf("after importing wcmc, gonum's BLAS is %T, want gonum's own", blasAtImport)
	}
}
