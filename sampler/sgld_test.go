package sampler

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/model"
)

// gaussModel is a conjugate test target: z_n ~ N(θ, diag(τ²)), θ ~ N(0, σ0² I),
// so the posterior is Gaussian with per-coordinate precision
// λ_j = 1/σ0² + N/τ_j² and mean (Σ_n z_nj/τ_j²)/λ_j.
type gaussModel struct {
	z      *mat.Dense // N×d
	tau2   []float64
	prior2 float64
}

var _ model.Minibatcher = (*gaussModel)(nil)

func (g *gaussModel) Dim() int     { _, d := g.z.Dims(); return d }
func (g *gaussModel) NumData() int { n, _ := g.z.Dims(); return n }

func (g *gaussModel) LogJoint(dst []float64, theta *mat.Dense) {
	n, d := g.z.Dims()
	for s := range dst {
		th := theta.RawRowView(s)
		var v float64
		for j := 0; j < d; j++ {
			v -= th[j] * th[j] / (2 * g.prior2)
			for i := 0; i < n; i++ {
				r := g.z.At(i, j) - th[j]
				v -= r * r / (2 * g.tau2[j])
			}
		}
		dst[s] = v
	}
}

func (g *gaussModel) GradLogJoint(grad, theta *mat.Dense) {
	n, _ := g.z.Dims()
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	g.GradLogJointBatch(grad, theta, all)
}

func (g *gaussModel) GradLogJointBatch(grad, theta *mat.Dense, batch []int) {
	n, d := g.z.Dims()
	scale := float64(n) / float64(len(batch))
	rows, _ := theta.Dims()
	for s := 0; s < rows; s++ {
		th, gr := theta.RawRowView(s), grad.RawRowView(s)
		for j := 0; j < d; j++ {
			var acc float64
			for _, i := range batch {
				acc += g.z.At(i, j) - th[j]
			}
			gr[j] = -th[j]/g.prior2 + scale*acc/g.tau2[j]
		}
	}
}

func newGaussModel(rng *rand.Rand, n int) *gaussModel {
	g := &gaussModel{z: mat.NewDense(n, 2, nil), tau2: []float64{1, 4}, prior2: 10}
	truth := []float64{0.5, -1}
	for i := 0; i < n; i++ {
		for j := 0; j < 2; j++ {
			g.z.Set(i, j, truth[j]+math.Sqrt(g.tau2[j])*rng.NormFloat64())
		}
	}
	return g
}

// batchMeans returns the mean of x and its batch-means standard error.
func batchMeans(x []float64, batches int) (mean, se float64) {
	per := len(x) / batches
	bm := make([]float64, batches)
	for k := range bm {
		for _, v := range x[k*per : (k+1)*per] {
			bm[k] += v / float64(per)
		}
		mean += bm[k] / float64(batches)
	}
	var sv float64
	for _, b := range bm {
		sv += (b - mean) * (b - mean)
	}
	return mean, math.Sqrt(sv / float64(batches-1) / float64(batches))
}

// TestSGLDGaussian checks that SGLD reaches the right stationary law on the
// conjugate Gaussian target. With a constant step η (γ = 0) each coordinate
// is the AR(1) chain θ' = ρθ + (η/2)(c + ξ) + √η z, ρ = 1 − ηλ/2, where ξ is
// the minibatch gradient error: mean 0 and, for sampling N_b of N points
// without replacement, Var ξ = (N²/N_b)(1 − N_b/N) s²/τ⁴ (s² the sample
// variance of the z_nj). Its stationary law has mean exactly the posterior
// mean and variance
//
//	v∞ = (η + η² Var ξ / 4)/(1 − ρ²),
//
// which tends to the posterior variance 1/λ as η → 0. With N_b = 10 of
// N = 100 the minibatch term adds 22% (coordinate 0) and 6% (coordinate 1)
// to v∞, so the test verifies the N/N_b scaling and the sampling without
// replacement; with N_b = N and small η, v∞ = 1/(λ(1 − ηλ/4)) is within
// 0.5% of 1/λ, and the posterior variance itself is checked with that bias
// added to the tolerance. Tolerances: 5 batch-means standard errors (100
// batches of 5000 iterations, ≫ the integrated autocorrelation time
// (1+ρ)/(1−ρ) ≤ 200).
func TestSGLDGaussian(t *testing.T) {
	const n = 100
	g := newGaussModel(rand.New(rand.NewPCG(41, 0)), n)
	lam := make([]float64, 2)
	post := make([]float64, 2)
	varXi := make([]float64, 2)
	for j := 0; j < 2; j++ {
		lam[j] = 1/g.prior2 + n/g.tau2[j]
		var sum, ss float64
		for i := 0; i < n; i++ {
			sum += g.z.At(i, j)
		}
		mean := sum / n
		for i := 0; i < n; i++ {
			ss += (g.z.At(i, j) - mean) * (g.z.At(i, j) - mean)
		}
		post[j] = sum / g.tau2[j] / lam[j]
		varXi[j] = ss / (n - 1) / (g.tau2[j] * g.tau2[j])
	}
	for _, c := range []struct {
		nb   int
		eta  float64
		bias bool // also compare with the posterior variance 1/λ
	}{{10, 1e-3, false}, {n, 2e-4, true}} {
		const keep, burn = 500000, 5000
		cfg := SGLDConfig{Alpha: c.eta, Beta: 1, Gamma: 0, BatchSize: c.nb, BurnIn: burn}
		dst := mat.NewDense(keep, 2, nil)
		rng := rand.New(rand.NewPCG(42, uint64(c.nb)))
		theta0 := []float64{math.Sqrt(g.prior2) * rng.NormFloat64(), math.Sqrt(g.prior2) * rng.NormFloat64()}
		if err := RunSGLD(rng, g, cfg, theta0, dst); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 2; j++ {
			x := make([]float64, keep)
			for s := range x {
				x[s] = dst.At(s, j)
			}
			m, seM := batchMeans(x, 100)
			if math.Abs(m-post[j]) > 5*seM {
				t.Errorf("N_b=%d θ_%d: mean %.6g, posterior mean %.6g (SE %.2g)", c.nb, j, m, post[j], seM)
			}
			for s := range x {
				x[s] = (x[s] - m) * (x[s] - m)
			}
			v, seV := batchMeans(x, 100)
			rho := 1 - c.eta*lam[j]/2
			vxi := float64(n*n) / float64(c.nb) * (1 - float64(c.nb)/n) * varXi[j]
			vInf := (c.eta + c.eta*c.eta*vxi/4) / (1 - rho*rho)
			if math.Abs(v-vInf) > 5*seV {
				t.Errorf("N_b=%d θ_%d: variance %.6g, stationary %.6g (SE %.2g)", c.nb, j, v, vInf, seV)
			}
			if c.bias {
				if math.Abs(v-1/lam[j]) > 5*seV+math.Abs(vInf-1/lam[j]) {
					t.Errorf("N_b=%d θ_%d: variance %.6g, posterior %.6g", c.nb, j, v, 1/lam[j])
				}
			}
		}
	}
}

