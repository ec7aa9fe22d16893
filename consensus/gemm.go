package consensus

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
)

// Blocking of gonum's Dgemm (gonum.org/v1/gonum/blas/gonum, v0.17): C is
// cut into dgemmBlock×dgemmBlock blocks, and when there are at least
// dgemmMinPar of them each block is computed by its own goroutine as a
// sequence of products over dgemmBlock-long chunks of the inner dimension.
const (
	dgemmBlock  = 64
	dgemmMinPar = 4
)

// gemm sets C = op(A) op(B), as blas64.Gemm(tA, tB, 1, a, b, 0, c) does,
// without the goroutines and allocations of gonum's parallel Dgemm. When
// gonum would go parallel, gemm makes the same block products itself, one
// after the other, each small enough for gonum's serial kernel: every entry
// of C is accumulated over the same chunks in the same order, so the result
// is bit for bit that of the single call (TestGemmMatchesBLAS). Products
// gonum computes serially, and every product under another BLAS
// implementation (package dgemm's in the pure-Go build where the CPU has
// its kernels, OpenBLAS in the openblas build), are one blas64.Gemm call.
func gemm(tA, tB blas.Transpose, a, b, c blas64.General) {
	m, n := c.Rows, c.Cols
	k := a.Cols
	if tA != blas.NoTrans {
		k = a.Rows
	}
	blocks := func(x int) int { return (x + dgemmBlock - 1) / dgemmBlock }
	if _, ok := blas64.Implementation().(gonum.Implementation); !ok || blocks(m)*blocks(n) < dgemmMinPar || k == 0 {
		blas64.Gemm(tA, tB, 1, a, b, 0, c)
		return
	}
	// sub is the r×s view of x at (i, j).
	sub := func(x blas64.General, i, j, r, s int) blas64.General {
		return blas64.General{Rows: r, Cols: s, Stride: x.Stride, Data: x.Data[i*x.Stride+j:]}
	}
	for i := 0; i < m; i += dgemmBlock {
		mi := min(dgemmBlock, m-i)
		for j := 0; j < n; j += dgemmBlock {
			nj := min(dgemmBlock, n-j)
			cb := sub(c, i, j, mi, nj)
			beta := 0.0
			for l := 0; l < k; l += dgemmBlock {
				kl := min(dgemmBlock, k-l)
				var ab, bb blas64.General
				if tA == blas.NoTrans {
					ab = sub(a, i, l, mi, kl)
				} else {
					ab = sub(a, l, i, kl, mi)
				}
				if tB == blas.NoTrans {
					bb = sub(b, l, j, kl, nj)
				} else {
					bb = sub(b, j, l, nj, kl)
				}
				blas64.Gemm(tA, tB, 1, ab, bb, beta, cb)
				beta = 1
			}
		}
	}
}
