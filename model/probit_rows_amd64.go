//go:build !purego

package model

import "golang.org/x/sys/cpu"

// dotCols5AVX2 is the vector kernel of dotCols5 (probit_rows_amd64.s): n
// (a multiple of 4) margins out[i] = ((t0·c0[i] + t4·c4[i]) + t2·c2[i]) +
// (t1·c1[i] + t3·c3[i]), every product and sum rounded on its own.
//
//go:noescape
func dotCols5AVX2(t *[5]float64, c0, c1, c2, c3, c4, out *float64, n int)

// addRows5x4AVX2 is the vector kernel of addRows5x4 (probit_rows_amd64.s):
// four gradient rows of five entries (gr, stride gs) get Σ_k w_i[k]·u_k
// (weights w, stride ws; data rows u, stride us), k = 0 … n−1 in order,
// every product and sum rounded on its own.
//
//go:noescape
func addRows5x4AVX2(gr *float64, gs int, w *float64, ws int, u *float64, us int, n int)

// useDotCols reports whether the CPU and OS support AVX2.
var useDotCols = cpu.X86.HasAVX && cpu.X86.HasAVX2
