package model

import (
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/wcmc-project/wcmc/internal/dgemm"
)

// rowsMaxDim is the largest d for which the probit data term computes each
// tile sample row by sample row in Go (rowTile) instead of by two BLAS
// products, with the pure-Go BLAS: at small d a product with an inner
// dimension of d is a call to gonum's dot or axpy kernel per margin, and
// the calls cost more than the arithmetic. Measured (docs/PERFORMANCE.md):
// 1.4× faster at d = 5 (the loops written out, dotRows5 and addRows5); no
// faster from d = 8 on (the generic loops), slower at d = 30.
const rowsMaxDim = 5

// byRows reports whether the data term of a d-dimensional target takes the
// row path: d ≤ rowsMaxDim in the pure-Go builds, under gonum's BLAS or
// package dgemm's product. Under dgemm, the tile path was measured slower
// for SGLD's one-sample minibatch gradients (probit-gradients: 1.5× the
// row path's SGLD time) before dgemm routed one- and two-row products to
// gonum; it was not measured again. The row path sums as gonum's kernels
// do, so under gonum's BLAS it equals the tile path bit for bit; under
// dgemm the d ≤ 5 data term is the row path's arithmetic, not dgemm's. It
// is not taken under another BLAS (the openblas build), whose results are
// that library's.
func byRows(d int) bool { return d <= rowsMaxDim && pureGoBLAS() && !tilesOnly }

// pureGoBLAS reports whether gonum's calls go to gonum's BLAS or to
// package dgemm's product (UseFastBLAS without the openblas tag).
func pureGoBLAS() bool {
	switch blas64.Implementation().(type) {
	case gonum.Implementation, dgemm.Implementation:
		return true
	}
	return false
}

// tilesOnly makes every d take the tile path (for the tests comparing the
// two).
var tilesOnly bool

// rowTile is dataTerm's work on one tile — sample rows th (sr×d) against
// data rows u (nr×d) with signs sg — computed one sample row at a time: the
// nr margins θᵀu_n into buf, the special functions as the tile path
// applies them (logPhiMillsRow, logPhiRow or invMillsRow), and
// grad_row += Σ_n w_n u_n. The arithmetic is that of the tile path with
// gonum's serial kernels, operation for operation: each margin is gonum's
// DotUnitary (dotRow), and the gradient adds round(w_n·u_nj) to grad_row,j
// for n in order, skipping w_n = 0, as dgemmSerialNotNot's AxpyUnitary
// calls do. The results are therefore bit-identical to the tile path's.
//
// At d = 5 with at least colsMinRows sample rows, the tile's data rows are
// first copied column by column into cols (5·nr entries), and the margins
// of each sample row computed from the columns (dotCols5: a vector kernel
// on amd64 with AVX2), with dotRows5's arithmetic, operation for operation;
// and the sample rows are taken four at a time (rowGroup5).
func rowTile(logj []float64, grad *blas64.General, th, u blas64.General, sg []float64, scale float64, buf, cols []float64) {
	d, nr := th.Cols, u.Rows
	byCols := d == 5 && th.Rows >= colsMinRows
	r0 := 0
	if byCols {
		cols = cols[:5*nr]
		for n := range nr {
			un := u.Data[n*u.Stride : n*u.Stride+5]
			cols[n], cols[nr+n], cols[2*nr+n], cols[3*nr+n], cols[4*nr+n] = un[0], un[1], un[2], un[3], un[4]
		}
		if !rowByRow {
			for ; r0+specialGroup <= th.Rows; r0 += specialGroup {
				rowGroup5(logj, grad, th, r0, u, sg, scale, buf, cols)
			}
		}
	}
	buf = buf[:nr]
	for r := r0; r < th.Rows; r++ {
		t := th.Data[r*th.Stride : r*th.Stride+d]
		if byCols {
			dotCols5((*[5]float64)(t), cols, nr, buf)
		} else if d == 5 {
			dotRows5((*[5]float64)(t), u, buf)
		} else {
			for n := range buf {
				buf[n] = dotRow(t, u.Data[n*u.Stride:n*u.Stride+d])
			}
		}
		switch {
		case logj != nil && grad != nil:
			logj[r] += scale * logPhiMillsRow(buf, sg, scale)
		case logj != nil:
			logj[r] += scale * logPhiRow(buf, sg)
			continue
		default:
			invMillsRow(buf, sg, scale)
		}
		g := grad.Data[r*grad.Stride : r*grad.Stride+d]
		if d == 5 {
			addRows5((*[5]float64)(g), buf, u)
			continue
		}
		for n, w := range buf {
			if w == 0 {
				continue
			}
			un := u.Data[n*u.Stride : n*u.Stride+d]
			for j, x := range un {
				g[j] += float64(w * x)
			}
		}
	}
}

// rowByRow makes rowTile take every sample row on its own (for the tests
// comparing it with rowGroup5).
var rowByRow bool

