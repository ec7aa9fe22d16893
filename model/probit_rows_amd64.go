//go:build !purego

package model

import "golang.org/x/sys/cpu"

// dotCols5AVX2 is the vector kernel of dotCols5 (probit_rows_amd64.s): n
// (a multiple of 4) margins out[i] = ((t0·c0[i] + t4·c4[i]) + t2·c2[i]) +
// (t1·c1[i] + t3·c3[i]), every product and sum rounded on its own.
//
//go:noescape
func dotCols5AVX2(t *[5]float64, c0, c1, c2, c3, c4, out *float64, n int)

// useDotCols reports whether the CPU and OS support AVX2.
var useDotCols = cpu.X86.HasAVX && cpu.X86.HasAVX2
