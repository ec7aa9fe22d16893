//go:build !purego

package model

import (
	"math"

	"golang.org/x/sys/cpu"
)

// The AVX-512 forms of the row kernels (normal_rows512_amd64.s): eight
// margins at a time, with the arithmetic of the AVX2 kernels and of the
// scalar code operation for operation, so that their results are the same
// bits. Each runs in three passes over a chunk: the first evaluates the
// polynomial ranges (and the band 6 ≤ x < 8: φ(x), M(x) and log1p's series
// branch, which holds there: 6e−16 < Q(x) < 2⁻²⁹) and packs the tails'
// margins into a list; the second evaluates the list (the continued
// fractions 32 at a time, four chains of divisions in flight, then the
// rest sixteen at a time: no lane idle in a group with one tail margin);
// the third unpacks the results into place. Beyond the AVX2 kernel's
// ranges they evaluate the band, the left tail x ≤ −8 (the continued
// fraction, and log as the Go runtime computes it on amd64) and the right
// tail beyond tailMax (φ with archExp's subnormal results and underflow),
// and the Φ kernel its tails |x| ≥ 8: every margin but NaN.

// polyRowsAVX512 is polyRowsAVX2 for eight margins at a time; len(row) is
// a multiple of 8, and out gets a bit per margin left for the caller in
// out[j/8].
//
//go:noescape
func polyRowsAVX512(row, sg []float64, scale float64, lp *float64, out *uint8, mode int)

// cdfRowsAVX512 is cdfRowsAVX2 for eight margins at a time, with the tails
// |m| ≥ 8; len(m) is a multiple of 8, flags[j/8] gets a bit per margin left
// for the caller.
//
//go:noescape
func cdfRowsAVX512(out, m []float64, flags *uint8)

// hasRows512 reports whether the CPU and OS support the AVX-512
// instructions of the kernels (foundation and DQ) besides what the AVX2
// kernels need; useRows512 selects them (the tests turn it off to run the
// AVX2 kernels).
var (
	hasRows512 = hasPolyRows && cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasPOPCNT
	useRows512 = hasRows512
)

// polyTab512 holds, for each piece of the combined tables (as polyLamTab),
// λ's coefficients then log Φ's, each padded to polyStride: one base
// register reaches both.
var polyTab512 [leftPieces + rightPolyMax*rightScale][2 * polyStride]float64

func init() {
	for k := range polyTab512 {
		copy(polyTab512[k][:polyStride], polyLamTab[k][:])
		copy(polyTab512[k][polyStride:], polyLogTab[k][:])
	}
}

// chainK holds k as a float64 at index k, the partial numerators of the
// continued fraction.
//
//lint:ignore U1000 used from assembly (normal_rows512_amd64.s)
var chainK = func() (k [tailTerms + 1]float64) {
	for i := range k {
		k[i] = float64(i)
	}
	return k
}()

// consts512 are the scalar constants of the AVX-512 kernels, broadcast
// from memory. The assembly names them by byte offset (its #defines), so
// the order is fixed: the ranges' ends, scales and sign masks; then the
// constants of the Go runtime's exponential on amd64 (as cdfConsts); then
// those of its logarithm (math/log_amd64.s: the mantissa mask, the bits of
// ½, its exponent bias, √2/2, ln 2 in two parts, L1…L7).
//
//lint:ignore U1000 used from assembly (normal_rows512_amd64.s)
var consts512 = [...]uint64{
	f64(rightPolyMax), f64(tailSwitch), f64(tailMax), f64(math.Inf(-1)), // 0
	f64(-tailSwitch), f64(leftScale), f64(-0.5), f64(logSqrt2Pi), // 32
	1 << 63, 1<<63 - 1, f64(1), f64(0.5), // 64
	f64(2), f64(500), f64(10), 1, // 96
	leftPieces, 9, tailTerms, 1023, // 128
	f64(1.4426950408889634073599246810018920),                  // 160 log₂e
	f64(0.69314718055966295651160180568695068359375),           // 168 ln 2, upper part
	f64(0.28235290563031577122588448175013436025525412068e-12), // 176 ln 2, lower part
	f64(0.0625),                                                                                 // 184
	f64(2.4801587301587301587e-5), f64(1.9841269841269841270e-4), f64(1.3888888888888888889e-3), // 192
	f64(8.3333333333333333333e-3), f64(4.1666666666666666667e-2), f64(1.6666666666666666667e-1), // 216
	f64(invSqrt2Pi),                               // 240
	0x000FFFFFFFFFFFFF, 0x3FE0000000000000, 0x3FE, // 248
	f64(7.07106781186547524401e-01),                                                             // 272 √2/2
	f64(6.93147180369123816490e-01),                                                             // 280 ln 2, upper part (log)
	f64(1.90821492927058770002e-10),                                                             // 288 ln 2, lower part (log)
	f64(6.666666666666735130e-01), f64(3.999999999940941908e-01), f64(2.857142874366239149e-01), // 296 L1–L3
	f64(2.222219843214978396e-01), f64(1.818357216161805012e-01), f64(1.531383769920937332e-01), // 320 L4–L6
	f64(1.479819860511658591e-01), // 344 L7
	2 * polyStride, polyStride,    // 352 the tables' strides
	1<<64 - 60, 1022, 1 << 52, f64(1600), // 368 archExp's subnormal scaling, npdf's cut-off
}

func f64(x float64) uint64 { return math.Float64bits(x) }
