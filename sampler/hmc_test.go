package sampler

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/wcmc-project/wcmc/model"
)

func TestHMCGaussianMoments(t *testing.T) {
	// On a Gaussian target preconditioned by its exact Hessian the chain
	// samples N(μ, C); with 4000 draws of a well-mixing chain the sample
	// mean of each coordinate is within 5 standard errors (SE = sd/√n_eff,
	// n_eff taken as n/2 to allow for mild autocorrelation).
	cov := mat.NewSymDense(3, []float64{2, 0.6, 0.2, 0.6, 1, -0.3, 0.2, -0.3, 0.5})
	mu := []float64{1, -2, 0.5}
	g, err := model.NewGaussian(mu, cov)
	if err != nil {
		t.Fatal(err)
	}
	prec := mat.NewSymDense(3, nil)
	var ch mat.Cholesky
	ch.Factorize(cov)
	ch.InverseTo(prec)
	h, err := NewHMC(fusedGaussian{g}, mu, prec)
	if err != nil {
		t.Fatal(err)
	}
	const n = 4000
	dst := mat.NewDense(n, 3, nil)
	if err := h.Sample(rand.New(rand.NewPCG(1, 2)), dst, 200); err != nil {
		t.Fatal(err)
	}
	for j := range 3 {
		col := mat.Col(nil, j, dst)
		m, sd := stat.MeanStdDev(col, nil)
		if se := math.Sqrt(cov.At(j, j) / (n / 2)); math.Abs(m-mu[j]) > 5*se {
			t.Errorf("coordinate %d: mean %g, want %g ± %g", j, m, mu[j], 5*se)
		}
		// The sample variance of n_eff draws has relative SE √(2/n_eff).
		if rel := math.Sqrt(2 / (n / 2.0)); math.Abs(sd*sd/cov.At(j, j)-1) > 5*rel {
			t.Errorf("coordinate %d: variance %g, want %g", j, sd*sd, cov.At(j, j))
		}
	}
	if a := h.AcceptRate(); a < 0.5 {
		t.Errorf("acceptance %g after adaptation", a)
	}
}

// fusedGaussian adds LogJointGrad to model.Gaussian.
type fusedGaussian struct{ *model.Gaussian }

func (f fusedGaussian) LogJointGrad(dst []float64, grad, theta *mat.Dense) {
	f.LogJoint(dst, theta)
	f.GradLogJoint(grad, theta)
}

func TestHMCMatchesGibbsOnProbit(t *testing.T) {
	// On small, non-separable probit data both exact samplers target the
	// same posterior: their means agree within 5 combined standard errors
	// (each SE from batch means over 20 batches).
	rng := rand.New(rand.NewPCG(5, 6))
	const n, d, s = 200, 2, 6000
	u := mat.NewDense(n, d, nil)
	v := make([]float64, n)
	for i := range n {
		u.Set(i, 0, rng.NormFloat64())
		u.Set(i, 1, rng.NormFloat64())
		if rng.Float64() < 0.5+0.3*math.Tanh(u.At(i, 0)-0.5*u.At(i, 1)) {
			v[i] = 1
		}
	}
	gib, err := NewGibbs(u, v, 4)
	if err != nil {
		t.Fatal(err)
	}
	hmc, err := NewProbitHMC(u, v, 4)
	if err != nil {
		t.Fatal(err)
	}
	a, b := mat.NewDense(s, d, nil), mat.NewDense(s, d, nil)
	if _, err := RunChains(context.Background(), []*rand.Rand{rand.New(rand.NewPCG(7, 8)), rand.New(rand.NewPCG(9, 10))}, []Runner{gib, hmc}, []*mat.Dense{a, b}, nil, 200, 1, nil); err != nil {
		t.Fatal(err)
	}
	for j := range d {
		ma, sea := batchMeans(mat.Col(nil, j, a), 20)
		mb, seb := batchMeans(mat.Col(nil, j, b), 20)
		if math.Abs(ma-mb) > 5*math.Hypot(sea, seb) {
			t.Errorf("coordinate %d: Gibbs mean %g ± %g, HMC %g ± %g", j, ma, sea, mb, seb)
		}
	}
}
