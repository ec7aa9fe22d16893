package sampler

import (
	"math"
	"unsafe"
)

// The row kernels of the float32 sweep (NewGibbsKernelFloat32): the rows of
// U are stored as float32 and widened to float64 as they are loaded, θ,
// the margins and Uᵀκ stay float64, and the arithmetic is that of the
// float64 kernels on the widened values (widening is exact). So a sweep on
// the float32 rows gives the bits of the float64 sweep on U rounded to
// float32, on every implementation (AVX-512, AVX, portable).

// dotF32Generic is dotGeneric(float64(x), y). It panics if len(y) < len(x).
func dotF32Generic(x []float32, y []float64) float64 {
	var acc [8]float64
	n := len(x)
	y = y[:n]
	i := 0
	for ; i+8 <= n; i += 8 {
		xs, ys := x[i:i+8:i+8], y[i:i+8:i+8]
		for l := range acc {
			acc[l] = math.FMA(float64(xs[l]), ys[l], acc[l])
		}
	}
	if i+4 <= n {
		xs, ys := x[i:i+4:i+4], y[i:i+4:i+4]
		for l := 0; l < 4; l++ {
			acc[l] = math.FMA(float64(xs[l]), ys[l], acc[l])
		}
		i += 4
	}
	var v [4]float64
	for l := range v {
		v[l] = acc[l] + acc[l+4]
	}
	s := (v[0] + v[2]) + (v[1] + v[3])
	for ; i < n; i++ {
		s = math.FMA(float64(x[i]), y[i], s)
	}
	return s
}

// axpyF32Generic is axpyGeneric(alpha, float64(x), y). It panics if
// len(y) < len(x).
func axpyF32Generic(alpha float64, x []float32, y []float64) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = math.FMA(alpha, float64(v), y[i])
	}
}

// dot4F32 sets dst[r] = dotF32Generic(x[r*stride:r*stride+len(y)], y) for
// r < 4. It panics if x is too short or stride negative.
func dot4F32(dst *[4]float64, x []float32, stride int, y []float64) {
	n := len(y)
	if stride < 0 || len(x) < 3*stride+n {
		panic("sampler: dot4F32 length mismatch")
	}
	switch {
	case useAVX512:
		dot4F32AVX512(dst, x, stride, y)
	case useFMA:
		dot4F32FMA(dst, x, stride, y)
	default:
		for r := range dst {
			dst[r] = dotF32Generic(x[r*stride:r*stride+n], y)
		}
	}
}

// axpy4F32 does axpyF32Generic(alpha[r], x[r*stride:r*stride+len(y)], y)
// for r = 0, 1, 2, 3 in turn. It panics if x is too short or stride
// negative.
func axpy4F32(alpha *[4]float64, x []float32, stride int, y []float64) {
	n := len(y)
	if stride < 0 || len(x) < 3*stride+n {
		panic("sampler: axpy4F32 length mismatch")
	}
	switch {
	case useAVX512:
		axpy4F32AVX512(alpha, x, stride, y)
	case useFMA:
		axpy4F32FMA(alpha, x, stride, y)
	default:
		for r, a := range alpha {
			axpyF32Generic(a, x[r*stride:r*stride+n], y)
		}
	}
}

// prefetch32 asks for the cache lines of x to be loaded.
func prefetch32(x []float32) {
	if len(x) >= 2 {
		prefetch(unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(x))), len(x)/2))
	}
}
