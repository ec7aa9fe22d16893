package dgemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
)

// reference is the arithmetic the package comment specifies, entry by
// entry: chunks of KC, an FMA chain from 0 over each chunk, c = βc + αt
// for the first chunk (αt when β = 0) and c + αt after.
func reference(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	opA := func(i, p int) float64 {
		if transA {
			return a[p*lda+i]
		}
		return a[i*lda+p]
	}
	opB := func(p, j int) float64 {
		if transB {
			return b[j*ldb+p]
		}
		return b[p*ldb+j]
	}
	for i := range m {
		for j := range n {
			x := &c[i*ldc+j]
			if alpha == 0 || k == 0 {
				switch beta {
				case 0:
					*x = 0
				case 1:
				default:
					*x *= beta
				}
				continue
			}
			for pc := 0; pc < k; pc += KC {
				t := 0.0
				for p := pc; p < min(k, pc+KC); p++ {
					t = math.FMA(opA(i, p), opB(p, j), t)
				}
				switch {
				case pc == 0 && beta == 0:
					*x = float64(alpha * t)
				case pc == 0:
					*x = float64(beta**x) + float64(alpha*t)
				default:
					*x += float64(alpha * t)
				}
			}
		}
	}
}

// operands returns A, B and C for the product with leading dimensions
// padded by 3; the padding holds NaN, which no product may read or write.
func operands(rng *rand.Rand, transA, transB bool, m, n, k int) (a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	fill := func(rows, cols int) ([]float64, int) {
		ld := cols + 3
		x := make([]float64, rows*ld)
		for i := range x {
			if i%ld >= cols {
				x[i] = math.NaN()
			} else {
				x[i] = rng.NormFloat64()
			}
		}
		return x, ld
	}
	if transA {
		a, lda = fill(k, m)
	} else {
		a, lda = fill(m, k)
	}
	if transB {
		b, ldb = fill(n, k)
	} else {
		b, ldb = fill(k, n)
	}
	c, ldc = fill(m, n)
	return
}

func sameBits(x, y []float64) int {
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
			return i
		}
	}
	return -1
}

// TestKernelsFollowTheSpecifiedArithmetic checks every kernel this machine
// runs against reference, bit for bit, on shapes with partial tiles,
// several chunks of the inner dimension and several blocks of C, all
// transposes and α, β with their special cases (β = 0 with NaN in C must
// overwrite it).
func TestKernelsFollowTheSpecifiedArithmetic(t *testing.T) {
	ks := kernels()
	if len(ks) == 0 {
		t.Skip("no FMA on this machine: every product is gonum's")
	}
	shapes := [][3]int{{1, 1, 1}, {12, 16, 7}, {13, 17, 300}, {MC + 5, 33, KC + 1}, {7, NC + 9, 3}, {50, 40, 2*KC + 3}}
	for _, kern := range ks {
		for si, sh := range shapes {
			m, n, k := sh[0], sh[1], sh[2]
			for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
				for _, ab := range [][2]float64{{1, 0}, {1, 1}, {0.5, 0}, {-2, 0.3}, {1, -1}, {0, 0.5}} {
					rng := rand.New(rand.NewPCG(uint64(si), 1))
					a, lda, b, ldb, c, ldc := operands(rng, tr[0], tr[1], m, n, k)
					if ab[1] == 0 {
						for i := range c {
							c[i] = math.NaN()
						}
					}
					want := append([]float64(nil), c...)
					reference(tr[0], tr[1], m, n, k, ab[0], a, lda, b, ldb, ab[1], want, ldc)
					product(kern, tr[0], tr[1], m, n, k, ab[0], a, lda, b, ldb, ab[1], c, ldc)
					if i := sameBits(want, c); i >= 0 {
						t.Fatalf("%s, %d×%d×%d, trans %v, α=%g β=%g: C[%d] = %v, the specified arithmetic gives %v",
							kern.name, m, n, k, tr, ab[0], ab[1], i, c[i], want[i])
					}
				}
			}
		}
	}
}

