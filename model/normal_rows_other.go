//go:build !amd64 || purego

package model

// Without the vector kernels the generic loops run.
const hasPolyRows, hasRows512 = false, false

var usePolyRows, useRows512 = false, false

func polyGroup() int { return 4 }

func polyRows(row, sg []float64, scale float64, lp *float64, out *uint8, mode int) {
	panic("model: no vector kernel on this platform")
}

func cdfRows(out, m []float64, flags *uint8) {
	panic("model: no vector kernel on this platform")
}
