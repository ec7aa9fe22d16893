package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/internal/dgemm"
)

// TestFusedTilesMatchWholeTiles: under package dgemm's product, the tile
// path in cache-sized blocks (fusedTile) gives the bits of the same path
// forming each tile's margins whole, with each row kernel, for every
// entry point: tiles of several data blocks, each of several dgemm.KC
// pieces and a remainder, sample rows not a multiple of fusedRows, the
// largest d fused, sample counts whose products dgemm hands to
// gonum (which then take the whole-tile path), margins in both tails and
// beyond (a row at 40, a NaN row), and a minibatch.
func TestFusedTilesMatchWholeTiles(t *testing.T) {
	if ok, _ := dgemm.Active(); !ok {
		t.Skip("no dgemm vector kernel: the tile path is never fused")
	}
	saved := blas64.Implementation()
	blas64.Use(dgemm.Implementation{})
	t.Cleanup(func() { blas64.Use(saved) })
	for _, c := range []struct{ n, d, s int }{
		{1300, 30, 2000}, // blocks of 524 rows: pieces of 384 and 140; the last block 252
		{700, 6, 203},
		{300, fusedMaxDim, 50},
		{500, 7, 3},
		{500, 9, 2},
		{40, 12, 1},
	} {
		rng := rand.New(rand.NewPCG(uint64(c.d), uint64(c.s)))
		ts := make([]float64, c.d)
		for j := range ts {
			ts[j] = rng.NormFloat64() / math.Sqrt(float64(c.d)/4)
		}
		u, v := probitData(rng, c.n, ts)
		p, _ := NewProbit(u, v, 2)
		theta := mat.NewDense(c.s, c.d, nil)
		for i := range c.s {
			for j := range c.d {
				theta.Set(i, j, ts[j]+rng.NormFloat64())
			}
		}
		theta.Set(0, 0, 40)
		if c.s > 2 {
			theta.Set(2, c.d-1, math.NaN())
		}
		batch := []int{3, 3, c.n - 1, 0, 17, 17, 25, 8, 9}
		if c.s == 2000 && !fuses(c.s, 524, c.d, true) {
			t.Fatal("the (1300, 30, 2000) tiles are not fused")
		}
		for _, k := range rowKernels() {
			t.Run(fmt.Sprintf("N=%d/d=%d/S=%d/%s", c.n, c.d, c.s, k), func(t *testing.T) {
				defer useRowKernel(k)()
				fused := evalAll(p.Clone(), theta, batch)
				unfusedTiles = true
				whole := evalAll(p.Clone(), theta, batch)
				unfusedTiles = false
				for o := range whole {
					for i := range whole[o] {
						a, b := fused[o][i], whole[o][i]
						if math.Float64bits(a) != math.Float64bits(b) && !(math.IsNaN(a) && math.IsNaN(b)) {
							t.Fatalf("output %d entry %d: fused %v, whole tiles %v", o, i, a, b)
						}
					}
				}
			})
		}
	}
}

// TestFastPathsDoNotAllocate: under package dgemm's product, the d = 5
// row path by groups of four and the fused tile path allocate nothing once
// their scratch is sized.
func TestFastPathsDoNotAllocate(t *testing.T) {
	if ok, _ := dgemm.Active(); !ok {
		t.Skip("no dgemm vector kernel")
	}
	saved := blas64.Implementation()
	blas64.Use(dgemm.Implementation{})
	t.Cleanup(func() { blas64.Use(saved) })
	for _, d := range []int{5, 30} {
		rng := rand.New(rand.NewPCG(51, uint64(d)))
		ts := make([]float64, d)
		for j := range ts {
			ts[j] = rng.NormFloat64() / math.Sqrt(float64(d))
		}
		u, v := probitData(rng, 900, ts)
		p, _ := NewProbit(u, v, 2)
		const s = 300
		theta := mat.NewDense(s, d, nil)
		for i := range s {
			for j := range d {
				theta.Set(i, j, ts[j]+rng.NormFloat64())
			}
		}
		if d == 30 && !fuses(s, 900, d, true) {
			t.Fatal("d = 30 tiles are not fused")
		}
		lj, grad := make([]float64, s), mat.NewDense(s, d, nil)
		batch := []int{1, 5, 9, 100, 150, 899}
		call := func() {
			p.LogJointGrad(lj, grad, theta)
			p.LogJoint(lj, theta)
			p.GradLogJoint(grad, theta)
			p.GradLogJointBatch(grad, theta, batch)
		}
		call()
		if a := testing.AllocsPerRun(5, call); a != 0 {
			t.Errorf("d = %d: %v allocations per call after warm-up", d, a)
		}
	}
}