// TestDgemmIsTheMatrixProduct compares Implementation.Dgemm with gonum's on
// random products, relative to the sum of the absolute terms of each
// entry (the scale of its rounding error).
func TestDgemmIsTheMatrixProduct(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var ours Implementation
	var theirs gonum.Implementation
	for _, sh := range [][3]int{{2, 3, 4}, {100, 70, 40}, {300, 1000, 5}, {64, 64, 700}, {1, 700, 31}, {2, 500, 9}, {2, 400, 0}} {
		m, n, k := sh[0], sh[1], sh[2]
		for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				a, lda, b, ldb, c, ldc := operands(rng, tA == blas.Trans, tB == blas.Trans, m, n, k)
				got := append([]float64(nil), c...)
				want := append([]float64(nil), c...)
				ours.Dgemm(tA, tB, m, n, k, 1.5, a, lda, b, ldb, 0.5, got, ldc)
				theirs.Dgemm(tA, tB, m, n, k, 1.5, a, lda, b, ldb, 0.5, want, ldc)
				absA := make([]float64, len(a))
				absB := make([]float64, len(b))
				absC := make([]float64, len(c))
				for i := range a {
					absA[i] = math.Abs(a[i])
				}
				for i := range b {
					absB[i] = math.Abs(b[i])
				}
				for i := range c {
					absC[i] = math.Abs(c[i])
				}
				theirs.Dgemm(tA, tB, m, n, k, 1.5, absA, lda, absB, ldb, 0.5, absC, ldc)
				for i := range got {
					if i%ldc >= n {
						if !math.IsNaN(got[i]) {
							t.Fatalf("%v: padding C[%d] written", sh, i)
						}
						continue
					}
					if d := math.Abs(got[i] - want[i]); !(d <= 1e-14*absC[i]*float64(k)) {
						t.Fatalf("%v %v %v: C[%d] = %v, gonum %v (scale %v)", sh, tA, tB, i, got[i], want[i], absC[i])
					}
				}
			}
		}
	}
}

// TestDgemmRejectsBadArgumentsAsGonum: every bad call panics with gonum's
// message, for products routed to the kernels and to gonum alike.
func TestDgemmRejectsBadArgumentsAsGonum(t *testing.T) {
	var ours Implementation
	var theirs gonum.Implementation
	a := make([]float64, 100*100)
	b := make([]float64, 100*100)
	c := make([]float64, 100*100)
	type call func(blas.Float64Level3)
	for _, sz := range []int{4, 50} { // 4×4: gonum's; 50×50: the kernels'
		cases := map[string]call{
			"transpose": func(x blas.Float64Level3) { x.Dgemm('x', blas.NoTrans, sz, sz, sz, 1, a, sz, b, sz, 0, c, sz) },
			"m < 0":     func(x blas.Float64Level3) { x.Dgemm(blas.NoTrans, blas.NoTrans, -1, sz, sz, 1, a, sz, b, sz, 0, c, sz) },
			"n < 0":     func(x blas.Float64Level3) { x.Dgemm(blas.NoTrans, blas.NoTrans, sz, -1, sz, 1, a, sz, b, sz, 0, c, sz) },
			"k < 0":     func(x blas.Float64Level3) { x.Dgemm(blas.NoTrans, blas.NoTrans, sz, sz, -1, 1, a, sz, b, sz, 0, c, sz) },
			"lda": func(x blas.Float64Level3) {
				x.Dgemm(blas.NoTrans, blas.NoTrans, sz, sz, sz, 1, a, sz-1, b, sz, 0, c, sz)
			},
			"lda trans": func(x blas.Float64Level3) {
				x.Dgemm(blas.Trans, blas.NoTrans, sz, sz+1, sz, 1, a, sz-1, b, sz+1, 0, c, sz+1)
			},
			"ldb": func(x blas.Float64Level3) {
				x.Dgemm(blas.NoTrans, blas.Trans, sz, sz+1, sz, 1, a, sz, b, sz-1, 0, c, sz+1)
			},
			"ldc": func(x blas.Float64Level3) {
				x.Dgemm(blas.NoTrans, blas.NoTrans, sz, sz, sz, 1, a, sz, b, sz, 0, c, sz-1)
			},
			"short A": func(x blas.Float64Level3) {
				x.Dgemm(blas.NoTrans, blas.NoTrans, sz, sz, sz, 1, a[:sz*sz-1], sz, b, sz, 0, c, sz)
			},
			"short B": func(x blas.Float64Level3) {
				x.Dgemm(blas.NoTrans, blas.Trans, sz, sz, sz, 1, a, sz, b[:sz*sz-1], sz, 0, c, sz)
			},
			"short C": func(x blas.Float64Level3) {
				x.Dgemm(blas.NoTrans, blas.NoTrans, sz, sz, sz, 1, a, sz, b, sz, 0, c[:sz*sz-1], sz)
			},
			"short A, k = 0": func(x blas.Float64Level3) {
				x.Dgemm(blas.NoTrans, blas.NoTrans, sz, sz, 0, 1, a[:sz-2], 1, b, sz, 0, c, sz)
			},
		}
		for name, f := range cases {
			panicOf := func(x blas.Float64Level3) (r any) {
				defer func() { r = recover() }()
				f(x)
				return nil
			}
			got, want := panicOf(ours), panicOf(theirs)
			if want == nil {
				t.Fatalf("%d, %s: gonum does not panic; the case is wrong", sz, name)
			}
			if got != want {
				t.Errorf("%d×%d, %s: panic %v, gonum's %v", sz, sz, name, got, want)
			}
		}
	}
}

