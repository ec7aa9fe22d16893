package sampler

import "math"

// The row kernels of the Gibbs sweep. Their arithmetic is fixed — fused
// multiply-adds in a set order — so that the AVX/FMA assembly on amd64
// (kernel_amd64.s) and the portable code below (math.FMA: one instruction
// on arm64 and on amd64 with FMA3, emulated exactly elsewhere) give
// bit-identical results: a chain's output depends on its seed only, not on
// the machine that ran it.

// dotGeneric returns Σ x_i y_i computed as sixteen interleaved partial
// sums: lane l accumulates fma(x_i, y_i, ·) over i ≡ l (mod 16) for the
// full blocks of 16, then lanes 0–3 continue over the full blocks of 4;
// the lanes are reduced as ((a₀+a₁)+(a₂+a₃)) register-wise (a_r = lanes
// 4r..4r+3), then (v₀+v₂)+(v₁+v₃), and the last len(x) mod 4 terms are
// added by fma in order.
func dotGeneric(x, y []float64) float64 {
	var acc [16]float64
	n := len(x)
	y = y[:n]
	i := 0
	for ; i+16 <= n; i += 16 {
		xs, ys := x[i:i+16:i+16], y[i:i+16:i+16]
		for l := range acc {
			acc[l] = math.FMA(xs[l], ys[l], acc[l])
		}
	}
	for ; i+4 <= n; i += 4 {
		xs, ys := x[i:i+4:i+4], y[i:i+4:i+4]
		for l := 0; l < 4; l++ {
			acc[l] = math.FMA(xs[l], ys[l], acc[l])
		}
	}
	var v [4]float64
	for l := range v {
		v[l] = (acc[l] + acc[4+l]) + (acc[8+l] + acc[12+l])
	}
	s := (v[0] + v[2]) + (v[1] + v[3])
	for ; i < n; i++ {
		s = math.FMA(x[i], y[i], s)
	}
	return s
}

// axpyGeneric sets y_i = fma(alpha, x_i, y_i) for i < len(x).
func axpyGeneric(alpha float64, x, y []float64) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = math.FMA(alpha, v, y[i])
	}
}
