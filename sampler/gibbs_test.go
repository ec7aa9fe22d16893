package sampler

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/model"
)

// TestGibbsThetaGivenKappa checks eq: sample posterior with κ held fixed:
// θ | κ ~ N(C Uᵀκ, C), C = (UᵀU + σ⁻²I)⁻¹, with C computed independently
// by inversion. Tolerance: 5 standard errors, √(C_ii/n) for mean entries
// and √((C_ii C_jj + C_ij²)/n) for covariance entries (Gaussian draws).
func TestGibbsThetaGivenKappa(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 0))
	u, v := synthProbit(rng, 50, []float64{1, -0.5, 0.3})
	const pv = 2.0
	g, err := NewGibbs(u, v, pv)
	if err != nil {
		t.Fatal(err)
	}
	kappa := make([]float64, 50)
	for i := range kappa {
		kappa[i] = 2 * rng.NormFloat64()
	}
	b := mat.NewVecDense(3, nil)
	b.MulVec(u.T(), mat.NewVecDense(50, kappa))
	var prec, c mat.Dense
	prec.Mul(u.T(), u)
	for i := 0; i < 3; i++ {
		prec.Set(i, i, prec.At(i, i)+1/pv)
	}
	if err := c.Inverse(&prec); err != nil {
		t.Fatal(err)
	}
	var mean mat.VecDense
	mean.MulVec(&c, b)

	const n = 40000
	draws := mat.NewDense(n, 3, nil)
	work := make([]float64, 3)
	for s := 0; s < n; s++ {
		copy(work, b.RawVector().Data)
		g.k.drawTheta(rng, g.s, work)
		copy(draws.RawRowView(s), g.Theta())
	}
	checkGaussianMoments(t, draws, mean.RawVector().Data, &c, n)
}

// checkGaussianMoments compares the sample mean and covariance of n
// independent draws with N(mu, c), at 5 standard errors.
func checkGaussianMoments(t *testing.T, draws *mat.Dense, mu []float64, c mat.Matrix, n int) {
	t.Helper()
	_, d := draws.Dims()
	m := make([]float64, d)
	for s := 0; s < n; s++ {
		floats.Add(m, draws.RawRowView(s))
	}
	floats.Scale(1/float64(n), m)
	for i := 0; i < d; i++ {
		if se := math.Sqrt(c.At(i, i) / float64(n)); math.Abs(m[i]-mu[i]) > 5*se {
			t.Errorf("mean[%d] = %v, want %v (SE %.2g)", i, m[i], mu[i], se)
		}
	}
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			var cov float64
			for s := 0; s < n; s++ {
				r := draws.RawRowView(s)
				cov += (r[i] - m[i]) * (r[j] - m[j])
			}
			cov /= float64(n - 1)
			se := math.Sqrt((c.At(i, i)*c.At(j, j) + c.At(i, j)*c.At(i, j)) / float64(n))
			if math.Abs(cov-c.At(i, j)) > 5*se {
				t.Errorf("cov[%d,%d] = %v, want %v (SE %.2g)", i, j, cov, c.At(i, j), se)
			}
		}
	}
}

// TestGibbsPosteriorQuadrature runs a long chain on N = 20, d = 2 data and
// compares its mean and covariance with the exact posterior computed by the
// trapezoid rule on a 2-D grid of exp(LogJoint). The tolerance is 5
// batch-means standard errors (100 batches of 2000 sweeps, far longer than
// the chain's autocorrelation time), which account for the autocorrelation.
func TestGibbsPosteriorQuadrature(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 0))
	u, v := synthProbit(rng, 20, []float64{1, -0.5})
	const pv = 4.0
	p, err := model.NewProbit(u, v, pv)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGibbs(u, v, pv)
	if err != nil {
		t.Fatal(err)
	}

	// Exact moments by quadrature on [MAP ± 6]² (the posterior sd here is
	// ≲ 0.6, so the mass outside is negligible), 801² points.
	const ng, half = 801, 6.0
	mapθ := g.MAP()
	h := 2 * half / (ng - 1)
	grid := mat.NewDense(ng*ng, 2, nil)
	w := make([]float64, ng*ng)
	for i := 0; i < ng; i++ {
		for j := 0; j < ng; j++ {
			grid.Set(i*ng+j, 0, mapθ[0]-half+float64(i)*h)
			grid.Set(i*ng+j, 1, mapθ[1]-half+float64(j)*h)
			w[i*ng+j] = 1
			if i == 0 || i == ng-1 {
				w[i*ng+j] /= 2
			}
			if j == 0 || j == ng-1 {
				w[i*ng+j] /= 2
			}
		}
	}
	lj := make([]float64, ng*ng)
	p.LogJoint(lj, grid)
	top := floats.Max(lj)
	var z float64
	var e1 [2]float64
	var e2 [2][2]float64
	for k, l := range lj {
		q := w[k] * math.Exp(l-top)
		x := grid.RawRowView(k)
		z += q
		for a := 0; a < 2; a++ {
			e1[a] += q * x[a]
			for b := 0; b < 2; b++ {
				e2[a][b] += q * x[a] * x[b]
			}
		}
	}
	var wantMean [2]float64
	var wantCov [2][2]float64
	for a := 0; a < 2; a++ {
		wantMean[a] = e1[a] / z
	}
	for a := 0; a < 2; a++ {
		for b := 0; b < 2; b++ {
			wantCov[a][b] = e2[a][b]/z - wantMean[a]*wantMean[b]
		}
	}

	const batches, per = 100, 2000
	chain := mat.NewDense(batches*per, 2, nil)
	if err := g.Sample(rng, chain, DefaultBurnIn); err != nil {
		t.Fatal(err)
	}
	n := batches * per
	var m [2]float64
	for s := 0; s < n; s++ {
		m[0] += chain.At(s, 0) / float64(n)
		m[1] += chain.At(s, 1) / float64(n)
	}
	// Statistics: means (a, −1) and centred products (a, b).
	stat := func(x []float64, a, b int) float64 {
		if b < 0 {
			return x[a]
		}
		return (x[a] - m[a]) * (x[b] - m[b])
	}
	for _, c := range []struct {
		a, b int
		want float64
	}{{0, -1, wantMean[0]}, {1, -1, wantMean[1]}, {0, 0, wantCov[0][0]}, {0, 1, wantCov[0][1]}, {1, 1, wantCov[1][1]}} {
		bm := make([]float64, batches)
		for k := range bm {
			for s := k * per; s < (k+1)*per; s++ {
				bm[k] += stat(chain.RawRowView(s), c.a, c.b) / per
			}
		}
		est := floats.Sum(bm) / batches
		var sv float64
		for _, x := range bm {
			sv += (x - est) * (x - est)
		}
		se := math.Sqrt(sv / (batches - 1) / batches)
		if math.Abs(est-c.want) > 5*se {
			t.Errorf("statistic (%d,%d): chain %.5g, quadrature %.5g (SE %.2g)", c.a, c.b, est, c.want, se)
		}
	}
}

