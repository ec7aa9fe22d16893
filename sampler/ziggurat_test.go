package sampler

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/stat/distuv"
)

// TestZigguratTables checks the bisection for the base edge r against the
// published 256-layer values (Marsaglia & Tsang 2000) and that every
// layer has the common area v: the base strip r f(r) + tail(r), each
// rectangle x_i (f(x_{i+1}) − f(x_i)) with x_i = w[i]·scale.
func TestZigguratTables(t *testing.T) {
	if !scalar.EqualWithinRel(zigNorm.r, 3.6541528853610088, 1e-13) {
		t.Errorf("normal r = %.17g", zigNorm.r)
	}
	if !scalar.EqualWithinRel(zigExp.r, 7.69711747013104972, 1e-13) {
		t.Errorf("exponential r = %.17g", zigExp.r)
	}
	for _, c := range []struct {
		name  string
		t     *zigTable
		f     func(float64) float64
		tail  func(float64) float64
		scale float64
	}{
		{"normal", &zigNorm, func(x float64) float64 { return math.Exp(-x * x / 2) },
			func(r float64) float64 { return math.Sqrt(math.Pi/2) * math.Erfc(r/math.Sqrt2) }, two31},
		{"exponential", &zigExp, func(x float64) float64 { return math.Exp(-x) },
			func(r float64) float64 { return math.Exp(-r) }, two32},
	} {
		r := c.t.r
		v := c.t.w[0] * c.scale * c.f(r) // base strip: equivalent width × f(r)
		if !scalar.EqualWithinRel(v, r*c.f(r)+c.tail(r), 1e-12) {
			t.Errorf("%s: base strip area %v, want r f(r) + tail = %v", c.name, v, r*c.f(r)+c.tail(r))
		}
		for i := zigLayers - 1; i >= 2; i-- {
			x := c.t.w[i] * c.scale
			area := x * (c.t.f[i-1] - c.t.f[i])
			if !scalar.EqualWithinRel(area, v, 1e-9) {
				t.Fatalf("%s layer %d: area %v, want %v", c.name, i, area, v)
			}
		}
		// The top layer reaches f(0) = 1.
		if x := c.t.w[1] * c.scale; !scalar.EqualWithinRel(x*(1-c.t.f[1]), v, 1e-9) {
			t.Errorf("%s: top layer area %v, want %v", c.name, x*(1-c.t.f[1]), v)
		}
	}
}

// chiSquareUniform returns Pearson's statistic for counts in equiprobable
// bins.
func chiSquareUniform(counts []int, n int) float64 {
	e := float64(n) / float64(len(counts))
	var x2 float64
	for _, c := range counts {
		x2 += (float64(c) - e) * (float64(c) - e) / e
	}
	return x2
}

// TestZigguratDistribution draws 10⁶ variates of each law and compares
// the counts in 200 equiprobable bins (bin = ⌊200·F(x)⌋) with Pearson's χ²
// test at level 10⁻⁴ (critical value of χ²(199)), and the share beyond the
// base edge r (the tail branch) with its probability within 5 binomial
// standard errors. fillNormal and fillExp must give the same streams as
// repeated stdNormal and stdExp.
func TestZigguratDistribution(t *testing.T) {
	const n, bins = 1000000, 200
	crit := distuv.ChiSquared{K: bins - 1}.Quantile(1 - 1e-4)
	for _, c := range []struct {
		name string
		one  func(*rand.Rand) float64
		fill func(*rand.Rand, []float64)
		cdf  func(float64) float64
		tail float64 // P(|X| > r)
		r    float64
	}{
		{"normal", stdNormal, fillNormal, distuv.UnitNormal.CDF, math.Erfc(zigNorm.r / math.Sqrt2), zigNorm.r},
		{"exponential", stdExp, fillExp, func(x float64) float64 { return -math.Expm1(-x) }, math.Exp(-zigExp.r), zigExp.r},
	} {
		x := make([]float64, n)
		c.fill(rand.New(rand.NewPCG(51, 1)), x)
		rng := rand.New(rand.NewPCG(51, 1))
		for i := 0; i < 1000; i++ {
			if y := c.one(rng); y != x[i] {
				t.Fatalf("%s: fill and single draws differ at %d", c.name, i)
			}
		}
		counts := make([]int, bins)
		tail := 0
		for _, v := range x {
			counts[min(bins-1, int(bins*c.cdf(v)))]++
			if math.Abs(v) > c.r {
				tail++
			}
		}
		if x2 := chiSquareUniform(counts, n); x2 > crit {
			t.Errorf("%s: χ² = %.1f > %.1f", c.name, x2, crit)
		}
		se := math.Sqrt(c.tail * (1 - c.tail) / n)
		if got := float64(tail) / n; math.Abs(got-c.tail) > 5*se {
			t.Errorf("%s: share beyond r = %.3g, want %.3g (SE %.2g)", c.name, got, c.tail, se)
		}
	}
}

// stdExp returns a draw of Exp(1).
func stdExp(rng *rand.Rand) float64 {
	u := rng.Uint64()
	j, i := uint32(u), u>>32&(zigLayers-1)
	if j < zigExp.k[i] {
		return float64(j) * zigExp.w[i]
	}
	return expSlow(rng, j, i)
}
