//go:build !amd64 || purego

package model

// useDotCols is false without the vector kernels: the loops of dotCols5
// and addRows5x4 run.
var useDotCols = false

func dotCols5AVX2(t *[5]float64, c0, c1, c2, c3, c4, out *float64, n int) {
	panic("model: no vector kernel on this platform")
}

func addRows5x4AVX2(gr *float64, gs int, w *float64, ws int, u *float64, us int, n int) {
	panic("model: no vector kernel on this platform")
}
