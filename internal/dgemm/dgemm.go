// Package dgemm is the pure-Go build's matrix product: gonum's BLAS with
// Dgemm replaced by a packed, cache-blocked product whose inner kernel is
// AVX-512 or AVX2 assembly. It computes
//
//	C = α op(A) op(B) + β C
//
// for row-major C (m×n), op(A) (m×k) and op(B) (k×n), as BLAS does.
//
// Every entry of C is the same arithmetic whatever the kernel or the
// number of cores: the inner dimension is cut into chunks of KC, and for
// each chunk t = fma(a_p, b_p, t) runs from t = 0 over p in order, then C
// is updated as c = βc + αt for the first chunk (c = αt when β = 0) and
// c = c + αt for the others. Kernels of different shapes compute the same
// chains, so results are bit for bit equal across them and with the
// portable Go kernel (the tests check this for every kernel the machine
// runs; NaN for NaN, whose payload may differ where several NaNs meet).
//
// Some products are gonum's, chosen by shape alone, in this order: those
// whose C has fewer than MinEntries entries (gonum's Dgemm: mostly padding
// in a kernel's tile) unless C is one row and op(B) = B, then those with
// one row or one column (gonum's Dgemv), then those with fewer than
// MinRows rows (gonum's Dgemm, a block of columns at a time); and every
// product on a machine without AVX2 and FMA (other architectures, the
// purego tag).
//
// The product is serial: wcmc runs its tasks in parallel already.
package dgemm

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
)

// Blocking. KC fixes the arithmetic (see the package comment); MC and NC
// only the order in which blocks of C are visited: an MC×KC panel of
// op(A) is packed once and stays in L3, a KC×NC block of op(B) in L2, a
// sliver of mr rows of the panel in L1 while the kernel runs along the
// block's slivers of columns (C is written a row segment at a time).
const (
	KC = 384
	MC = 720 // a multiple of every kernel's mr (4, 6, 12)
	NC = 256 // a multiple of every kernel's nr (8, 16)
)

// MinEntries is the size of C, m·n, below which the product is left to
// gonum's Dgemm, which computes such products serially: there most of a
// kernel's tile would be padding (5×5×1000: 4.4 µs against 12.8 µs).
const MinEntries = 64

// MinRows is the number of rows of C below which the product is left to
// gonum's Dgemm, a block of columns at a time (a single row goes to gonum's
// Dgemv before, gonumGemv: any row with op(B) = B, one with op(B) = Bᵀ from
// MinEntries columns): with two
// rows, packing op(B) costs about as much as the arithmetic (2 × 633 × 31:
// 18.8 µs against 20.2 µs; at 3 rows 26.4 against 20.6 µs).
const MinRows = 3

// gonumColumns computes the product with gonum's Dgemm on blocks of at
// most 192 columns of C, which gonum computes serially: one block row of
// its 64×64 blocking, three blocks (it starts goroutines, and allocates,
// from four).
func gonumColumns(g gonum.Implementation, tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	const cols = 192
	if k == 0 || alpha == 0 {
		scale(m, n, beta, c, ldc)
		return
	}
	for j := 0; j < n; j += cols {
		nj := min(cols, n-j)
		bj := b[j:]
		if tB != blas.NoTrans {
			bj = b[j*ldb:]
		}
		g.Dgemm(tA, tB, m, nj, k, alpha, a, lda, bj, ldb, beta, c[j:], ldc)
	}
}

