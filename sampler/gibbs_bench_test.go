package sampler

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/dataset"
)

// synthProbit draws u_n ~ N(0, I_d), v_n ~ Bernoulli(Φ(θ*ᵀu_n)) as in Sec. VI-B
// (dataset.Synthetic, as U and V).
func synthProbit(rng *rand.Rand, n int, thetaStar []float64) (*mat.Dense, []float64) {
	s := dataset.Synthetic(rng, thetaStar, n)
	return s.U, s.V
}

// BenchmarkGibbsSweep times one sweep (= one posterior sample) at the
// paper's sizes: synthetic (8500, 5), MNIST-PCA-sized (12665, 30) and
// high-dimensional (15000, 300); θ* is the paper's for d = 5 and has
// i.i.d. N(0, 1/d²) entries otherwise (standard deviation 1/d: margins near
// zero, labels close to coin flips, the truncated draws' central case).
func BenchmarkGibbsSweep(b *testing.B) {
	for _, c := range []struct{ n, d int }{{8500, 5}, {12665, 30}, {15000, 300}} {
		b.Run(fmt.Sprintf("N=%d/d=%d", c.n, c.d), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			ts := []float64{0.1103, -0.5832, 0.6417, 1.8279, 0.4968}
			if c.d != 5 {
				ts = make([]float64, c.d)
				for j := range ts {
					ts[j] = rng.NormFloat64() / float64(c.d)
				}
			}
			u, v := synthProbit(rng, c.n, ts)
			g, err := NewGibbs(u, v, 1)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < 10; i++ {
				g.Sweep(rng)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				g.Sweep(rng)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}

// BenchmarkDrawLatent times the latent draws of one sweep at (8500, 5) —
// margins of a chain after 10 sweeps, so the real mix of bounds — against
// as many rng.NormFloat64 draws; ns/op is per draw.
func BenchmarkDrawLatent(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	u, v := synthProbit(rng, 8500, []float64{0.1103, -0.5832, 0.6417, 1.8279, 0.4968})
	g, err := NewGibbs(u, v, 1)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		g.Sweep(rng)
	}
	margins := make([]float64, 8500)
	for i := range margins {
		margins[i] = floats.Dot(u.RawRowView(i), g.Theta())
	}
	kap := make([]float64, len(margins))
	b.Run("DrawLatent", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			copy(kap, margins)
			DrawLatent(rng, kap, g.k.sign)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(kap)), "ns/draw")
	})
	b.Run("NormFloat64", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for i := range kap {
				kap[i] = rng.NormFloat64()
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(kap)), "ns/draw")
	})
}
