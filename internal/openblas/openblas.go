//go:build openblas

// Package openblas is OpenBLAS as gonum's BLAS, through gonum's cgo
// binding (gonum.org/v1/netlib), naming itself with the kernels OpenBLAS
// chose for this CPU. Those kernels fix its arithmetic: two machines whose
// OpenBLAS picks different kernels (Haswell on a Zen 4, SkylakeX on a
// Cascade Lake) round the same products differently (docs/PERFORMANCE.md,
// "Same bits where").
//
// Build (Debian: apt install libopenblas-dev):
//
//	CGO_LDFLAGS="-lopenblas" go build -tags openblas ./cmd/wcmc
package openblas

/*
char* openblas_get_config(void);
char* openblas_get_corename(void);
int openblas_get_num_threads(void);
*/
import "C"

import "gonum.org/v1/netlib/blas/netlib"

// Implementation is gonum's netlib binding with a Describe method.
type Implementation struct{ netlib.Implementation }

// Describe returns e.g. "OpenBLAS 0.3.21 (cgo), Haswell kernels, 1 thread".
func (Implementation) Describe() string {
	return describe(C.GoString(C.openblas_get_config()), C.GoString(C.openblas_get_corename()), int(C.openblas_get_num_threads()))
}
