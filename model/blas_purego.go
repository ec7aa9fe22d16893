//go:build !openblas

package model

import (
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/wcmc-project/wcmc/internal/dgemm"
)

// Without the build tag openblas, every gonum BLAS call of the program
// goes to gonum's pure-Go BLAS except the matrix product, which is
// package dgemm's: packed and blocked, with an AVX-512 or AVX2 kernel
// where the CPU has one, 4–10× gonum's Dgemm on the products of the
// experiments (docs/PERFORMANCE.md), and serial, like the callers' tasks.
func init() {
	blas64.Use(dgemm.Implementation{})
}
