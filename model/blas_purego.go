//go:build !openblas

package model

import (
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/wcmc-project/wcmc/internal/dgemm"
)

// Without the build tag openblas, every gonum BLAS call of the program
// goes to gonum's pure-Go BLAS except the matrix product, which is
// package dgemm's where it has a vector kernel for the CPU (AVX-512 or
// AVX2 with FMA): packed and blocked, 5–8× gonum's Dgemm on the
// experiments' products (docs/PERFORMANCE.md), and serial, like the
// callers' tasks. Elsewhere gonum's BLAS stays, and with it the tiled
// products and the row path of Probit that suit its kernels.
func init() {
	if ok, _ := dgemm.Active(); ok {
		blas64.Use(dgemm.Implementation{})
	}
}