func TestSGLDObserveAndErrors(t *testing.T) {
	g := newGaussModel(rand.New(rand.NewPCG(43, 0)), 50)
	var iters, kepts []int
	cfg := SGLDConfig{Alpha: 1e-3, Beta: 1, Gamma: 0.55, BatchSize: 5, BurnIn: 10, Every: 4,
		Observe: func(it int, kept *mat.Dense) {
			iters = append(iters, it)
			if kept == nil {
				kepts = append(kepts, 0)
			} else {
				r, _ := kept.Dims()
				kepts = append(kepts, r)
			}
		}}
	dst := mat.NewDense(10, 2, nil)
	if err := RunSGLD(rand.New(rand.NewPCG(1, 1)), g, cfg, []float64{0, 0}, dst); err != nil {
		t.Fatal(err)
	}
	wantIt := []int{4, 8, 12, 16, 20}
	wantKept := []int{0, 0, 2, 6, 10}
	for i := range wantIt {
		if i >= len(iters) || iters[i] != wantIt[i] || kepts[i] != wantKept[i] {
			t.Fatalf("checkpoints (iteration, kept) = %v, %v; want %v, %v", iters, kepts, wantIt, wantKept)
		}
	}

	// Step far beyond 4/λ: the chain diverges; the error names the iteration and the step size η_t.
	bad := SGLDConfig{Alpha: 10, Beta: 1, BatchSize: 5, BurnIn: 0}
	err := RunSGLD(rand.New(rand.NewPCG(1, 1)), g, bad, []float64{0, 0}, mat.NewDense(100000, 2, nil))
	if !errors.Is(err, ErrDiverged) || !strings.Contains(err.Error(), "iteration") || !strings.Contains(err.Error(), "step size 10") {
		t.Errorf("divergence: error %v", err)
	}

	for _, c := range []struct {
		cfg  SGLDConfig
		th0  []float64
		want string
	}{
		{SGLDConfig{Alpha: 0, Beta: 1, BatchSize: 5}, []float64{0, 0}, "α"},
		{SGLDConfig{Alpha: 1, Beta: 0, BatchSize: 5}, []float64{0, 0}, "β"},
		{SGLDConfig{Alpha: 1, Beta: 1, Gamma: 1.5, BatchSize: 5}, []float64{0, 0}, "γ"},
		{SGLDConfig{Alpha: 1, Beta: 1, BatchSize: 51}, []float64{0, 0}, "batch size 51"},
		{SGLDConfig{Alpha: 1, Beta: 1, BatchSize: 5, BurnIn: -1}, []float64{0, 0}, "burn-in"},
		{SGLDConfig{Alpha: 1, Beta: 1, BatchSize: 5}, []float64{0}, "length 1"},
		{SGLDConfig{Alpha: 1, Beta: 1, BatchSize: 5}, []float64{0, math.NaN()}, "θ₀[1]"},
	} {
		err := RunSGLD(rand.New(rand.NewPCG(1, 1)), g, c.cfg, c.th0, dst)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("config %+v: error %v, want mention of %q", c.cfg, err, c.want)
		}
	}
}

// TestSGLDNoPerIterationAllocs checks that the allocation count of a run
// does not grow with its length (set-up only), using the probit target.
func TestSGLDNoPerIterationAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(44, 0))
	u, v := synthProbit(rng, 400, []float64{1, -1, 0.5})
	p, _ := model.NewProbit(u, v, 1)
	cfg := SGLDConfig{Alpha: 1e-3, Beta: 1, Gamma: 0.7, BatchSize: 40, BurnIn: 5}
	short, long := mat.NewDense(10, 3, nil), mat.NewDense(2000, 3, nil)
	run := func(dst *mat.Dense) float64 {
		return testing.AllocsPerRun(3, func() {
			if err := RunSGLD(rng, p, cfg, []float64{0, 0, 0}, dst); err != nil {
				t.Fatal(err)
			}
		})
	}
	if a, b := run(short), run(long); a != b {
		t.Errorf("allocations: %v for 15 iterations, %v for 2005", a, b)
	}
}
