package sampler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// TestSweepLatentLaw checks the κ-step of a whole sweep, for both passes
// (d ≤ 8 and d > 8) and row counts that leave partial blocks and chunks:
// given θ before the sweep, κ_n ~ N(m_n, 1) truncated to the side of v_n,
// so u_n = F_n(κ_n) (F_n the truncated CDF) are i.i.d. uniform. The counts
// of u_n in 20 equal bins are compared with Pearson's χ² test at level
// 10⁻⁴. It also checks that the accumulator holds Uᵀκ (before the θ-draw)
// to rounding: |b − Uᵀκ| ≤ Nε·|U|ᵀ|κ| entrywise (the bound for any order
// of summation; one row missing or counted twice would be off by about
// |U|ᵀ|κ|/N).
func TestSweepLatentLaw(t *testing.T) {
	const bins = 20
	crit := distuv.ChiSquared{K: bins - 1}.Quantile(1 - 1e-4)
	for _, c := range []struct{ n, d int }{{20011, 3}, {20011, 9}, {10007, 40}, {1201, 301}} {
		t.Run(fmt.Sprintf("N=%d d=%d", c.n, c.d), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(61, uint64(c.d)))
			ts := make([]float64, c.d)
			for j := range ts {
				ts[j] = 1.5 * rng.NormFloat64() / math.Sqrt(float64(c.d))
			}
			u, v := synthProbit(rng, c.n, ts)
			g, err := NewGibbs(u, v, 1)
			if err != nil {
				t.Fatal(err)
			}
			g.Sweep(rng)
			theta := mat.NewVecDense(c.d, append([]float64(nil), g.Theta()...))
			var m mat.VecDense
			m.MulVec(u, theta)
			// The sweep without its θ-draw, so that the state's b keeps Uᵀκ.
			if c.d > smallDim {
				g.k.sweepRows(rng, g.s)
			} else {
				g.k.sweepCols(rng, g.s)
			}
			counts := make([]int, bins)
			for i, k := range g.Kappa() {
				mi := m.AtVec(i)
				var f float64
				if v[i] == 1 { // κ > 0: (Φ(κ−m) − Φ(−m)) / (1 − Φ(−m))
					lo := distuv.UnitNormal.CDF(-mi)
					f = (distuv.UnitNormal.CDF(k-mi) - lo) / (1 - lo)
				} else { // κ ≤ 0: Φ(κ−m) / Φ(−m)
					f = distuv.UnitNormal.CDF(k-mi) / distuv.UnitNormal.CDF(-mi)
				}
				counts[min(bins-1, max(0, int(bins*f)))]++
			}
			if x2 := chiSquareUniform(counts, c.n); x2 > crit {
				t.Errorf("χ² = %.1f > %.1f: counts %v", x2, crit, counts)
			}
			kap := mat.NewVecDense(c.n, g.Kappa())
			var want, bound mat.VecDense
			want.MulVec(u.T(), kap)
			var absU mat.Dense
			absU.Apply(func(_, _ int, x float64) float64 { return math.Abs(x) }, u)
			absK := mat.NewVecDense(c.n, nil)
			for i, k := range g.Kappa() {
				absK.SetVec(i, math.Abs(k))
			}
			bound.MulVec(absU.T(), absK)
			for j := range c.d {
				if diff := math.Abs(g.s.b[j] - want.AtVec(j)); diff > float64(c.n)*0x1p-52*bound.AtVec(j) {
					t.Errorf("(Uᵀκ)[%d] = %v, want %v", j, g.s.b[j], want.AtVec(j))
				}
			}
		})
	}
}
