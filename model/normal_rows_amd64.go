//go:build !purego

package model

import "golang.org/x/sys/cpu"

// polyRowsAVX2 is the vector kernel of the row functions
// (normal_rows_amd64.s; see normal_rows.go).
//
//go:noescape
func polyRowsAVX2(row, sg []float64, scale float64, lp *float64, out *uint8, mode int)

// usePolyRows reports whether the CPU and OS support AVX2 and FMA3 and the
// Go runtime's math.Exp takes its FMA branch (which it does when AVX and FMA
// are both on; the kernel's exponential replicates that branch). AVX is
// checked apart from AVX2 because GODEBUG=cpu.avx=off turns off the
// runtime's AVX, and with it that branch, but not x/sys/cpu's AVX2.
var usePolyRows = cpu.X86.HasAVX && cpu.X86.HasAVX2 && cpu.X86.HasFMA

func polyRows(row, sg []float64, scale float64, lp *float64, out *uint8, mode int) {
	polyRowsAVX2(row, sg, scale, lp, out, mode)
}

// cdfRowsAVX2 is the vector kernel of cdfRowAdd (normal_rows_amd64.s).
//
//go:noescape
func cdfRowsAVX2(out, m []float64, flags *uint8)

func cdfRows(out, m []float64, flags *uint8) { cdfRowsAVX2(out, m, flags) }
