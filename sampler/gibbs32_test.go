package sampler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/diagnostics"
)

// TestGibbsFloat32IsGibbsOnRoundedData checks the float32 sweep against
// its definition: from the same start and seed, NewGibbsFloat32 on U gives
// bit for bit the samples and latent variables of NewGibbs on U rounded to
// float32, at sizes with partial blocks and single rows left over; for
// d ≤ 8 it is NewGibbs on U itself.
func TestGibbsFloat32IsGibbsOnRoundedData(t *testing.T) {
	for _, c := range []struct{ n, d int }{{1003, 30}, {401, 301}, {500, 5}} {
		t.Run(fmt.Sprintf("N=%d d=%d", c.n, c.d), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(23, uint64(c.d)))
			u, v := goldenProbit(rng, c.n, c.d)
			rounded := mat.DenseCopyOf(u)
			rounded.Apply(func(_, _ int, x float64) float64 { return float64(float32(x)) }, u)
			g32, err := NewGibbsFloat32(u, v, 2)
			if err != nil {
				t.Fatal(err)
			}
			ref := u
			if c.d > smallDim {
				ref = rounded
			}
			g64, err := NewGibbs(ref, v, 2)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := g32.Kernel().Float32(), c.d > smallDim; got != want {
				t.Fatalf("Float32() = %v, want %v", got, want)
			}
			if c.d > smallDim && u.At(0, 0) == rounded.At(0, 0) {
				t.Fatal("test data already float32")
			}
			g64.Start(g32.MAP())
			a, b := mat.NewDense(30, c.d, nil), mat.NewDense(30, c.d, nil)
			if err := g32.Sample(rand.New(rand.NewPCG(5, 6)), a, 3); err != nil {
				t.Fatal(err)
			}
			if err := g64.Sample(rand.New(rand.NewPCG(5, 6)), b, 3); err != nil {
				t.Fatal(err)
			}
			if ha, hb := sampleHash([]*mat.Dense{a}, g32.Kappa()...), sampleHash([]*mat.Dense{b}, g64.Kappa()...); ha != hb {
				t.Errorf("float32 sweep: hash %s, float64 sweep on the rounded data: %s", ha, hb)
			}
		})
	}
}

// TestGibbsFloat32WithinMonteCarloError checks that the float32 chain
// samples the same posterior as the float64 chain on the same data, to
// within Monte Carlo error: for each coordinate of θ, the difference of
// the posterior means and of the 5% and 95% quantiles of the two runs (two
// chains each, as long) is at most 5 standard errors of such a difference,
// √2 times the float64 run's Monte Carlo standard error
// (diagnostics.MCSEMean, MCSEQuantile; the float32 run's own would excuse a
// chain that wanders off). Rounding the data to float32 moves the
// posterior by about 10⁻⁷ of its spread.
func TestGibbsFloat32WithinMonteCarloError(t *testing.T) {
	const n, d, chains, burn, draws = 2000, 40, 2, 200, 2000
	rng := rand.New(rand.NewPCG(29, 0))
	ts := make([]float64, d) // margins θ*ᵀu_n of standard deviation about 1
	for j := range ts {
		ts[j] = rng.NormFloat64() / math.Sqrt(d)
	}
	u, v := synthProbit(rng, n, ts)
	run := func(newChain func(*mat.Dense, []float64, float64) (*Gibbs, error), seed uint64) [][][]float64 {
		x := make([][][]float64, d) // x[j][chain][draw]
		for j := range x {
			x[j] = make([][]float64, chains)
		}
		for c := range chains {
			g, err := newChain(u, v, 1)
			if err != nil {
				t.Fatal(err)
			}
			dst := mat.NewDense(draws, d, nil)
			if err := g.Sample(rand.New(rand.NewPCG(seed, uint64(c))), dst, burn); err != nil {
				t.Fatal(err)
			}
			for j := range d {
				x[j][c] = mat.Col(nil, j, dst)
			}
		}
		return x
	}
	x64, x32 := run(NewGibbs, 31), run(NewGibbsFloat32, 37)
	type stat struct {
		name string
		est  func([][]float64) float64
		mcse func([][]float64) float64
	}
	stats := []stat{
		{"mean", mean2, diagnostics.MCSEMean},
		{"q05", func(x [][]float64) float64 { return diagnostics.Summarize(x).Q05 }, func(x [][]float64) float64 { return diagnostics.MCSEQuantile(x, 0.05) }},
		{"q95", func(x [][]float64) float64 { return diagnostics.Summarize(x).Q95 }, func(x [][]float64) float64 { return diagnostics.MCSEQuantile(x, 0.95) }},
	}
	for j := range d {
		for _, s := range stats {
			diff := s.est(x64[j]) - s.est(x32[j])
			se := math.Sqrt2 * s.mcse(x64[j])
			if math.Abs(diff) > 5*se {
				t.Errorf("θ_%d %s: float64 %.5f, float32 %.5f: difference %.2g > 5 MCSE (%.2g)", j, s.name, s.est(x64[j]), s.est(x32[j]), diff, 5*se)
			}
		}
	}
}

// mean2 is the mean of all the draws of all the chains.
func mean2(x [][]float64) float64 {
	var s float64
	var m int
	for _, c := range x {
		for _, v := range c {
			s += v
		}
		m += len(c)
	}
	return s / float64(m)
}
