//go:build !purego

package sampler

import "golang.org/x/sys/cpu"

// Implemented in kernel_amd64.s and kernel512_amd64.s.

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

func xgetbv0() (eax uint32)

// dotFMA, dot4FMA, axpyFMA and axpy4FMA are the AVX/FMA forms of dot,
// dot4, axpy and axpy4, with the arithmetic of dotGeneric and
// axpyGeneric; callers check the lengths.
//
//go:noescape
func dotFMA(x, y []float64) float64

//go:noescape
func dot4FMA(dst *[4]float64, x []float64, stride int, y []float64)

//go:noescape
func axpyFMA(alpha float64, x, y []float64)

//go:noescape
func axpy4FMA(alpha *[4]float64, x []float64, stride int, y []float64)

// dot4AVX512 and axpy4AVX512 are the AVX-512 forms of dot4 and axpy4,
// with the same arithmetic; callers check the lengths.
//
//go:noescape
func dot4AVX512(dst *[4]float64, x []float64, stride int, y []float64)

//go:noescape
func axpy4AVX512(alpha *[4]float64, x []float64, stride int, y []float64)

// dot4F32FMA, axpy4F32FMA (AVX/FMA) and dot4F32AVX512, axpy4F32AVX512 are
// the forms of dot4F32 and axpy4F32, with the same arithmetic; callers
// check the lengths.
//
//go:noescape
func dot4F32FMA(dst *[4]float64, x []float32, stride int, y []float64)

//go:noescape
func axpy4F32FMA(alpha *[4]float64, x []float32, stride int, y []float64)

//go:noescape
func dot4F32AVX512(dst *[4]float64, x []float32, stride int, y []float64)

//go:noescape
func axpy4F32AVX512(alpha *[4]float64, x []float32, stride int, y []float64)

// prefetch asks for the cache lines of x to be loaded.
//
//go:noescape
func prefetch(x []float64)

// useFMA reports whether the CPU and OS support AVX and FMA3 (CPUID leaf 1
// ECX bits 12, 27 and 28, and XCR0 bits 1–2: SSE and AVX state enabled).
var useFMA = func() bool {
	if maxLeaf, _, _, _ := cpuid(0, 0); maxLeaf < 1 {
		return false
	}
	_, _, ecx, _ := cpuid(1, 0)
	const fma, osxsave, avx = 1 << 12, 1 << 27, 1 << 28
	if ecx&(fma|osxsave|avx) != fma|osxsave|avx {
		return false
	}
	return xgetbv0()&6 == 6
}()

// useAVX512 reports whether the four-row kernels use their AVX-512 forms:
// the CPU and OS support AVX-512F besides AVX and FMA3 (the tests turn it
// off to run the AVX forms).
var useAVX512 = useFMA && cpu.X86.HasAVX512F