// rowGroup5 is rowTile's work on the four sample rows r0 … r0+3 of a
// d = 5 tile whose data are in cols (column j at cols[j·nr:]), a chunk of
// polyChunk data rows at a time: the four rows' margins (dotCols5) into
// buf (4·min(nr, polyChunk) entries), their special functions with the
// sums of log Φ added in four interleaved chains (specialRows), and their
// gradients (addRows5x4). Each margin, weight, sum and gradient entry is
// computed as rowTile computes it row by row, in the same order, so the
// results are the same bits.
func rowGroup5(logj []float64, grad *blas64.General, th blas64.General, r0 int, u blas64.General, sg []float64, scale float64, buf, cols []float64) {
	nr := u.Rows
	cs := min(polyChunk, nr)
	buf = buf[:specialGroup*cs]
	mode := specialMode(logj != nil, grad != nil)
	var sums [specialGroup]float64
	for c0 := 0; c0 < nr; c0 += cs {
		n := min(cs, nr-c0)
		for i := range specialGroup {
			t := th.Data[(r0+i)*th.Stride : (r0+i)*th.Stride+5]
			dotCols5((*[5]float64)(t), cols[c0:], nr, buf[i*cs:i*cs+n])
		}
		specialRows(buf, specialGroup, cs, n, sg[c0:c0+n], scale, sums[:], mode)
		if grad != nil {
			addRows5x4(grad.Data[r0*grad.Stride:], grad.Stride, buf, cs, n, u.Data[c0*u.Stride:], u.Stride)
		}
	}
	if logj != nil {
		for i, s := range sums {
			logj[r0+i] += scale * s
		}
	}
}

// dotRow returns xᵀy summed as gonum's DotUnitary sums it on amd64: four
// partial sums over blocks of four (two SSE2 lanes each), the remaining
// one to three products added to the first, then (s0+s2) + (s1+s3); each
// product rounded before it is added (the conversions forbid fusing).
func dotRow(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += float64(x[i] * y[i])
		s1 += float64(x[i+1] * y[i+1])
		s2 += float64(x[i+2] * y[i+2])
		s3 += float64(x[i+3] * y[i+3])
	}
	for ; i < len(x); i++ {
		s0 += float64(x[i] * y[i])
	}
	return (s0 + s2) + (s1 + s3)
}

// dotRows5 and addRows5 are the two loops of rowTile written out for
// d = 5 (the synthetic probit experiments), with the running sums in
// registers; the arithmetic is dotRow's and the generic loop's, except
// that a margin whose five products are all −0 is −0 here and +0 there
// (dotRow's partial sums start from +0), which no special function
// distinguishes.
func dotRows5(t *[5]float64, u blas64.General, buf []float64) {
	t0, t1, t2, t3, t4 := t[0], t[1], t[2], t[3], t[4]
	for n := range buf {
		un := (*[5]float64)(u.Data[n*u.Stride : n*u.Stride+5])
		s0 := float64(t0*un[0]) + float64(t4*un[4])
		buf[n] = (s0 + float64(t2*un[2])) + (float64(t1*un[1]) + float64(t3*un[3]))
	}
}

// colsMinRows is the number of sample rows from which rowTile copies a
// d = 5 tile into columns: the copy costs about a row's margins.
const colsMinRows = 4

// dotCols5 computes dotRows5's margins from the five columns of the tile
// (cols: column j at cols[j·ld : j·ld+len(buf)]), four at a time in
// the vector kernel (AVX instructions; enabled with AVX2) where there is
// one; the arithmetic is dotRows5's,
// operation for operation (TestDotCols5MatchesRows).
func dotCols5(t *[5]float64, cols []float64, ld int, buf []float64) {
	n := len(buf)
	c0, c1, c2, c3, c4 := cols[:n], cols[ld:ld+n], cols[2*ld:2*ld+n], cols[3*ld:3*ld+n], cols[4*ld:4*ld+n]
	i := 0
	if useDotCols && n >= 4 {
		i = n &^ 3
		dotCols5AVX2(t, &c0[0], &c1[0], &c2[0], &c3[0], &c4[0], &buf[0], i)
	}
	t0, t1, t2, t3, t4 := t[0], t[1], t[2], t[3], t[4]
	for ; i < n; i++ {
		s0 := float64(t0*c0[i]) + float64(t4*c4[i])
		buf[i] = (s0 + float64(t2*c2[i])) + (float64(t1*c1[i]) + float64(t3*c3[i]))
	}
}

func addRows5(g *[5]float64, buf []float64, u blas64.General) {
	g0, g1, g2, g3, g4 := g[0], g[1], g[2], g[3], g[4]
	for n, w := range buf {
		if w == 0 {
			continue
		}
		un := (*[5]float64)(u.Data[n*u.Stride : n*u.Stride+5])
		g0 += float64(w * un[0])
		g1 += float64(w * un[1])
		g2 += float64(w * un[2])
		g3 += float64(w * un[3])
		g4 += float64(w * un[4])
	}
	g[0], g[1], g[2], g[3], g[4] = g0, g1, g2, g3, g4
}

// addRows5x4 is addRows5 for four gradient rows (g, stride gs) and their
// weights (w, stride ws) over n data rows (u, stride us), in the vector
// kernel where there is one; the arithmetic is addRows5's for each row
// (the kernel adds the products of zero weights, which leaves a gradient
// entry as it is: the data are finite, and an entry that starts at +0
// never becomes −0).
func addRows5x4(g []float64, gs int, w []float64, ws, n int, u []float64, us int) {
	if n == 0 {
		return
	}
	_ = g[3*gs+4]
	_ = w[3*ws+n-1]
	_ = u[(n-1)*us+4]
	if useDotCols {
		addRows5x4AVX2(&g[0], gs, &w[0], ws, &u[0], us, n)
		return
	}
	ub := blas64.General{Rows: n, Cols: 5, Stride: us, Data: u}
	for i := range specialGroup {
		addRows5((*[5]float64)(g[i*gs:i*gs+5]), w[i*ws:i*ws+n], ub)
	}
}
