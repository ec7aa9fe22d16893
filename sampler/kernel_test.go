package sampler

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestKernelsMatchGeneric checks that dot and axpy (assembly where the CPU
// has FMA) are bit-identical to their portable forms, for every length up
// to 70 (all tail cases of the 16- and 4-wide loops) and misaligned
// starts, and that dot is accurate: |dot − Σ| ≤ n·ε·Σ|x_i y_i| against a
// compensated sum.
func TestKernelsMatchGeneric(t *testing.T) {
	t.Logf("useFMA = %v", useFMA)
	rng := rand.New(rand.NewPCG(41, 0))
	buf := make([]float64, 200)
	for i := range buf {
		buf[i] = rng.NormFloat64() * math.Exp(3*rng.NormFloat64())
	}
	for n := 0; n <= 70; n++ {
		for off := 0; off < 3; off++ {
			x, y := buf[off:off+n], buf[100+off:100+off+n]
			got, want := dot(x, y), dotGeneric(x, y)
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("n=%d off=%d: dot %v, generic %v", n, off, got, want)
			}
			var s, c, abs float64 // Kahan–Babuška reference
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
			alpha := rng.NormFloat64()
			y1 := append([]float64(nil), y...)
			y2 := append([]float64(nil), y...)
			axpy(alpha, x, y1)
			axpyGeneric(alpha, x, y2)
			for i := range y1 {
				if math.Float64bits(y1[i]) != math.Float64bits(y2[i]) {
					t.Fatalf("n=%d: axpy[%d] %v, generic %v", n, i, y1[i], y2[i])
				}
			}
		}
	}
}
