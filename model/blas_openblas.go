//go:build openblas

package model

import (
	"gonum.org/v1/gonum/blas"

	"github.com/wcmc-project/wcmc/internal/openblas"
)

// fastBLAS is UseFastBLAS's BLAS with the build tag openblas: every gonum
// BLAS call (this package's products, gonum/mat's Mul, Cholesky, …) goes
// through cgo to the C BLAS the program is linked with (package openblas),
// and the margin and gradient products of Probit are issued as single
// calls (gemm), which OpenBLAS blocks and packs itself, rather than as
// tiles sized for gonum's serial kernel.
//
// Build (Debian: apt install libopenblas-dev):
//
//	CGO_LDFLAGS="-lopenblas" go build -tags openblas ./cmd/wcmc
//
// wcmc runs its tasks in parallel already, so OpenBLAS's own threads
// oversubscribe the cores: set OPENBLAS_NUM_THREADS=1 unless a single
// task runs at a time (see docs/PERFORMANCE.md).
func fastBLAS() (impl blas.Float64, ok bool) {
	return openblas.Implementation{}, true
}
