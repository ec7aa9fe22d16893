package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/internal/dgemm"
)

// evalAll runs every data-term entry point of p on theta: LogJoint,
// GradLogJoint, LogJointGrad and GradLogJointBatch.
func evalAll(p *Probit, theta *mat.Dense, batch []int) [][]float64 {
	s, d := theta.Dims()
	lj, lj2 := make([]float64, s), make([]float64, s)
	g, g2, gb := mat.NewDense(s, d, nil), mat.NewDense(s, d, nil), mat.NewDense(s, d, nil)
	p.LogJoint(lj, theta)
	p.GradLogJoint(g, theta)
	p.LogJointGrad(lj2, g2, theta)
	p.GradLogJointBatch(gb, theta, batch)
	return [][]float64{lj, g.RawMatrix().Data, lj2, g2.RawMatrix().Data, gb.RawMatrix().Data}
}

func TestRowPathIsBitIdenticalToTilePath(t *testing.T) {
	// The row path (d ≤ rowsMaxDim, pure-Go BLAS) against the two-product
	// tile path, for every d it serves (of every remainder mod 4: gonum's
	// dot sums blocks of four), with two data tiles (S = 2000: tiles of 524
	// rows), margins in both tails (|θ| up to ≈ 12, and a row at 40 where
	// λ underflows to 0), and a minibatch with repeated indices.
	// The row path reproduces gonum's kernels and is taken only under
	// gonum's BLAS, which this test selects (the build's own is package
	// dgemm's product or OpenBLAS).
	saved := blas64.Implementation()
	blas64.Use(gonum.Implementation{})
	t.Cleanup(func() { blas64.Use(saved) })
	for d := 1; d <= rowsMaxDim; d++ {
		t.Run(fmt.Sprint("d=", d), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(d), 9))
			ts := make([]float64, d)
			for j := range ts {
				ts[j] = rng.NormFloat64()
			}
			u, v := probitData(rng, 600, ts)
			p, _ := NewProbit(u, v, 3)
			const s = 2000
			theta := mat.NewDense(s, d, nil)
			for i := range s {
				for j := range d {
					theta.Set(i, j, ts[j]+4*rng.NormFloat64())
				}
			}
			theta.Set(0, 0, 40) // margins where λ underflows to 0
			batch := []int{3, 3, 599, 0, 17, 17, 250}
			rows := evalAll(p.Clone(), theta, batch)
			tilesOnly = true
			tiles := evalAll(p.Clone(), theta, batch)
			tilesOnly = false
			for k := range rows {
				for i := range rows[k] {
					if math.Float64bits(rows[k][i]) != math.Float64bits(tiles[k][i]) {
						t.Fatalf("output %d entry %d: rows %v, tiles %v", k, i, rows[k][i], tiles[k][i])
					}
				}
			}
		})
	}
}

// BenchmarkLogJointGradPaths times the fused log-joint and gradient on
// the row path and on the tile path at the paper's small-d size (probit
// d = 5, N = 8500, S = T = 1000 under NOMA), the row path with each
// implementation of the special functions (rowKernels); ns/op is one
// evaluation.
func BenchmarkLogJointGradPaths(b *testing.B) {
	for _, c := range []struct{ n, d, s int }{{8500, 5, 1000}} {
		rng := rand.New(rand.NewPCG(1, 1))
		ts := make([]float64, c.d)
		for j := range ts {
			ts[j] = rng.NormFloat64()
		}
		u, v := probitData(rng, c.n, ts)
		p, _ := NewProbit(u, v, 1)
		theta := mat.NewDense(c.s, c.d, nil)
		for i := range c.s {
			for j := range c.d {
				theta.Set(i, j, ts[j]+0.1*rng.NormFloat64())
			}
		}
		lj, g := make([]float64, c.s), mat.NewDense(c.s, c.d, nil)
		var paths []string
		for _, k := range rowKernels() {
			paths = append(paths, "rows-"+k)
		}
		for _, path := range append(paths, "tiles") {
			b.Run(fmt.Sprintf("N=%d/d=%d/S=%d/%s", c.n, c.d, c.s, path), func(b *testing.B) {
				kernel, rows := strings.CutPrefix(path, "rows-")
				tilesOnly = !rows
				defer func() { tilesOnly = false }()
				if rows {
					defer useRowKernel(kernel)()
				}
				p.LogJointGrad(lj, g, theta)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					p.LogJointGrad(lj, g, theta)
				}
				b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(c.s*c.n), "ns/margin")
			})
		}
	}
}

