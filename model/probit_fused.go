package model

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/wcmc-project/wcmc/internal/dgemm"
)

// fusedRows is the number of sample rows of a fused tile's margin block:
// with dgemm.KC data rows, 192×384 margins (576 KiB), which stay in a
// 1 MiB L2 cache from the product that forms them through the special
// functions to the product that reads the weights back. 96 and 384 rows
// were measured within 3% of it for d = 16–128.
const fusedRows = 192

// fusedMaxDim is the largest d whose tiles are fused. Fusing saves the
// passes of a whole tile's margins through memory, which weigh against the
// products' 4d flops a margin only at small d: measured against whole
// tiles (best of interleaved rounds), 0.89–0.93 of the time at d = 16–128,
// 0.98 at d = 200 and 0.98–1.03 at d = 256–300.
const fusedMaxDim = 200

// unfusedTiles makes the tile path form each tile's margins whole (for
// the tests comparing the two).
var unfusedTiles bool

// fuses reports whether dataTerm computes a tile of sr sample rows and nr
// data rows of dimension d by fusedTile: for d ≤ fusedMaxDim, when gonum's
// BLAS calls go to package dgemm's product and it would run the tile's
// products on its vector kernel (the sr×nr margins, and with grad the
// sr×d gradient).
func fuses(sr, nr, d int, grad bool) bool {
	if unfusedTiles || d > fusedMaxDim {
		return false
	}
	if _, ok := blas64.Implementation().(dgemm.Implementation); !ok {
		return false
	}
	return dgemm.UsesKernel(blas.Trans, sr, nr) && (!grad || dgemm.UsesKernel(blas.NoTrans, sr, d))
}

// fusedTile is dataTerm's tile path on one tile — sample rows th (sr×d)
// against data rows u (nr×d) with signs sg — in blocks that stay in cache:
// the data rows in pieces of dgemm.KC, and for each piece the sample rows
// fusedRows at a time, whose margins are formed (dgemm.KernelProduct),
// passed through the special functions of mode (specialRows, the sums of
// log Φ carried from piece to piece in sums, sr entries) and, with grad,
// multiplied back into the gradient rows. The tile path's two products
// are dgemm's kernel products whose inner dimension is d and nr, the
// latter cut at multiples of KC: cut into these blocks, every margin,
// weight and gradient entry has the same arithmetic, and every sum of
// log Φ adds the same values in the same order, so the results are those
// of the whole tile's products bit for bit.
func fusedTile(logj []float64, grad *blas64.General, th, u blas64.General, sg []float64, scale float64, buf, sums []float64, mode int) {
	sr, nr, d := th.Rows, u.Rows, th.Cols
	sums = sums[:sr]
	clear(sums)
	for c0 := 0; c0 < nr; c0 += dgemm.KC {
		n := min(dgemm.KC, nr-c0)
		uc := u.Data[c0*u.Stride:]
		for r0 := 0; r0 < sr; r0 += fusedRows {
			rows := min(fusedRows, sr-r0)
			m := buf[:rows*n]
			dgemm.KernelProduct(blas.NoTrans, blas.Trans, rows, n, d, 1, th.Data[r0*th.Stride:], th.Stride, uc, u.Stride, 0, m, n)
			specialRows(m, rows, n, n, sg[c0:c0+n], scale, sums[r0:r0+rows], mode)
			if grad != nil {
				dgemm.KernelProduct(blas.NoTrans, blas.NoTrans, rows, d, n, 1, m, n, uc, u.Stride, 1, grad.Data[r0*grad.Stride:], grad.Stride)
			}
		}
	}
	if logj != nil {
		for i, s := range sums {
			logj[i] += scale * s
		}
	}
}