// TestDgemmAllocatesNothingOnceWarm: the packing buffers are reused.
func TestDgemmAllocatesNothingOnceWarm(t *testing.T) {
	if ok, _ := Active(); !ok {
		t.Skip("no vector kernel on this machine: Dgemm is gonum's")
	}
	var impl Implementation
	m, n, k := 200, 300, 260
	a := make([]float64, m*k)
	b := make([]float64, k*n)
	c := make([]float64, m*n)
	f := func() { impl.Dgemm(blas.NoTrans, blas.Trans, m, n, k, 1, a, k, b, k, 0, c, n) }
	f()
	if got := testing.AllocsPerRun(20, f); got != 0 {
		t.Errorf("%v allocations per product", got)
	}
}

func BenchmarkDgemm(b *testing.B) {
	for _, sh := range [][3]int{{1000, 1000, 300}, {1000, 15000, 300}, {1000, 8500, 5}, {500, 12665, 30}, {300, 300, 300}} {
		m, n, k := sh[0], sh[1], sh[2]
		x := make([]float64, m*k)
		y := make([]float64, n*k)
		z := make([]float64, m*n)
		for i := range z { // touched, so that no kernel pays the page faults
			z[i] = 1
		}
		for i := range x {
			x[i] = float64(i%7) - 3
		}
		for i := range y {
			y[i] = float64(i%5) - 2
		}
		rate := func(b *testing.B) {
			b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		}
		for _, kern := range kernels() {
			b.Run(fmt.Sprintf("%s/%dx%dx%d", kern.name, m, n, k), func(b *testing.B) {
				for b.Loop() {
					product(kern, false, true, m, n, k, 1, x, k, y, k, 0, z, n)
				}
				rate(b)
			})
		}
		b.Run(fmt.Sprintf("gonum/%dx%dx%d", m, n, k), func(b *testing.B) {
			var impl gonum.Implementation
			for b.Loop() {
				impl.Dgemm(blas.NoTrans, blas.Trans, m, n, k, 1, x, k, y, k, 0, z, n)
			}
			rate(b)
		})
	}
}

func BenchmarkSmallDgemm(b *testing.B) {
	for _, sh := range [][3]int{{3, 3, 3}, {5, 5, 5}, {10, 10, 10}, {20, 5, 20}, {5, 5, 1000}, {1000, 5, 5}} {
		m, n, k := sh[0], sh[1], sh[2]
		x := make([]float64, m*k)
		y := make([]float64, n*k)
		z := make([]float64, m*n)
		kern, _ := best()
		b.Run(fmt.Sprintf("ours/%dx%dx%d", m, n, k), func(b *testing.B) {
			for b.Loop() {
				product(kern, false, true, m, n, k, 1, x, k, y, k, 0, z, n)
			}
		})
		b.Run(fmt.Sprintf("gonum/%dx%dx%d", m, n, k), func(b *testing.B) {
			var g gonum.Implementation
			for b.Loop() {
				g.Dgemm(blas.NoTrans, blas.Trans, m, n, k, 1, x, k, y, k, 0, z, n)
			}
		})
	}
}

