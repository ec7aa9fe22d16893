//go:build !purego

package sampler

// cpuid and xgetbv0 are in kernel_amd64.s.
func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
func xgetbv0() (eax uint32)

// dotFMA and axpyFMA are the AVX/FMA forms of dotGeneric and axpyGeneric,
// with the same arithmetic (kernel_amd64.s).
//
//go:noescape
func dotFMA(x, y []float64) float64

//go:noescape
func axpyFMA(alpha float64, x, y []float64)

// useFMA reports whether the CPU and OS support AVX and FMA3 (CPUID leaf 1
// ECX bits 12, 27, 28 and XCR0 bits 1–2: SSE and AVX state saved).
var useFMA = func() bool {
	if max, _, _, _ := cpuid(0, 0); max < 1 {
		return false
	}
	_, _, ecx, _ := cpuid(1, 0)
	const fma, osxsave, avx = 1 << 12, 1 << 27, 1 << 28
	if ecx&(fma|osxsave|avx) != fma|osxsave|avx {
		return false
	}
	return xgetbv0()&6 == 6
}()

// dot returns Σ x_i y_i with the fixed FMA arithmetic of dotGeneric. It
// panics if len(y) < len(x).
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
