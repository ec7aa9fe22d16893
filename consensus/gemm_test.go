package consensus

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
)

// useGonumBLAS selects gonum's BLAS for the rest of test t: the paths
// that reproduce its blocking, and hashes recorded with it, are checked
// under it whatever the build's own BLAS (package dgemm's product, or
// OpenBLAS).
func useGonumBLAS(t *testing.T) {
	saved := blas64.Implementation()
	blas64.Use(gonum.Implementation{})
	t.Cleanup(func() { blas64.Use(saved) })
}

// TestGemmMatchesBLAS checks gemm's block-by-block emulation of gonum's
// parallel Dgemm against the single call.
func TestGemmMatchesBLAS(t *testing.T) {
	useGonumBLAS(t)
	rng := rand.New(rand.NewPCG(1, 2))
	// general returns an r×c matrix with random entries inside a wider
	// array (stride c+3), so that views are exercised.
	general := func(r, c int) blas64.General {
		g := blas64.General{Rows: r, Cols: c, Stride: c + 3, Data: make([]float64, r*(c+3))}
		for i := range g.Data {
			g.Data[i] = rng.NormFloat64()
		}
		return g
	}
	shapes := []struct{ m, n, k int }{
		{5, 10, 1000},   // gradient product, d = 5: serial in gonum
		{1000, 5, 10},   // map product, S = 1000: parallel, one inner chunk
		{300, 40, 80},   // parallel, two inner chunks
		{300, 300, 600}, // d = 300, m_r = 600
		{130, 129, 65},  // ragged blocks
		{3, 3, 3},
	}
	for _, sh := range shapes {
		for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				var a, b blas64.General
				if tA == blas.NoTrans {
					a = general(sh.m, sh.k)
				} else {
					a = general(sh.k, sh.m)
				}
				if tB == blas.NoTrans {
					b = general(sh.k, sh.n)
				} else {
					b = general(sh.n, sh.k)
				}
				want, got := general(sh.m, sh.n), general(sh.m, sh.n)
				blas64.Gemm(tA, tB, 1, a, b, 0, want)
				gemm(tA, tB, a, b, got)
				for i := range sh.m {
					for j := range sh.n {
						if w, g := want.Data[i*want.Stride+j], got.Data[i*got.Stride+j]; w != g {
							t.Fatalf("%v %v %v: C[%d,%d] = %v, blas64.Gemm %v", sh, tA, tB, i, j, g, w)
						}
					}
				}
				if n := testing.AllocsPerRun(2, func() { gemm(tA, tB, a, b, got) }); n != 0 {
					t.Errorf("%v %v %v: %v allocations", sh, tA, tB, n)
				}
			}
		}
	}
}
