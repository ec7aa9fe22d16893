package sampler

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestKernelsMatchGeneric checks that the row kernels (assembly where the
// CPU has FMA: the AVX-512 four-row kernels where it has AVX-512, and
// the AVX ones with those turned off) are bit-identical to their portable
// forms, for every length up to 40 (all tail cases of the 8-, 4- and
// 1-wide loops), misaligned starts and a row stride larger than the
// length; and that dot is accurate: |dot − Σ| ≤ (n+1)ε Σ|x_i y_i| against
// a compensated sum.
func TestKernelsMatchGeneric(t *testing.T) {
	saved := useAVX512
	defer func() { useAVX512 = saved }()
	for _, avx512 := range kernelVariants() {
		useAVX512 = avx512
		t.Run(RowKernels(), checkKernelsMatchGeneric)
	}
}

// kernelVariants lists the settings of useAVX512 the CPU can run.
func kernelVariants() []bool {
	if useAVX512 {
		return []bool{true, false}
	}
	return []bool{false}
}

func checkKernelsMatchGeneric(t *testing.T) {
	t.Logf("useFMA = %v, useAVX512 = %v", useFMA, useAVX512)
	rng := rand.New(rand.NewPCG(41, 0))
	buf := make([]float64, 400)
	for i := range buf {
		buf[i] = rng.NormFloat64() * math.Exp(3*rng.NormFloat64())
	}
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	for n := 0; n <= 40; n++ {
		for off := 0; off < 3; off++ {
			x, y := buf[off:off+n], buf[300+off:300+off+n]
			got, want := dot(x, y), dotGeneric(x, y)
			if !same(got, want) {
				t.Fatalf("n=%d off=%d: dot %v, generic %v", n, off, got, want)
			}
			var s, c, abs float64 // Neumaier's compensated sum
			for i := range x {
				p := x[i] * y[i]
				abs += math.Abs(p)
				tt := s + p
				if math.Abs(s) >= math.Abs(p) {
					c += (s - tt) + p
				} else {
					c += (p - tt) + s
				}
				s = tt
			}
			if err := math.Abs(got - (s + c)); err > float64(n+1)*0x1p-52*abs {
				t.Errorf("n=%d: dot %v, exact %v", n, got, s+c)
			}

			stride := n + 3
			rows := buf[off : off+3*stride+n]
			var d4 [4]float64
			dot4(&d4, rows, stride, y)
			for r := range d4 {
				if w := dotGeneric(rows[r*stride:r*stride+n], y); !same(d4[r], w) {
					t.Fatalf("n=%d: dot4 row %d %v, generic %v", n, r, d4[r], w)
				}
			}

			alpha := [4]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
			y1 := append([]float64(nil), y...)
			y2 := append([]float64(nil), y...)
			axpy(alpha[0], x, y1)
			axpyGeneric(alpha[0], x, y2)
			for i := range y1 {
				if !same(y1[i], y2[i]) {
					t.Fatalf("n=%d: axpy[%d] %v, generic %v", n, i, y1[i], y2[i])
				}
			}
			axpy4(&alpha, rows, stride, y1)
			for r, a := range alpha {
				axpyGeneric(a, rows[r*stride:r*stride+n], y2)
			}
			for i := range y1 {
				if !same(y1[i], y2[i]) {
					t.Fatalf("n=%d: axpy4[%d] %v, generic %v", n, i, y1[i], y2[i])
				}
			}
		}
	}
}

// A negative row stride, which would send the assembly before the start of
// x, panics like a short x does.
func TestRowKernelsRefuseNegativeStride(t *testing.T) {
	x, y := make([]float64, 16), make([]float64, 4)
	for name, f := range map[string]func(){
		"dot4":  func() { var d [4]float64; dot4(&d, x[8:], -2, y) },
		"axpy4": func() { a := [4]float64{1, 1, 1, 1}; axpy4(&a, x[8:], -2, y) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s with stride −2: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestF32KernelsMatchFloat64 checks the float32 row kernels against their
// definition: on every implementation the CPU runs, dot4F32 and axpy4F32
// give the bits of the float64 kernels' portable forms on the rows widened
// to float64, for every length up to 40, misaligned starts and a row
// stride larger than the length.
func TestF32KernelsMatchFloat64(t *testing.T) {
	saved := useAVX512
	defer func() { useAVX512 = saved }()
	for _, avx512 := range kernelVariants() {
		useAVX512 = avx512
		t.Run(RowKernels(), checkF32Kernels)
	}
}

func checkF32Kernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 0))
	buf := make([]float32, 400)
	for i := range buf {
		buf[i] = float32(rng.NormFloat64() * math.Exp(3*rng.NormFloat64()))
	}
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	widen := func(x []float32) []float64 {
		w := make([]float64, len(x))
		for i, v := range x {
			w[i] = float64(v)
		}
		return w
	}
	for n := 0; n <= 40; n++ {
		for off := 0; off < 3; off++ {
			y := make([]float64, n)
			for i := range y {
				y[i] = rng.NormFloat64()
			}
			stride := n + 3
			rows := buf[off : off+3*stride+n]
			var d4 [4]float64
			dot4F32(&d4, rows, stride, y)
			for r := range d4 {
				if w := dotGeneric(widen(rows[r*stride:r*stride+n]), y); !same(d4[r], w) {
					t.Fatalf("n=%d off=%d: dot4F32 row %d %v, float64 %v", n, off, r, d4[r], w)
				}
			}
			alpha := [4]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
			y1 := append([]float64(nil), y...)
			y2 := append([]float64(nil), y...)
			axpy4F32(&alpha, rows, stride, y1)
			for r, a := range alpha {
				axpyGeneric(a, widen(rows[r*stride:r*stride+n]), y2)
			}
			for i := range y1 {
				if !same(y1[i], y2[i]) {
					t.Fatalf("n=%d off=%d: axpy4F32[%d] %v, float64 %v", n, off, i, y1[i], y2[i])
				}
			}
			x := rows[:n]
			if got, w := dotF32Generic(x, y), dotGeneric(widen(x), y); !same(got, w) {
				t.Fatalf("n=%d: dotF32Generic %v, float64 %v", n, got, w)
			}
		}
	}
}
