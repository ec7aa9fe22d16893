//go:build !amd64 || purego

package sampler

// useFMA is false: dot and axpy use their portable forms.
const useFMA = false

func dotFMA(x, y []float64) float64 { return dotGeneric(x, y) }

func dot4FMA(dst *[4]float64, x []float64, stride int, y []float64) {
	for r := range dst {
		dst[r] = dotGeneric(x[r*stride:r*stride+len(y)], y)
	}
}

func axpyFMA(alpha float64, x, y []float64) { axpyGeneric(alpha, x, y) }

func axpy4FMA(alpha *[4]float64, x []float64, stride int, y []float64) {
	for r, a := range alpha {
		axpyGeneric(a, x[r*stride:r*stride+len(y)], y)
	}
}

func prefetch(x []float64) {}

// useAVX512 is false: there are no AVX-512 kernels.
var useAVX512 = false

// The assembly kernels do not exist here; useFMA and useAVX512 keep them
// from being called.

func dot4AVX512(dst *[4]float64, x []float64, stride int, y []float64) {
	panic("sampler: no AVX-512 kernels")
}

func axpy4AVX512(alpha *[4]float64, x []float64, stride int, y []float64) {
	panic("sampler: no AVX-512 kernels")
}

func dot4F32AVX512(dst *[4]float64, x []float32, stride int, y []float64) {
	panic("sampler: no AVX-512 kernels")
}

func axpy4F32AVX512(alpha *[4]float64, x []float32, stride int, y []float64) {
	panic("sampler: no AVX-512 kernels")
}

func dot4F32FMA(dst *[4]float64, x []float32, stride int, y []float64) {
	panic("sampler: no FMA kernels")
}

func axpy4F32FMA(alpha *[4]float64, x []float32, stride int, y []float64) {
	panic("sampler: no FMA kernels")
}