// TestRowPathTakenInPureGoBuilds: the d ≤ 5 data term takes the row path
// under gonum's BLAS and under package dgemm's product, not under
// another BLAS.
func TestRowPathTakenInPureGoBuilds(t *testing.T) {
	saved := blas64.Implementation()
	t.Cleanup(func() { blas64.Use(saved) })
	for _, impl := range []blas.Float64{gonum.Implementation{}, dgemm.Implementation{}} {
		blas64.Use(impl)
		if !byRows(rowsMaxDim) || byRows(rowsMaxDim+1) {
			t.Errorf("%T: byRows(%d) = %v, byRows(%d) = %v; want true, false", impl, rowsMaxDim, byRows(rowsMaxDim), rowsMaxDim+1, byRows(rowsMaxDim+1))
		}
	}
	blas64.Use(otherBLAS{})
	if byRows(1) {
		t.Error("another BLAS takes the row path")
	}
}

// otherBLAS stands for a BLAS other than the pure-Go ones.
type otherBLAS struct{ gonum.Implementation }

// TestDotCols5MatchesRows: the margins from the columns of a d = 5 tile
// (the vector kernel where there is one, and its scalar remainder) are
// dotRows5's bit for bit (NaN for NaN), for every length around the
// kernel's four lanes and with ±0, ±Inf, NaN and subnormal entries.
func TestDotCols5MatchesRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 5e-324, -2.5e-310, 1e300}
	draw := func() float64 {
		if rng.IntN(10) == 0 {
			return special[rng.IntN(len(special))]
		}
		return rng.NormFloat64() * math.Exp(4*rng.NormFloat64())
	}
	for n := 0; n <= 37; n++ {
		for rep := 0; rep < 21; rep++ {
			var th [5]float64
			for j := range th {
				th[j] = draw()
			}
			if rep == 20 { // θ = +0 against negative data: every product −0
				th = [5]float64{}
			}
			u := blas64.General{Rows: n, Cols: 5, Stride: 7, Data: make([]float64, max(0, n*7))}
			cols := make([]float64, 5*n)
			for i := range n {
				for j := range 5 {
					v := draw()
					if rep == 20 {
						v = -math.Abs(rng.NormFloat64()) - 0.5
					}
					u.Data[i*7+j] = v
					cols[j*n+i] = v
				}
			}
			want := make([]float64, n)
			got := make([]float64, n)
			dotRows5(&th, u, want)
			dotCols5(&th, cols, n, got)
			for i := range n {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
					t.Fatalf("n=%d, margin %d: %v from the columns, %v from the rows (vector kernel: %v)", n, i, got[i], want[i], useDotCols)
				}
			}
		}
	}
}

// TestRowGroupsMatchRowByRow: the d = 5 row path taking its sample rows
// four at a time (rowGroup5: margins, special functions with interleaved
// sums, the four-row gradient kernel) gives the bits of the same path
// taking them one by one, with each row kernel and with and without the
// vector margin and gradient kernels, under dgemm's and gonum's BLAS
// (which share the row path): tiles of several data blocks and polyChunk
// pieces with remainders of every size mod 8, sample rows not a multiple
// of four, margins in both tails and beyond (|θ| up to ≈ 12, a row at 40
// where λ underflows to 0, a NaN row), and a minibatch.
func TestRowGroupsMatchRowByRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	ts := []float64{0.8, -1.1, 0.3, 1.4, -0.6}
	u, v := probitData(rng, 1300, ts)
	p, _ := NewProbit(u, v, 2)
	const s = 1003 // data blocks of 1045 rows: 4 chunks and a 21-row tail, then 255 rows
	theta := mat.NewDense(s, 5, nil)
	for i := range s {
		for j := range 5 {
			theta.Set(i, j, ts[j]+3*rng.NormFloat64())
		}
	}
	theta.Set(0, 0, 40)
	theta.Set(5, 2, math.NaN())
	batch := []int{3, 3, 1299, 0, 17, 17, 250, 8, 9}
	saved, savedCols := blas64.Implementation(), useDotCols
	t.Cleanup(func() { blas64.Use(saved); useDotCols = savedCols })
	for _, impl := range []blas.Float64{dgemm.Implementation{}, gonum.Implementation{}} {
		blas64.Use(impl)
		for _, k := range rowKernels() {
			for _, cols := range []bool{false, true} {
				if cols && !savedCols {
					continue
				}
				t.Run(fmt.Sprintf("%T/%s/vector-cols=%v", impl, k, cols), func(t *testing.T) {
					defer useRowKernel(k)()
					useDotCols = cols
					groups := evalAll(p.Clone(), theta, batch)
					rowByRow = true
					rows := evalAll(p.Clone(), theta, batch)
					rowByRow = false
					for o := range rows {
						for i := range rows[o] {
							a, b := groups[o][i], rows[o][i]
							if math.Float64bits(a) != math.Float64bits(b) && !(math.IsNaN(a) && math.IsNaN(b)) {
								t.Fatalf("output %d entry %d: four rows at a time %v, row by row %v", o, i, a, b)
							}
						}
					}
				})
			}
		}
	}
}