// gonumGemv computes a product whose C is one row (m = 1) or one column
// (n = 1), of at least MinEntries entries, as the matrix–vector product it
// is, with gonum's Dgemv: 2.2× gonum's Dgemm on the one-sample margins of
// HMC and SGLD (1 × 1266 × 31: 4.9 against 10.8 µs), and without packing a
// matrix for one row. A row c = α x B + β c of any size comes here too
// (their gradients, 1 × d): Dgemv's GemvT adds α·x_p times row p of B for
// p in order, as gonum's Dgemm does, so for finite operands the bits are
// gonum's Dgemm's (TestOneRowIsGonumsBits) in 0.27–0.70 of its time
// (BenchmarkOneRow; 1 × 31 × 1266: 11.4 against 17.6 µs, the other core
// busy). Not for all operands: gonum's Dgemm skips a step whose α·x_p is
// 0 and GemvT adds it, so a zero weight on a row of B holding ±Inf or NaN
// gives NaN here, and a −0 in C that only such steps reach ends +0; with
// α = 0, C is βC here and NaN in gonum's Dgemm where x holds ±Inf or NaN
// (the reference BLAS's βC, as this package's kernels give); and where two
// NaNs meet, the payload may differ.
func gonumGemv(g gonum.Implementation, tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	switch {
	case k == 0 || alpha == 0: // Dgemv would leave C as it is, or scale NaN by β = 0
		scale(m, n, beta, c, ldc)
		return
	case math.IsNaN(beta): // gonum's GemvT takes β = NaN for β = 1
		gonumColumns(g, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	aTrans, bTrans := tA != blas.NoTrans, tB != blas.NoTrans
	if m == 1 {
		// c = α xᵀ op(B) + β c, x the one row of op(A): a[p], or a[p·lda]
		// when A is stored k×1.
		incX := 1
		if aTrans {
			incX = lda
		}
		if bTrans { // B is n×k: c = B x
			g.Dgemv(blas.NoTrans, n, k, alpha, b, ldb, a, incX, beta, c, 1)
		} else { // B is k×n: c = Bᵀ x
			g.Dgemv(blas.Trans, k, n, alpha, b, ldb, a, incX, beta, c, 1)
		}
		return
	}
	// n = 1: c (stride ldc) = α op(A) x + β c, x the one column of op(B):
	// b[p·ldb], or b[p] when B is stored 1×k.
	incX := ldb
	if bTrans {
		incX = 1
	}
	if aTrans { // A is k×m
		g.Dgemv(blas.Trans, k, m, alpha, a, lda, b, incX, beta, c, ldc)
	} else {
		g.Dgemv(blas.NoTrans, m, k, alpha, a, lda, b, incX, beta, c, ldc)
	}
}

// Implementation is gonum's BLAS with this package's Dgemm.
type Implementation struct {
	gonum.Implementation
}

// Active reports whether Dgemm runs this package's kernels on this
// machine (false where it has no vector kernel; then every product is
// gonum's) and names the kernel.
func Active() (bool, string) {
	k, ok := best()
	if !ok {
		return false, "none"
	}
	return true, k.name
}

// Dgemm computes C = α op(A) op(B) + β C.
func (impl Implementation) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	checkArgs(tA, tB, m, n, k, a, lda, b, ldb, c, ldc)
	kern, ok := best()
	switch routeOf(ok, tB, m, n) {
	case toGonum:
		impl.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	case toGemv:
		gonumGemv(impl.Implementation, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	case toColumns:
		gonumColumns(impl.Implementation, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	default:
		product(kern, tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
}

// route is where Dgemm sends a product (see the package comment).
type route int

const (
	toKernel  route = iota // product, on the vector kernel
	toGonum                // gonum's Dgemm
	toGemv                 // gonum's Dgemv (gonumGemv)
	toColumns              // gonum's Dgemm by blocks of columns (gonumColumns)
)

// routeOf is the route of a product whose C is m×n, kernel telling
// whether the machine has a vector kernel.
func routeOf(kernel bool, tB blas.Transpose, m, n int) route {
	switch {
	case !kernel || m*n < MinEntries && !(m == 1 && tB == blas.NoTrans):
		return toGonum
	case m == 1 || n == 1:
		return toGemv
	case m < MinRows:
		return toColumns
	}
	return toKernel
}

// UsesKernel reports whether Dgemm computes a product whose C is m×n
// (op(B) = B when tB is blas.NoTrans) on this package's vector kernel, as
// opposed to one of gonum's routines chosen by the shape.
func UsesKernel(tB blas.Transpose, m, n int) bool {
	_, ok := best()
	return routeOf(ok, tB, m, n) == toKernel
}

// KernelProduct computes C = α op(A) op(B) + β C on the vector kernel
// whatever the shape: for every entry of C, the arithmetic of Dgemm on a
// product it runs on the kernel (UsesKernel). A caller may therefore cut
// such a product into smaller ones and get the same bits: any blocks of
// rows and columns of C, and pieces of the inner dimension that start at
// multiples of KC, the first with β and the others with β = 1. It panics
// where there is no vector kernel (Active) or the arguments are invalid
// (as Dgemm).
func KernelProduct(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	checkArgs(tA, tB, m, n, k, a, lda, b, ldb, c, ldc)
	kern, ok := best()
	if !ok {
		panic("dgemm: no vector kernel on this machine")
	}
	product(kern, tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// checkArgs panics as gonum's Dgemm does (v0.17: the same checks, in the
// same order, with the same messages), so that a caller sees the same
// panic whichever implementation a product's shape routes it to.
func checkArgs(tA, tB blas.Transpose, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	valid := func(t blas.Transpose) bool {
		return t == blas.NoTrans || t == blas.Trans || t == blas.ConjTrans
	}
	if !valid(tA) || !valid(tB) {
		panic("blas: illegal transpose")
	}
	switch {
	case m < 0:
		panic("blas: m < 0")
	case n < 0:
		panic("blas: n < 0")
	case k < 0:
		panic("blas: k < 0")
	}
	aTrans, bTrans := tA != blas.NoTrans, tB != blas.NoTrans
	switch {
	case aTrans && lda < max(1, m), !aTrans && lda < max(1, k):
		panic("blas: bad leading dimension of A")
	case bTrans && ldb < max(1, k), !bTrans && ldb < max(1, n):
		panic("blas: bad leading dimension of B")
	case ldc < max(1, n):
		panic("blas: bad leading dimension of C")
	}
	if m == 0 || n == 0 {
		return
	}
	switch {
	case aTrans && len(a) < (k-1)*lda+m, !aTrans && len(a) < (m-1)*lda+k:
		panic("blas: insufficient length of a")
	case bTrans && len(b) < (n-1)*ldb+k, !bTrans && len(b) < (k-1)*ldb+n:
		panic("blas: insufficient length of b")
	case len(c) < (m-1)*ldc+n:
		panic("blas: insufficient length of c")
	}
}

// workspace holds the packed blocks of one product.
type workspace struct {
	a, b []float64
	tile []float64
}

// spare holds the workspaces of finished products, at most one per
// product that ever ran at the same time (a few per core), so a warm
// program allocates nothing; unlike a sync.Pool, the garbage collector
// does not empty it.
var spare struct {
	sync.Mutex
	ws []*workspace
}

func getWorkspace() *workspace {
	spare.Lock()
	defer spare.Unlock()
	if n := len(spare.ws); n > 0 {
		ws := spare.ws[n-1]
		spare.ws = spare.ws[:n-1]
		return ws
	}
	return new(workspace)
}

func putWorkspace(ws *workspace) {
	spare.Lock()
	spare.ws = append(spare.ws, ws)
	spare.Unlock()
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// product is Dgemm with valid arguments, on kernel kern.
func product(kern kernel, transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if alpha == 0 || k == 0 {
		scale(m, n, beta, c, ldc)
		return
	}
	mr, nr := kern.mr, kern.nr
	ws := getWorkspace()
	defer putWorkspace(ws)
	ws.tile = grow(ws.tile, mr*nr)
	for ic := 0; ic < m; ic += MC {
		mb := min(MC, m-ic)
		mSliv := (mb + mr - 1) / mr
		for pc := 0; pc < k; pc += KC {
			kb := min(KC, k-pc)
			ws.a = grow(ws.a, mSliv*kb*mr)
			packA(ws.a, transA, a, lda, ic, mb, pc, kb, mr)
			first := pc == 0
			direct := alpha == 1 && (!first || beta == 0 || beta == 1)
			accumulate := !first || beta != 0
			for jc := 0; jc < n; jc += NC {
				nb := min(NC, n-jc)
				nSliv := (nb + nr - 1) / nr
				ws.b = grow(ws.b, nSliv*kb*nr)
				packB(ws.b, transB, b, ldb, pc, kb, jc, nb, nr)
				// Along a sliver of rows of C, tile after tile: the sliver
				// of A stays in L1, C is written row segment by row segment.
				for is := 0; is < mSliv; is++ {
					i0 := ic + is*mr
					rows := min(mr, m-i0)
					as := ws.a[is*kb*mr : (is+1)*kb*mr]
					for js := 0; js < nSliv; js++ {
						j0 := jc + js*nr
						cols := min(nr, n-j0)
						bs := ws.b[js*kb*nr : (js+1)*kb*nr]
						ct := c[i0*ldc+j0:]
						if direct && rows == mr && cols == nr {
							kern.run(kb, as, bs, ct, ldc, accumulate)
							continue
						}
						kern.run(kb, as, bs, ws.tile, nr, false)
						update(ct, ldc, ws.tile, nr, rows, cols, alpha, beta, first)
					}
				}
			}
		}
	}
}

// update adds a chunk's tile t (rows×cols, stride ldt) to C: c = βc + αt
// for the first chunk (αt when β = 0), c + αt after. The conversions keep
// each product rounded on its own (no fusion), as the kernels' direct
// path computes them when α = 1.
func update(c []float64, ldc int, t []float64, ldt, rows, cols int, alpha, beta float64, first bool) {
	for i := range rows {
		ci := c[i*ldc : i*ldc+cols]
		ti := t[i*ldt : i*ldt+cols]
		switch {
		case first && beta == 0:
			for j, v := range ti {
				ci[j] = float64(alpha * v)
			}
		case first:
			for j, v := range ti {
				ci[j] = float64(beta*ci[j]) + float64(alpha*v)
			}
		default:
			for j, v := range ti {
				ci[j] += float64(alpha * v)
			}
		}
	}
}

// scale sets C = βC (C = 0 when β = 0, whatever C held).
func scale(m, n int, beta float64, c []float64, ldc int) {
	if beta == 1 {
		return
	}
	for i := range m {
		ci := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(ci)
			continue
		}
		for j := range ci {
			ci[j] *= beta
		}
	}
}

// packA writes rows ic … ic+mb−1, columns pc … pc+kb−1 of op(A) as slivers
// of mr rows: sliver s holds, for p = 0 … kb−1, the mr entries
// op(A)[ic+s·mr+r, pc+p], zero past the last row.
func packA(dst []float64, trans bool, a []float64, lda, ic, mb, pc, kb, mr int) {
	for s := 0; s*mr < mb; s++ {
		sl := dst[s*kb*mr : (s+1)*kb*mr]
		rows := min(mr, mb-s*mr)
		i0 := ic + s*mr
		if rows < mr {
			clear(sl)
		}
		if trans { // op(A)[i, p] = a[p·lda + i]: rows are contiguous
			for p := range kb {
				src := a[(pc+p)*lda+i0 : (pc+p)*lda+i0+rows]
				copy(sl[p*mr:p*mr+rows], src)
			}
			continue
		}
		// op(A)[i, p] = a[i·lda + p]: read along the rows of a in steps of
		// four, and write each step's 4×rows block row by row, so that the
		// stores are contiguous.
		base := a[i0*lda+pc:]
		p := 0
		for ; p+4 <= kb; p += 4 {
			d0 := sl[p*mr : p*mr+rows]
			d1 := sl[(p+1)*mr : (p+1)*mr+rows]
			d2 := sl[(p+2)*mr : (p+2)*mr+rows]
			d3 := sl[(p+3)*mr : (p+3)*mr+rows]
			for r := range rows {
				src := base[r*lda+p : r*lda+p+4]
				d0[r], d1[r], d2[r], d3[r] = src[0], src[1], src[2], src[3]
			}
		}
		for ; p < kb; p++ {
			d := sl[p*mr : p*mr+rows]
			for r := range d {
				d[r] = base[r*lda+p]
			}
		}
	}
}

// packB writes rows pc … pc+kb−1, columns jc … jc+nb−1 of op(B) as slivers
// of nr columns: sliver s holds, for p = 0 … kb−1, the nr entries
// op(B)[pc+p, jc+s·nr+j], zero past the last column.
func packB(dst []float64, trans bool, b []float64, ldb, pc, kb, jc, nb, nr int) {
	for s := 0; s*nr < nb; s++ {
		sl := dst[s*kb*nr : (s+1)*kb*nr]
		cols := min(nr, nb-s*nr)
		j0 := jc + s*nr
		if cols < nr {
			clear(sl)
		}
		if !trans { // op(B)[p, j] = b[p·ldb + j]: columns are contiguous
			for p := range kb {
				src := b[(pc+p)*ldb+j0 : (pc+p)*ldb+j0+cols]
				copy(sl[p*nr:p*nr+cols], src)
			}
			continue
		}
		// op(B)[p, j] = b[j·ldb + p]: read along the rows of b in steps of
		// four, and write each step's 4×cols block row by row, so that the
		// stores are contiguous.
		base := b[j0*ldb+pc:]
		p := 0
		for ; p+4 <= kb; p += 4 {
			d0 := sl[p*nr : p*nr+cols]
			d1 := sl[(p+1)*nr : (p+1)*nr+cols]
			d2 := sl[(p+2)*nr : (p+2)*nr+cols]
			d3 := sl[(p+3)*nr : (p+3)*nr+cols]
			for j := range cols {
				src := base[j*ldb+p : j*ldb+p+4]
				d0[j], d1[j], d2[j], d3[j] = src[0], src[1], src[2], src[3]
			}
		}
		for ; p < kb; p++ {
			d := sl[p*nr : p*nr+cols]
			for j := range d {
				d[j] = base[j*ldb+p]
			}
		}
	}
}

// Name is this package's product in Describe's line, which adds the kernel
// after a comma.
const Name = "wcmc dgemm"

// Describe names the BLAS gonum's calls go to in this program now
// (blas64.Implementation, which model.UseFastBLAS sets): "gonum",
// this package's product with its kernel on this machine, or the line of
// an implementation that describes itself (a Describe() string method:
// the openblas build's, with OpenBLAS's version and kernels).
func Describe() string {
	switch impl := blas64.Implementation().(type) {
	case Implementation:
		if ok, kernel := Active(); ok {
			return Name + ", " + kernel
		}
		return "gonum (wcmc dgemm has no vector kernel for this machine)"
	case gonum.Implementation:
		return "gonum"
	case interface{ Describe() string }:
		return impl.Describe()
	default:
		return fmt.Sprintf("%T", impl)
	}
}
