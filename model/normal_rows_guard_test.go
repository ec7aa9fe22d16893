//go:build amd64 && !purego

package model

import "testing"

// The vector kernels' wrappers refuse chunks the assembly would read or
// write past: a length not a multiple of 4, longer than polyChunk, or
// with a second slice of another length.
func TestRowKernelChunksChecked(t *testing.T) {
	var lp [polyChunk]float64
	var out [polyChunk / 4]uint8
	for _, c := range []struct {
		name  string
		n, ns int
	}{{"not a multiple of 4", 5, 5}, {"beyond polyChunk", polyChunk + 4, polyChunk + 4}, {"signs shorter", 8, 4}} {
		row, sg := make([]float64, c.n), make([]float64, c.ns)
		if !panics(func() { polyRows(row, sg, 1, &lp[0], &out[0], polyLog) }) {
			t.Errorf("polyRows, %s: no panic", c.name)
		}
		if !panics(func() { cdfRows(sg, row, &out[0]) }) {
			t.Errorf("cdfRows, %s: no panic", c.name)
		}
	}
}

// panics reports whether f panics.
func panics(f func()) (panicked bool) {
	defer func() { panicked = recover() != nil }()
	f()
	return false
}
