//go:build !amd64 || purego

package model

// usePolyRows is false without the vector kernel: the generic loops run.
var usePolyRows = false

func polyRows(row, sg []float64, scale float64, lp *float64, out *uint8, mode int) {
	panic("model: no vector kernel on this platform")
}

func cdfRows(out, m []float64, flags *uint8) {
	panic("model: no vector kernel on this platform")
}
