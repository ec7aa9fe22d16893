package model

import "gonum.org/v1/gonum/blas/blas64"

// UseFastBLAS makes this build's BLAS gonum's (blas64.Use): without the
// build tag openblas, package dgemm's matrix product over gonum's BLAS
// where the CPU has its vector kernel (amd64 with AVX2 and FMA), and
// nothing changes elsewhere; with the tag, OpenBLAS through cgo for every
// routine. The choice is process-wide: every gonum BLAS call of the
// program, this module's or not, goes to it afterwards. Importing wcmc or
// model installs nothing; gonum's own BLAS stays until this is called.
// Call it at start, before any BLAS call runs (blas64.Use is not safe
// concurrently with them); the wcmc command does.
func UseFastBLAS() {
	if impl, ok := fastBLAS(); ok {
		blas64.Use(impl)
	}
}