// TestRunChainsMatchesSequential checks bit-identical results for K
// chains run in parallel and one after another with the same generators.
func TestRunChainsMatchesSequential(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 0))
	u, v := synthProbit(rng, 900, []float64{0.5, -1, 1.5})
	const k, s = 5, 200
	build := func() ([]Runner, []*rand.Rand, []*mat.Dense) {
		chains := make([]Runner, k)
		rngs := make([]*rand.Rand, k)
		dst := make([]*mat.Dense, k)
		for i := 0; i < k; i++ {
			sh := u.Slice(i*180, (i+1)*180, 0, 3).(*mat.Dense)
			var err error
			chains[i], err = NewGibbs(sh, v[i*180:(i+1)*180], k*2.0)
			if err != nil {
				t.Fatal(err)
			}
			rngs[i] = rand.New(rand.NewPCG(100, uint64(i)))
			dst[i] = mat.NewDense(s, 3, nil)
		}
		return chains, rngs, dst
	}
	par, prng, pdst := build()
	if _, err := RunChains(context.Background(), prng, par, pdst, nil, DefaultBurnIn, 1, nil); err != nil {
		t.Fatal(err)
	}
	seq, srng, sdst := build()
	for i := range seq {
		if _, err := seq[i].Run(context.Background(), srng[i], sdst[i], nil, DefaultBurnIn, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range pdst {
		if !mat.Equal(pdst[i], sdst[i]) {
			t.Errorf("chain %d differs between parallel and sequential runs", i)
		}
	}
	if mat.Equal(pdst[0], pdst[1]) {
		t.Error("chains 0 and 1 are identical")
	}

	prng[1] = prng[0]
	if _, err := RunChains(context.Background(), prng, par, pdst, nil, 0, 1, nil); err == nil || !strings.Contains(err.Error(), "share a generator") {
		t.Errorf("shared generator: error %v", err)
	}
	if _, err := RunChains(context.Background(), prng[:2], par, pdst, nil, 0, 1, nil); err == nil {
		t.Error("length mismatch: no error")
	}
}

func TestGibbsErrorsAndAllocs(t *testing.T) {
	u := mat.NewDense(2, 1, []float64{1, 2})
	if _, err := NewGibbs(u, []float64{1, 2}, 1); err == nil || !strings.Contains(err.Error(), "v[1]") {
		t.Errorf("bad label: error %v", err)
	}
	rng := rand.New(rand.NewPCG(24, 0))
	for _, d := range []int{3, 20} { // both code paths of Sweep
		ts := make([]float64, d)
		ts[0] = 1
		u, v := synthProbit(rng, 300, ts)
		g, err := NewGibbs(u, v, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Sample(rng, mat.NewDense(1, d, nil), -1); err == nil {
			t.Error("negative burn-in: no error")
		}
		if a := testing.AllocsPerRun(10, func() { g.Sweep(rng) }); a != 0 {
			t.Errorf("d=%d: %v allocations per sweep", d, a)
		}
		// κ_n has the sign of its label after a sweep.
		for n, k := range g.Kappa() {
			if (v[n] == 1) != (k > 0) {
				t.Fatalf("κ[%d] = %v with label %v", n, k, v[n])
			}
		}
	}
}
