package model_test

import (
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/wcmc-project/wcmc/internal/machine"
	"github.com/wcmc-project/wcmc/model"
)

// blasAtImport is gonum's BLAS once model and all it imports are
// initialised, before any test runs: what a program importing model has.
var blasAtImport = blas64.Implementation()

// TestImportLeavesGonumBLAS checks that importing model installs no BLAS.
func TestImportLeavesGonumBLAS(t *testing.T) {
	if _, ok := blasAtImport.(gonum.Implementation); !ok {
		t.Errorf("after importing model, gonum's BLAS is %T, want gonum's own", blasAtImport)
	}
}

// TestUseFastBLAS checks that UseFastBLAS installs this build's BLAS
// (fastBLAS), and that the machine line names whichever BLAS is installed
// before and after.
func TestUseFastBLAS(t *testing.T) {
	saved := blas64.Implementation()
	t.Cleanup(func() { blas64.Use(saved) })
	blas64.Use(gonum.Implementation{})
	if got := machine.BLAS(); got != "gonum" {
		t.Errorf("before UseFastBLAS, machine.BLAS() = %q, want gonum", got)
	}

	model.UseFastBLAS()
	want, line := fastBLAS()
	if got := blas64.Implementation(); got != want {
		t.Errorf("after UseFastBLAS, gonum's BLAS is %T, want %T", got, want)
	}
	if got := machine.BLAS(); !line(got) {
		t.Errorf("after UseFastBLAS, machine.BLAS() = %q, not %T's", got, want)
	}
}