// BenchmarkOneRow: a row c = x B, the one-sample gradient of HMC and SGLD
// (1 × d from N data rows), through Implementation.Dgemm (gonum's Dgemv
// for any n) and through gonum's Dgemm.
func BenchmarkOneRow(b *testing.B) {
	for _, sh := range [][2]int{{31, 1266}, {31, 633}, {5, 1000}, {300, 1500}} {
		n, k := sh[0], sh[1]
		x := make([]float64, k)
		y := make([]float64, k*n)
		z := make([]float64, n)
		for i := range x {
			x[i] = float64(i%7) - 3
		}
		for i := range y {
			y[i] = float64(i%5) - 2
		}
		for _, impl := range []struct {
			name string
			blas interface {
				Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int)
			}
		}{{"ours", Implementation{}}, {"gonum", gonum.Implementation{}}} {
			b.Run(fmt.Sprintf("%s/1x%dx%d", impl.name, n, k), func(b *testing.B) {
				for b.Loop() {
					impl.blas.Dgemm(blas.NoTrans, blas.NoTrans, 1, n, k, 1, x, k, y, n, 0, z, n)
				}
			})
		}
	}
}

func TestDescribeNamesTheBLASInUse(t *testing.T) {
	saved := blas64.Implementation()
	t.Cleanup(func() { blas64.Use(saved) })
	blas64.Use(gonum.Implementation{})
	if got := Describe(); got != "gonum" {
		t.Errorf("gonum's BLAS described as %q", got)
	}
	blas64.Use(Implementation{})
	ok, kernel := Active()
	if got := Describe(); ok && got != "wcmc dgemm, "+kernel {
		t.Errorf("this package's product described as %q", got)
	}
}

// sameValues returns the first index where x and y differ in their bits,
// NaNs aside (any NaN equals any NaN: where several NaNs meet in a chain,
// which payload survives depends on the order the compiler gives the
// multiplicands of an FMA), or −1.
func sameValues(x, y []float64) int {
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(y[i]) && !(math.IsNaN(x[i]) && math.IsNaN(y[i])) {
			return i
		}
	}
	return -1
}

