//go:build !openblas

package model

import (
	"gonum.org/v1/gonum/blas"

	"github.com/wcmc-project/wcmc/internal/dgemm"
)

// fastBLAS is UseFastBLAS's BLAS without the build tag openblas: gonum's
// BLAS with package dgemm's matrix product, where dgemm has a vector
// kernel for the CPU (AVX-512 or AVX2 with FMA): packed and blocked, 5–8×
// gonum's Dgemm on the experiments' products (docs/PERFORMANCE.md), and
// serial, like the callers' tasks. Elsewhere ok is false and gonum's BLAS
// stays, and with it the tiled products and the row path of Probit that
// suit its kernels.
func fastBLAS() (impl blas.Float64, ok bool) {
	if ok, _ := dgemm.Active(); ok {
		return dgemm.Implementation{}, true
	}
	return nil, false
}
