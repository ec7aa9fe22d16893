//go:build !openblas

package model_test

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/wcmc-project/wcmc/internal/dgemm"
)

// fastBLAS is the BLAS UseFastBLAS installs without the openblas tag,
// package dgemm's product where it has a vector kernel for the CPU and
// gonum's elsewhere, and a check of the machine line's name for it.
func fastBLAS() (blas.Float64, func(string) bool) {
	if ok, kernel := dgemm.Active(); ok {
		return dgemm.Implementation{}, func(line string) bool { return line == dgemm.Name+", "+kernel }
	}
	return gonum.Implementation{}, func(line string) bool { return line == "gonum" }
}