// TestKernelsAtTheEdges checks every kernel against reference, bit for bit
// (NaN for NaN), with operands stored tightly (leading
// dimension = columns, nothing after the last entry but sentinels beyond
// the slice's capacity, which must survive), ±Inf and NaNs with distinct
// payloads among the valid entries of A, B and C, α = 0 and k = 0.
func TestKernelsAtTheEdges(t *testing.T) {
	ks := kernels()
	if len(ks) == 0 {
		t.Skip("no FMA on this machine: every product is gonum's")
	}
	const sentinel = 1234.5
	nan := func(payload uint64) float64 { return math.Float64frombits(0x7ff8000000000000 | payload) }
	// tight returns rows×cols entries in a slice whose capacity ends at
	// the last entry, followed in memory by sentinels.
	tight := func(rng *rand.Rand, rows, cols int) (x, mem []float64, ld int) {
		ld = max(1, cols)
		size := 0
		if rows > 0 && cols > 0 {
			size = (rows-1)*ld + cols
		}
		mem = make([]float64, size+8)
		for i := range mem {
			mem[i] = sentinel
		}
		x = mem[:size:size]
		for i := range x {
			switch rng.IntN(60) {
			case 0:
				x[i] = math.Inf(1 - 2*rng.IntN(2))
			case 1:
				x[i] = nan(uint64(1 + rng.IntN(1<<20)))
			default:
				x[i] = rng.NormFloat64()
			}
		}
		return x, mem, ld
	}
	shapes := [][3]int{{12, 16, 5}, {6, 8, 3}, {13, 17, 9}, {3, 64, 2}, {24, 32, KC + 3}, {MC + 12, NC + 16, 7}, {20, 20, 0}}
	for _, kern := range ks {
		for si, sh := range shapes {
			m, n, k := sh[0], sh[1], sh[2]
			for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
				for _, ab := range [][2]float64{{1, 0}, {1, 1}, {1, 0.5}, {0, 0}, {0, 1}, {2, 0}} {
					rng := rand.New(rand.NewPCG(uint64(si), 7))
					ar, ac, br, bc := m, k, k, n
					if tr[0] {
						ar, ac = k, m
					}
					if tr[1] {
						br, bc = n, k
					}
					a, amem, lda := tight(rng, ar, ac)
					b, bmem, ldb := tight(rng, br, bc)
					c, cmem, ldc := tight(rng, m, n)
					want := append([]float64(nil), c...)
					reference(tr[0], tr[1], m, n, k, ab[0], a, lda, b, ldb, ab[1], want, ldc)
					product(kern, tr[0], tr[1], m, n, k, ab[0], a, lda, b, ldb, ab[1], c, ldc)
					if i := sameValues(want, c); i >= 0 {
						t.Fatalf("%s, %d×%d×%d, trans %v, α=%g β=%g: C[%d] = %v (%#x), the specified arithmetic gives %v (%#x)",
							kern.name, m, n, k, tr, ab[0], ab[1], i, c[i], math.Float64bits(c[i]), want[i], math.Float64bits(want[i]))
					}
					for _, mem := range [][]float64{amem, bmem, cmem} {
						for _, v := range mem[len(mem)-8:] {
							if v != sentinel {
								t.Fatalf("%s, %d×%d×%d, trans %v: memory past a matrix written", kern.name, m, n, k, tr)
							}
						}
					}
				}
			}
		}
	}
}

