//go:build !amd64 || purego

package model

// useDotCols is false without the vector kernel: dotCols5's loop runs.
var useDotCols = false

func dotCols5AVX2(t *[5]float64, c0, c1, c2, c3, c4, out *float64, n int) {
	panic("model: no vector kernel on this platform")
}
