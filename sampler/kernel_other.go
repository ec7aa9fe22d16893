//go:build !amd64 || purego

package sampler

const useFMA = false

// dot returns Σ x_i y_i with the fixed FMA arithmetic of dotGeneric. It
// panics if len(y) < len(x).
func dot(x, y []float64) float64 {
	if len(y) < len(x) {
		panic("sampler: dot length mismatch")
	}
	return dotGeneric(x, y)
}

// axpy sets y_i = fma(alpha, x_i, y_i) for i < len(x). It panics if
// len(y) < len(x).
func axpy(alpha float64, x, y []float64) {
	if len(y) < len(x) {
		panic("sampler: axpy length mismatch")
	}
	axpyGeneric(alpha, x, y)
}