// TestFewRowsAreGonumsByColumns: products of 2 … MinRows−1 rows are
// gonum's, computed a block of columns at a time: bit for bit what gonum
// gives column by column.
func TestFewRowsAreGonumsByColumns(t *testing.T) {
	if ok, _ := Active(); !ok {
		t.Skip("no vector kernel on this machine: Dgemm is gonum's")
	}
	var ours Implementation
	var theirs gonum.Implementation
	rng := rand.New(rand.NewPCG(5, 6))
	for m := 2; m < MinRows; m++ { // one row is Dgemv's (TestOneRowOrColumnIsAMatrixVectorProduct)
		for _, k := range []int{0, 1, 37, 70} {
			for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
					n := 500
					a, lda, b, ldb, c, ldc := operands(rng, tA == blas.Trans, tB == blas.Trans, m, n, k)
					got := append([]float64(nil), c...)
					want := append([]float64(nil), c...)
					ours.Dgemm(tA, tB, m, n, k, 1.5, a, lda, b, ldb, 0.5, got, ldc)
					for j := range n { // one column: gonum's serial kernel
						if k == 0 {
							theirs.Dgemm(tA, tB, m, n, k, 1.5, a, lda, b, ldb, 0.5, want, ldc)
							break
						}
						bj := b[j:]
						if tB == blas.Trans {
							bj = b[j*ldb:]
						}
						theirs.Dgemm(tA, tB, m, 1, k, 1.5, a, lda, bj, ldb, 0.5, want[j:], ldc)
					}
					if i := sameBits(want, got); i >= 0 {
						t.Fatalf("m=%d k=%d %v %v: C[%d] = %v, gonum by columns %v", m, k, tA, tB, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestOneRowIsGonumsBits: a product with one row of C and op(B) = B goes
// to gonum's Dgemv whatever its size, and gives gonum's Dgemm's bits (both
// add α·x_p times row p of B for p in order): the one-sample gradients of
// HMC and SGLD, 1 × d, are computed as they were under gonum's BLAS.
func TestOneRowIsGonumsBits(t *testing.T) {
	if ok, _ := Active(); !ok {
		t.Skip("no vector kernel on this machine: Dgemm is gonum's")
	}
	var ours Implementation
	var theirs gonum.Implementation
	rng := rand.New(rand.NewPCG(10, 11))
	for _, n := range []int{1, 5, 31, 63, 64, 300} {
		for _, k := range []int{1, 7, 633, 1266} {
			for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				for _, ab := range [][2]float64{{1, 0}, {-0.7, 1}, {1.5, 0.5}} {
					a, lda, b, ldb, c, ldc := operands(rng, tA == blas.Trans, false, 1, n, k)
					a[0] = 0 // a zero weight, as a λ that underflowed
					got := append([]float64(nil), c...)
					want := append([]float64(nil), c...)
					ours.Dgemm(tA, blas.NoTrans, 1, n, k, ab[0], a, lda, b, ldb, ab[1], got, ldc)
					theirs.Dgemm(tA, blas.NoTrans, 1, n, k, ab[0], a, lda, b, ldb, ab[1], want, ldc)
					if i := sameBits(want, got); i >= 0 {
						t.Fatalf("1×%d×%d %v α=%g β=%g: C[%d] = %v, gonum's Dgemm %v", n, k, tA, ab[0], ab[1], i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestOneRowOrColumnIsAMatrixVectorProduct: products with one row or one
// column of C (gonum's Dgemv) keep Dgemm's meaning: every transpose, leading
// dimensions wider than the matrices, β = 0 over NaN in C, α = 0 and k = 0,
// and nothing written outside C's entries.
func TestOneRowOrColumnIsAMatrixVectorProduct(t *testing.T) {
	if ok, _ := Active(); !ok {
		t.Skip("no vector kernel on this machine: Dgemm is gonum's")
	}
	var ours Implementation
	rng := rand.New(rand.NewPCG(8, 9))
	for _, sh := range [][3]int{{1, 700, 31}, {1, 100, 1}, {500, 1, 9}, {90, 1, 300}, {1, 80, 0}, {80, 1, 0}} {
		m, n, k := sh[0], sh[1], sh[2]
		for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				for _, ab := range [][2]float64{{1.5, 0}, {1, 1}, {-2, 0.5}, {0, 0}, {0, 2}, {-2.5, math.NaN()}} {
					a, lda, b, ldb, c, ldc := operands(rng, tA == blas.Trans, tB == blas.Trans, m, n, k)
					if ab[1] == 0 {
						for i := range c {
							if i%ldc < n {
								c[i] = math.NaN()
							}
						}
					}
					want := append([]float64(nil), c...)
					reference(tA == blas.Trans, tB == blas.Trans, m, n, k, ab[0], a, lda, b, ldb, ab[1], want, ldc)
					ours.Dgemm(tA, tB, m, n, k, ab[0], a, lda, b, ldb, ab[1], c, ldc)
					for i := range c {
						if i%ldc >= n {
							if !math.IsNaN(c[i]) {
								t.Fatalf("%v %v %v: padding C[%d] written", sh, tA, tB, i)
							}
							continue
						}
						if math.IsNaN(want[i]) { // β = NaN: NaN, as gonum's Dgemm gives
							if !math.IsNaN(c[i]) {
								t.Fatalf("%v %v %v α=%g β=%g: C[%d] = %v, want NaN", sh, tA, tB, ab[0], ab[1], i, c[i])
							}
							continue
						}
						scale := math.Abs(want[i]) + 1
						if d := math.Abs(c[i] - want[i]); !(d <= 1e-12*scale*float64(k+1)) {
							t.Fatalf("%v %v %v α=%g β=%g: C[%d] = %v, want %v", sh, tA, tB, ab[0], ab[1], i, c[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestUsesKernelIsDgemmsRoute: UsesKernel is true exactly for the shapes
// Dgemm runs on the kernel, i.e. where its result has the specified
// arithmetic's bits and gonum's routines' do not (operands chosen so that
// gonum's Dgemm, Dgemv and the kernel's chains round differently).
func TestUsesKernelIsDgemmsRoute(t *testing.T) {
	if ok, _ := Active(); !ok {
		t.Skip("no vector kernel: every product is gonum's")
	}
	for _, c := range []struct {
		tB   blas.Transpose
		m, n int
		want bool
	}{
		{blas.Trans, 3, 22, true}, {blas.NoTrans, 12, 16, true}, {blas.Trans, 3, 21, false},
		{blas.NoTrans, 1, 100, false}, {blas.Trans, 1, 100, false}, {blas.NoTrans, 100, 1, false},
		{blas.NoTrans, 2, 100, false}, {blas.Trans, 7, 9, false}, {blas.Trans, 8, 8, true},
	} {
		if got := UsesKernel(c.tB, c.m, c.n); got != c.want {
			t.Errorf("UsesKernel(%v, %d, %d) = %v, want %v", c.tB, c.m, c.n, got, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(41, 42))
	impl := Implementation{}
	for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, m := range []int{1, 2, 3, 5, 13} {
			for _, n := range []int{1, 2, 4, 13, 30} {
				const k = 700
				a, lda, b, ldb, c, ldc := operands(rng, false, tB == blas.Trans, m, n, k)
				want := append([]float64(nil), c...)
				reference(false, tB == blas.Trans, m, n, k, 1, a, lda, b, ldb, 0, want, ldc)
				impl.Dgemm(blas.NoTrans, tB, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
				if same := sameBits(c, want) < 0; same != UsesKernel(tB, m, n) {
					t.Errorf("%v %d×%d: Dgemm has the kernel's bits: %v; UsesKernel %v", tB, m, n, same, UsesKernel(tB, m, n))
				}
			}
		}
	}
}

// TestKernelProductInPieces: KernelProduct follows the specified
// arithmetic for every shape, and a product cut into blocks of rows and
// columns of C and into pieces of the inner dimension at multiples of KC
// (β, then 1) gives the bits of one call.
func TestKernelProductInPieces(t *testing.T) {
	if ok, _ := Active(); !ok {
		t.Skip("no vector kernel")
	}
	rng := rand.New(rand.NewPCG(43, 44))
	for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
		for _, s := range []struct{ m, n, k int }{{1, 1, 1}, {2, 40, 5}, {37, 29, 2*KC + 17}, {100, 3, KC}} {
			for _, ab := range [][2]float64{{1, 0}, {1, 1}, {-0.7, 0.3}} {
				alpha, beta := ab[0], ab[1]
				tA, tB := blas.NoTrans, blas.NoTrans
				if tr[0] {
					tA = blas.Trans
				}
				if tr[1] {
					tB = blas.Trans
				}
				a, lda, b, ldb, c, ldc := operands(rng, tr[0], tr[1], s.m, s.n, s.k)
				want := append([]float64(nil), c...)
				reference(tr[0], tr[1], s.m, s.n, s.k, alpha, a, lda, b, ldb, beta, want, ldc)
				one := append([]float64(nil), c...)
				KernelProduct(tA, tB, s.m, s.n, s.k, alpha, a, lda, b, ldb, beta, one, ldc)
				if i := sameBits(one, want); i >= 0 {
					t.Fatalf("%v %v: one call differs from the reference at %d", tr, s, i)
				}
				const rb, cb = 7, 11
				for i0 := 0; i0 < s.m; i0 += rb {
					for j0 := 0; j0 < s.n; j0 += cb {
						mi, nj := min(rb, s.m-i0), min(cb, s.n-j0)
						for p0 := 0; p0 < s.k; p0 += KC {
							kp := min(KC, s.k-p0)
							ai, bj := i0*lda+p0, p0*ldb+j0
							if tr[0] {
								ai = p0*lda + i0
							}
							if tr[1] {
								bj = j0*ldb + p0
							}
							bt := beta
							if p0 > 0 {
								bt = 1
							}
							KernelProduct(tA, tB, mi, nj, kp, alpha, a[ai:], lda, b[bj:], ldb, bt, c[i0*ldc+j0:], ldc)
						}
					}
				}
				if i := sameBits(c, want); i >= 0 {
					t.Fatalf("%v %v α=%v β=%v: in pieces differs at %d", tr, s, alpha, beta, i)
				}
			}
		}
	}
}
