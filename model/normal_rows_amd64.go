//go:build !purego

package model

import "golang.org/x/sys/cpu"

// polyRowsAVX2 is the vector kernel of the row functions
// (normal_rows_amd64.s; see normal_rows.go).
//
//go:noescape
func polyRowsAVX2(row, sg []float64, scale float64, lp *float64, out *uint8, mode int)

// hasPolyRows reports whether the CPU and OS support AVX2 and FMA3 and the
// Go runtime's math.Exp takes its FMA branch (which it does when AVX and FMA
// are both on; the kernel's exponential replicates that branch). AVX is
// checked apart from AVX2 because GODEBUG=cpu.avx=off turns off the
// runtime's AVX, and with it that branch, but not x/sys/cpu's AVX2.
// usePolyRows selects the kernels (the tests turn it off to run the generic
// loops).
var (
	hasPolyRows = cpu.X86.HasAVX && cpu.X86.HasAVX2 && cpu.X86.HasFMA
	usePolyRows = hasPolyRows
)

// polyGroup returns the number of margins the kernel in use takes at a
// time: 8 (AVX-512) or 4 (AVX2). The kernels set a bit of out[j/polyGroup]
// per margin j left for the caller.
func polyGroup() int {
	if useRows512 {
		return 8
	}
	return 4
}

// polyRows runs the kernel on a chunk: a whole number of groups (of
// polyGroup margins), at most polyChunk margins (the size of the callers'
// lp and out buffers), sg as long as row. The assembly trusts these; a
// caller breaking them panics here instead of reading or writing past a
// slice.
func polyRows(row, sg []float64, scale float64, lp *float64, out *uint8, mode int) {
	if len(row)%polyGroup() != 0 || len(row) > polyChunk || len(sg) != len(row) {
		panic("model: polyRows needs a chunk of whole groups, ≤ polyChunk margins, with as many signs")
	}
	if useRows512 {
		polyRowsAVX512(row, sg, scale, lp, out, mode)
		return
	}
	polyRowsAVX2(row, sg, scale, lp, out, mode)
}

// cdfRowsAVX2 is the vector kernel of cdfRowAdd (normal_rows_amd64.s).
//
//go:noescape
func cdfRowsAVX2(out, m []float64, flags *uint8)

// cdfRows runs the Φ kernel on a chunk of whole groups, ≤ polyChunk
// margins (the size of the callers' flags buffer), out as long as m; it
// panics otherwise, as polyRows does.
func cdfRows(out, m []float64, flags *uint8) {
	if len(m)%polyGroup() != 0 || len(m) > polyChunk || len(out) != len(m) {
		panic("model: cdfRows needs a chunk of whole groups, ≤ polyChunk margins, and as many sums")
	}
	if useRows512 {
		cdfRowsAVX512(out, m, flags)
		return
	}
	cdfRowsAVX2(out, m, flags)
}
