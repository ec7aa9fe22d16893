package sampler

import "math"

// The row kernels of the Gibbs sweep. Their arithmetic is fixed — fused
// multiply-adds in a set order — so that the AVX/FMA assembly on amd64
// (kernel_amd64.s) and the portable code below (math.FMA: one instruction
// on arm64 and on amd64 with FMA3, emulated exactly elsewhere) give
// bit-identical results: on amd64 a chain does not depend on whether the
// CPU has FMA3 (across architectures the compiler may fuse other
// arithmetic differently, so no such promise is made there).

// dotGeneric returns Σ x_i y_i computed as eight interleaved partial sums:
// lane l accumulates fma(x_i, y_i, ·) over i ≡ l (mod 8) for the full
// blocks of 8, then lanes 0–3 take one more block of 4 if at least 4
// entries remain; the lanes are reduced as v_l = a_l + a_{l+4}, then
// (v₀+v₂)+(v₁+v₃), and the last len(x) mod 4 terms are added by fma in
// order. It panics if len(y) < len(x).
func dotGeneric(x, y []float64) float64 {
	var acc [8]float64
	n := len(x)
	y = y[:n]
	i := 0
	for ; i+8 <= n; i += 8 {
		xs, ys := x[i:i+8:i+8], y[i:i+8:i+8]
		for l := range acc {
			acc[l] = math.FMA(xs[l], ys[l], acc[l])
		}
	}
	if i+4 <= n {
		xs, ys := x[i:i+4:i+4], y[i:i+4:i+4]
		for l := 0; l < 4; l++ {
			acc[l] = math.FMA(xs[l], ys[l], acc[l])
		}
		i += 4
	}
	var v [4]float64
	for l := range v {
		v[l] = acc[l] + acc[l+4]
	}
	s := (v[0] + v[2]) + (v[1] + v[3])
	for ; i < n; i++ {
		s = math.FMA(x[i], y[i], s)
	}
	return s
}

// axpyGeneric sets y_i = fma(alpha, x_i, y_i) for i < len(x). It panics if
// len(y) < len(x).
func axpyGeneric(alpha float64, x, y []float64) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = math.FMA(alpha, v, y[i])
	}
}

// dot4 sets dst[r] = dot(x[r*stride:r*stride+len(y)], y) for r < 4. It
// panics if x is too short or stride negative.
func dot4(dst *[4]float64, x []float64, stride int, y []float64) {
	n := len(y)
	if stride < 0 || len(x) < 3*stride+n {
		panic("sampler: dot4 length mismatch")
	}
	if useAVX512 {
		dot4AVX512(dst, x, stride, y)
		return
	}
	if useFMA {
		dot4FMA(dst, x, stride, y)
		return
	}
	for r := range dst {
		dst[r] = dotGeneric(x[r*stride:r*stride+n], y)
	}
}

// axpy4 does axpy(alpha[r], x[r*stride:r*stride+len(y)], y) for r = 0, 1,
// 2, 3 in turn. It panics if x is too short or stride negative.
func axpy4(alpha *[4]float64, x []float64, stride int, y []float64) {
	n := len(y)
	if stride < 0 || len(x) < 3*stride+n {
		panic("sampler: axpy4 length mismatch")
	}
	if useAVX512 {
		axpy4AVX512(alpha, x, stride, y)
		return
	}
	if useFMA {
		axpy4FMA(alpha, x, stride, y)
		return
	}
	for r, a := range alpha {
		axpyGeneric(a, x[r*stride:r*stride+n], y)
	}
}

// dot returns Σ x_i y_i with the arithmetic of dotGeneric. It panics if
// len(y) < len(x).
func dot(x, y []float64) float64 {
	if len(y) < len(x) {
		panic("sampler: dot length mismatch")
	}
	if useFMA {
		return dotFMA(x, y)
	}
	return dotGeneric(x, y)
}

// axpy sets y_i = fma(alpha, x_i, y_i) for i < len(x). It panics if
// len(y) < len(x).
func axpy(alpha float64, x, y []float64) {
	if len(y) < len(x) {
		panic("sampler: axpy length mismatch")
	}
	if useFMA {
		axpyFMA(alpha, x, y)
		return
	}
	axpyGeneric(alpha, x, y)
}

// RowKernels names the implementation of the Gibbs sweep's row kernels
// in use: "avx512-fma" or "avx-fma" (amd64 assembly) or "portable"
// (math.FMA). All give the same results.
func RowKernels() string {
	if useAVX512 {
		return "avx512-fma"
	}
	if useFMA {
		return "avx-fma"
	}
	return "portable"
}
