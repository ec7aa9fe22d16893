//go:build !purego

package bench

import "golang.org/x/sys/cpu"

// fmaPeak256 and fmaPeak512 run n rounds of 12 independent fused
// multiply-adds on 4-wide (AVX2) and 8-wide (AVX-512) registers: 96 and
// 192 flops a round (peak_amd64.s). Call them only where the CPU and the
// OS support the instructions.
//
//go:noescape
func fmaPeak256(n int)

//go:noescape
func fmaPeak512(n int)

// divPeak256 and divPeak512 run n rounds of 12 independent vector
// divisions on 4-wide and 8-wide registers: 48 and 96 divisions a round
// (peak_amd64.s), under the same conditions.
//
//go:noescape
func divPeak256(n int)

//go:noescape
func divPeak512(n int)

// vectorPeak returns a function doing rounds·flopsPerRound floating-point
// operations at the core's widest vector FMA rate, and its name; ok is
// false where the CPU has no vector FMA.
func vectorPeak() (run func(rounds int), flopsPerRound float64, name string, ok bool) {
	switch {
	case cpu.X86.HasAVX512F:
		return fmaPeak512, 12 * 8 * 2, "AVX-512 FMA peak, 1 core", true
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return fmaPeak256, 12 * 4 * 2, "AVX2 FMA peak, 1 core", true
	}
	return nil, 0, "", false
}

// divisionPeak returns a function doing rounds·perRound double-precision
// divisions at the core's widest vector division rate, and its name; ok is
// false where the CPU has no vector kernel.
func divisionPeak() (run func(rounds int), perRound float64, name string, ok bool) {
	switch {
	case cpu.X86.HasAVX512F:
		return divPeak512, 12 * 8, "AVX-512 division peak, 1 core", true
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return divPeak256, 12 * 4, "AVX2 division peak, 1 core", true
	}
	return nil, 0, "", false
}
