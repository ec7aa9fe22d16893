package consensus

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/model"
)

// toeplitz returns the symmetric Toeplitz matrix with first column ρ^i.
func toeplitz(d int, rho float64) *mat.SymDense {
	c := mat.NewSymDense(d, nil)
	for i := range d {
		for j := i; j < d; j++ {
			c.SetSym(i, j, math.Pow(rho, float64(j-i)))
		}
	}
	return c
}

func draw(rng *rand.Rand, c *mat.SymDense, s int) *mat.Dense {
	var ch mat.Cholesky
	if !ch.Factorize(c) {
		panic("not PD")
	}
	var l mat.TriDense
	ch.LTo(&l)
	d := c.SymmetricDim()
	z := mat.NewDense(s, d, nil)
	for i := range s {
		for j := range d {
			z.Set(i, j, rng.NormFloat64())
		}
	}
	var out mat.Dense
	out.Mul(z, l.T())
	return &out
}

func globalCov(cs []*mat.SymDense) *mat.SymDense {
	inv := make([]*mat.SymDense, len(cs))
	for i, c := range cs {
		inv[i] = mustPinv(c)
	}
	return mustPinv(sum(inv))
}

// outputCov is the exact covariance of θ = Σ_k W_k y_k given the true
// subposterior covariances: Σ_k W_k (E_k C_k E_kᵀ + N0 I) W_kᵀ under OMA and
// W (Σ_k E C_k Eᵀ + N0 I) Wᵀ under NOMA (eq: sample wgcmc oma).
func outputCov(m Map, rx *channel.Received, cs []*mat.SymDense) *mat.Dense {
	cy := func(k int, c *mat.SymDense) *mat.Dense {
		var t mat.Dense
		e := rx.Encoder(k)
		t.Product(e, c, e.T())
		return &t
	}
	out := mat.NewDense(rx.D, rx.D, nil)
	var tmp mat.Dense
	for s := range m.W {
		cov := mat.NewDense(rx.Mr, rx.Mr, nil)
		if rx.Access == channel.OMA {
			cov.Add(cov, cy(s, cs[s]))
		} else {
			for k, c := range cs {
				cov.Add(cov, cy(k, c))
			}
		}
		for i := range rx.Mr {
			cov.Set(i, i, cov.At(i, i)+rx.N0)
		}
		tmp.Product(m.W[s], cov, m.W[s].T())
		out.Add(out, &tmp)
	}
	return out
}

func relFrob(a, b mat.Matrix) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, 2) / mat.Norm(b, 2)
}

func transmit(t *testing.T, rng *rand.Rand, access channel.Access, cs []*mat.SymDense, s int, snr float64) *channel.Received {
	t.Helper()
	samples := make([]*mat.Dense, len(cs))
	for k, c := range cs {
		samples[k] = draw(rng, c, s)
	}
	cfg := channel.Config{Access: access, Fading: channel.Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: snr, Physical: true}
	rx, err := channel.Transmit(rng, cfg, samples)
	if err != nil {
		t.Fatal(err)
	}
	return rx
}

// The estimated covariances carry relative errors of order √(2/S); the
// output covariance inherits them through smooth maps, so its relative
// error is a small multiple of √(2/S). We check (a) the error falls by
// about √100 = 10 from S = 200 to 20000 (at least 4×) and (b) at
// S = 20000 it is below 5·√(2/S) ≈ 0.05.
func checkRecovers(t *testing.T, name string, errAt func(s int) float64) {
	t.Helper()
	small, large := errAt(200), errAt(20000)
	t.Logf("%s: relative error %.4f at S=200, %.4f at S=20000", name, small, large)
	if large > 5*math.Sqrt(2.0/20000) || large > small/4 {
		t.Fatalf("%s does not recover the global covariance: %.4f at S=200, %.4f at S=20000", name, small, large)
	}
}

func TestWGCMCOMARecoversGlobalCovariance(t *testing.T) {
	const d, k = 3, 4
	cs := make([]*mat.SymDense, k)
	for i := range cs {
		cs[i] = toeplitz(d, float64(i)/float64(k))
	}
	want := globalCov(cs)
	rng := rand.New(rand.NewPCG(7, 8))
	checkRecovers(t, "WGCMC-OMA", func(s int) float64 {
		rx := transmit(t, rng, channel.OMA, cs, s, 5)
		m, err := WGCMC(rx)
		if err != nil {
			t.Fatal(err)
		}
		return relFrob(outputCov(m, rx, cs), want)
	})
}

func TestWGCMCNOMARecoversHomogeneousGlobalCovariance(t *testing.T) {
	const d, k = 3, 4
	c0 := toeplitz(d, 0.5)
	cs := []*mat.SymDense{c0, c0, c0, c0}
	want := globalCov(cs)
	rng := rand.New(rand.NewPCG(9, 10))
	checkRecovers(t, "WGCMC-NOMA", func(s int) float64 {
		rx := transmit(t, rng, channel.NOMA, cs, s, 5)
		m, err := WGCMC(rx)
		if err != nil {
			t.Fatal(err)
		}
		return relFrob(outputCov(m, rx, cs), want)
	})
	_ = k
}

func TestGCMCAsymptoticCovariance(t *testing.T) {
	// GCMC treats ẑ_k = θ_k + E_k^†n_k as noiseless: its output covariance
	// tends to (Σ_k (C_k + N0/(l P_k) I)^{-1})^{-1}, not C.
	const d, k, s = 3, 4, 20000
	cs := make([]*mat.SymDense, k)
	for i := range cs {
		cs[i] = toeplitz(d, float64(i)/float64(k))
	}
	rng := rand.New(rand.NewPCG(11, 12))
	rx := transmit(t, rng, channel.OMA, cs, s, 0)
	m, err := GCMC(rx)
	if err != nil {
		t.Fatal(err)
	}
	noisy := make([]*mat.SymDense, k)
	for i, c := range cs {
		noisy[i] = shiftDiag(c, rx.N0/(float64(rx.L)*rx.Pk[i]))
	}
	want := globalCov(noisy)
	got := outputCov(m, rx, cs)
	// Same √(2/S) argument as checkRecovers.
	if e := relFrob(got, want); e > 5*math.Sqrt(2.0/s) {
		t.Fatalf("GCMC output covariance off its closed form by %.4f", e)
	}
	// And it is visibly not the global posterior at 0 dB.
	if e := relFrob(got, globalCov(cs)); e < 0.1 {
		t.Fatalf("GCMC unexpectedly close to C (%.4f) at 0 dB", e)
	}
}

func TestNoiselessIsScottCMC(t *testing.T) {
	const d, k, s = 3, 3, 20000
	cs := []*mat.SymDense{toeplitz(d, 0), toeplitz(d, 0.4), toeplitz(d, 0.8)}
	rng := rand.New(rand.NewPCG(13, 14))
	samples := make([]*mat.Dense, k)
	for i, c := range cs {
		samples[i] = draw(rng, c, s)
	}
	theta, err := Noiseless(samples)
	if err != nil {
		t.Fatal(err)
	}
	var got mat.SymDense
	got.SymOuterK(1/float64(s), theta.T())
	if e := relFrob(&got, globalCov(cs)); e > 5*math.Sqrt(2.0/s) {
		t.Fatalf("noiseless CMC covariance off by %.4f", e)
	}
}

func TestTooFewSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	cs := []*mat.SymDense{toeplitz(2, 0.1), toeplitz(2, 0.2)}
	rx := transmit(t, rng, channel.OMA, cs, 1, 5)
	for name, f := range map[string]func(*channel.Received) (Map, error){"gcmc": GCMC, "wgcmc": WGCMC} {
		if _, err := f(rx); err != ErrTooFewSamples {
			t.Errorf("%s with S=1: err %v, want ErrTooFewSamples", name, err)
		}
	}
}

// TestConstantWorker: a worker whose samples do not vary in a parameter
// is named in an error, not left out of the consensus without a word; the
// other workers alone still combine.
func TestConstantWorker(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	samples := make([]*mat.Dense, 3)
	for k := range samples {
		samples[k] = mat.NewDense(50, 2, nil)
		for i := range 50 {
			samples[k].Set(i, 0, rng.NormFloat64())
			samples[k].Set(i, 1, rng.NormFloat64()+float64(k))
		}
	}
	for i := range 50 {
		samples[1].Set(i, 1, 0.5) // worker 2, parameter 2: stuck
	}
	_, err := Noiseless(samples)
	var ce *ConstantError
	if !errors.As(err, &ce) || ce.Worker != 1 || ce.Param != 1 || ce.Value != 0.5 {
		t.Fatalf("worker 2 constant in parameter 2: err %v", err)
	}
	for _, w := range []string{"worker 2", "parameter 2 = 0.5"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q should name %q", err, w)
		}
	}
	if _, err := Noiseless([]*mat.Dense{samples[0], samples[2]}); err != nil {
		t.Errorf("workers 1 and 3: %v", err)
	}
}

// gaussianObjective is the WVCMC objective of three workers with Gaussian
// subposteriors (d = 3) on s signals over access, at its start map, with the
// generator that drew the signals.
func gaussianObjective(t *testing.T, access channel.Access, s int) (*Variational, Map, *model.Gaussian, *rand.Rand) {
	t.Helper()
	const d = 3
	cs := []*mat.SymDense{toeplitz(d, 0.1), toeplitz(d, 0.5), toeplitz(d, 0.8)}
	target, err := model.NewGaussian([]float64{0.2, -0.1, 0.3}, globalCov(cs))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(15, uint64(access)))
	rx := transmit(t, rng, access, cs, s, 3)
	v, err := NewVariational(rx, target)
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := InitialMap(rx)
	if err != nil {
		t.Fatal(err)
	}
	return v, m, target, rng
}

func TestWVCMCGradientMatchesFiniteDifferences(t *testing.T) {
	for _, access := range []channel.Access{channel.OMA, channel.NOMA} {
		v, m, _, rng := gaussianObjective(t, access, 40)
		// Move off the start point so every term is exercised.
		for _, w := range m.W {
			r, c := w.Dims()
			for i := range r {
				for j := range c {
					w.Set(i, j, w.At(i, j)*(1+0.3*rng.NormFloat64())+0.05*rng.NormFloat64())
				}
			}
		}
		grad := m.Clone()
		if err := v.Gradient(grad, m, nil); err != nil {
			t.Fatal(err)
		}
		num := flattenMap(fdGradient(t, v, m))
		ana := flattenMap(grad)
		for i := range ana {
			// Central differences with step h have error O(h²·f''') plus
			// rounding O(ε|f|/h) ≈ 1e-9 here; 1e-5 relative to the gradient
			// scale is far above both and far below any formula error.
			if math.Abs(ana[i]-num[i]) > 1e-5*(1+math.Abs(num[i])) {
				t.Fatalf("%v: gradient entry %d: analytic %g, finite difference %g", access, i, ana[i], num[i])
			}
		}
	}
}

func TestWVCMCDescends(t *testing.T) {
	const d = 3
	cs := []*mat.SymDense{toeplitz(d, 0.1), toeplitz(d, 0.5), toeplitz(d, 0.8)}
	target, _ := model.NewGaussian(nil, globalCov(cs))
	for _, access := range []channel.Access{channel.OMA, channel.NOMA} {
		rng := rand.New(rand.NewPCG(17, uint64(access)))
		rx := transmit(t, rng, access, cs, 200, 5)
		init, _, _ := InitialMap(rx)
		fit, err := WVCMC(context.Background(), rng, rx, target, init, Settings{Method: SGD{Step: 1e-3, Iters: 100}, Holdout: Off, Trace: true})
		if err != nil {
			t.Fatal(err)
		}
		obj := fit.Objective
		if len(obj) != 101 || !(obj[100] < obj[0]) {
			t.Fatalf("%v: objective %g → %g over %d values: no descent", access, obj[0], obj[len(obj)-1], len(obj))
		}
	}
}

func TestWVCMCGuardCatchesHugeStep(t *testing.T) {
	// η = 1e6 is many orders above any stable step: the guard must undo and
	// halve steps (reported in Shrinks) and end with a finite map, or fail
	// with ErrDiverged — never return NaN.
	const d = 2
	cs := []*mat.SymDense{toeplitz(d, 0.1), toeplitz(d, 0.5)}
	target, _ := model.NewGaussian(nil, globalCov(cs))
	rng := rand.New(rand.NewPCG(19, 20))
	rx := transmit(t, rng, channel.NOMA, cs, 50, 5)
	init, _, _ := InitialMap(rx)
	fit, err := WVCMC(context.Background(), rng, rx, target, init, Settings{Method: SGD{Step: 1e6, Iters: 20}, Holdout: Off})
	if err != nil {
		if !errors.Is(err, ErrDiverged) {
			t.Fatalf("error %v does not wrap ErrDiverged", err)
		}
		return
	}
	if fit.Shrinks == 0 {
		t.Fatal("a step of 1e6 passed the guard unshrunk")
	}
	if !allFiniteMap(fit.Map) || math.IsNaN(fit.Objective[len(fit.Objective)-1]) {
		t.Fatal("non-finite result")
	}
	t.Logf("%d shrinks, final step %g", fit.Shrinks, fit.FinalStep)
}

func TestLBFGSAndNewtonReachGaussianNOMAOptimum(t *testing.T) {
	// For a zero-mean Gaussian target N(0, C), NOMA with m_r = d, the
	// objective is ½ tr(C^{-1} W Σ̂ Wᵀ) − log|det W| + const (the entropy
	// weights K/(K+1) and 1/(K+1) add to one), Σ̂ = (1/S) Σ_s y_s y_sᵀ. Its
	// stationary point satisfies W Σ̂ Wᵀ = C exactly, whatever S ≥ d.
	const d = 3
	cs := []*mat.SymDense{toeplitz(d, 0.1), toeplitz(d, 0.5), toeplitz(d, 0.8)}
	c := globalCov(cs)
	target, _ := model.NewGaussian(nil, c)
	for _, tc := range []struct {
		s      Settings
		tol    float64
		method string
	}{
		// Plain L-BFGS, stopped by its stall test.
		{Settings{Holdout: Off}, 1e-6, NameLBFGS},
		// Whitened, stopped at ‖∇L̃‖ = 1e-6 of its start value: the
		// gradient is (C^{-1} W Σ̂ Wᵀ − I) W^{-ᵀ}, so W Σ̂ Wᵀ is off C by
		// about 1e-6 times the condition numbers of C and W.
		{Settings{Method: Newton{}.FirstOrder(), Holdout: Off}, 1e-5, NameLBFGS},
		// Newton, with the same stopping rule (the Converged preset).
		{Converged(0, 0), 1e-5, NameNewton},
	} {
		rng := rand.New(rand.NewPCG(23, 24))
		samples := make([]*mat.Dense, len(cs))
		for k, ck := range cs {
			samples[k] = draw(rng, ck, 30)
		}
		rx, err := channel.Transmit(rng, channel.Config{Access: channel.NOMA, Repetition: 1, Power: 7, SNRdB: 5}, samples)
		if err != nil {
			t.Fatal(err)
		}
		init, _, _ := InitialMap(rx)
		fit, err := WVCMC(context.Background(), rng, rx, target, init, tc.s)
		if err != nil {
			t.Fatal(err)
		}
		theta := fit.Map.Apply(rx)
		var m mat.SymDense
		m.SymOuterK(1/float64(rx.S), theta.T())
		e := relFrob(&m, c)
		t.Logf("%+v: %d iterations, %d gradient evaluations, %v, W Σ̂ Wᵀ off C by %.2g", tc.s.Method, fit.Iters, fit.Evaluations, fit.Status, e)
		if e > tc.tol {
			t.Fatalf("%+v: W Σ̂ Wᵀ differs from C by %g (status %v, %d iterations)", tc.s.Method, e, fit.Status, fit.Iters)
		}
		if fit.Shrinks != 0 || fit.Method.Name() != tc.method {
			t.Fatalf("fit %+v", fit)
		}
	}
}

func TestAdamDescendsOnMinibatches(t *testing.T) {
	// Adam with its default relative step, on a target with minibatches,
	// lowers the objective without any step tuning at two power scales
	// that differ by 1e4 (the map's scale follows 1/√P).
	const d = 2
	cs := []*mat.SymDense{toeplitz(d, 0.3), toeplitz(d, 0.6)}
	target := &sumTarget{prec: mustPinv(globalCov(cs)), n: 50}
	for _, p := range []float64{1e-2, 1e2} {
		rng := rand.New(rand.NewPCG(25, 26))
		samples := []*mat.Dense{draw(rng, cs[0], 200), draw(rng, cs[1], 200)}
		rx, err := channel.Transmit(rng, channel.Config{Access: channel.OMA, Repetition: 1, Power: p, SNRdB: 10}, samples)
		if err != nil {
			t.Fatal(err)
		}
		init, _, _ := InitialMap(rx)
		// Perturb the start so there is something to descend.
		for _, w := range init.W {
			w.Scale(1.5, w)
		}
		fit, err := WVCMC(context.Background(), rng, rx, target, init, Settings{Method: Adam{Iters: 300, BatchSize: 10}, Holdout: Off})
		if err != nil {
			t.Fatal(err)
		}
		o := fit.Objective
		if !(o[len(o)-1] < o[0]-0.1*math.Abs(o[0])) || fit.Shrinks != 0 {
			t.Fatalf("P = %g: objective %g → %g, %d shrinks", p, o[0], o[len(o)-1], fit.Shrinks)
		}
	}
}

// sumTarget is N(0, C) written as a sum of n equal data terms, so that
// minibatch gradients are exact rescalings: a minimal Minibatcher.
type sumTarget struct {
	prec *mat.SymDense
	n    int
}

func (s *sumTarget) Dim() int     { return s.prec.SymmetricDim() }
func (s *sumTarget) NumData() int { return s.n }
func (s *sumTarget) LogJoint(dst []float64, theta *mat.Dense) {
	var pt mat.Dense
	pt.Mul(theta, s.prec)
	for i := range dst {
		dst[i] = -0.5 * mat.Dot(pt.RowView(i), theta.RowView(i))
	}
}
func (s *sumTarget) GradLogJoint(grad, theta *mat.Dense) {
	grad.Mul(theta, s.prec)
	grad.Scale(-1, grad)
}
func (s *sumTarget) GradLogJointBatch(grad, theta *mat.Dense, batch []int) {
	s.GradLogJoint(grad, theta) // each of the n terms is 1/n of the whole
}

func TestInitialMapFallsBackWhenGCMCIsSingular(t *testing.T) {
	// S = 3 ≤ d = 4: the GCMC covariance estimates have rank 2, so the GCMC
	// map is singular and the entropy bound −∞; the start must fall back to
	// a full-rank map on which the objective is finite.
	const d = 4
	cs := []*mat.SymDense{toeplitz(d, 0.2), toeplitz(d, 0.6)}
	target, _ := model.NewGaussian(nil, globalCov(cs))
	rng := rand.New(rand.NewPCG(21, 22))
	rx := transmit(t, rng, channel.OMA, cs, 3, 5)
	m, fallback, err := InitialMap(rx)
	if err != nil || !fallback {
		t.Fatalf("fallback %v, err %v", fallback, err)
	}
	v, _ := NewVariational(rx, target)
	if _, err := v.Value(m); err != nil {
		t.Fatalf("objective at fallback start: %v", err)
	}
	// With S = 50 > d the GCMC start is used.
	rx = transmit(t, rng, channel.OMA, cs, 50, 5)
	if _, fallback, err := InitialMap(rx); err != nil || fallback {
		t.Fatalf("S = 50: fallback %v, err %v", fallback, err)
	}
}

func TestHoldoutStopsUnboundedOMAObjective(t *testing.T) {
	// OMA with S = 8 signals per worker and K·m_r = 3·4 = 12 stacked
	// receive dimensions: some directions of the stacked signal carry no
	// in-sample variance, and the entropy bound rewards growing W there,
	// so the in-sample objective is unbounded below. L-BFGS alone runs off;
	// with a held-out fraction it stops at a map whose exact output
	// covariance on fresh signals is far closer to C.
	const d = 2
	cs := []*mat.SymDense{toeplitz(d, 0.1), toeplitz(d, 0.5), toeplitz(d, 0.8)}
	c := globalCov(cs)
	target, _ := model.NewGaussian(nil, c)
	var plain, held float64
	for seed := uint64(0); seed < 5; seed++ {
		rng := rand.New(rand.NewPCG(27, seed))
		rx := transmit(t, rng, channel.OMA, cs, 10, 10)
		init, _, err := InitialMap(rx)
		if err != nil {
			t.Fatal(err)
		}
		a, err := WVCMC(context.Background(), rng, rx, target, init, Settings{Method: LBFGS{Iters: 300}, Holdout: Off})
		if err == nil {
			plain += relFrob(outputCov(a.Map, rx, cs), c)
		} else {
			plain += math.Inf(1) // running off is the failure under test
		}
		b, err := WVCMC(context.Background(), rng, rx, target, init, Settings{Method: LBFGS{Iters: 300}, Holdout: 0.2})
		if err != nil {
			t.Fatal(err)
		}
		if !allFiniteMap(b.Map) {
			t.Fatal("non-finite map")
		}
		held += relFrob(outputCov(b.Map, rx, cs), c)
	}
	t.Logf("mean fresh covariance error: plain L-BFGS %.3g, with holdout %.3g", plain/5, held/5)
	if !(held < plain/3) {
		t.Fatalf("holdout does not tame the unbounded objective: %.3g vs %.3g", held/5, plain/5)
	}
}

func TestWVCMCStopsWithinOneIterationOfCancel(t *testing.T) {
	// Observe cancels the context after iteration 3: every optimiser must
	// return ErrCancelled (and the context's cause) at that iteration, not
	// run on to its limit or return a map as if it had finished.
	const d = 3
	cs := []*mat.SymDense{toeplitz(d, 0.1), toeplitz(d, 0.5), toeplitz(d, 0.8)}
	target, _ := model.NewGaussian(nil, globalCov(cs))
	for _, method := range []Method{SGD{Step: 1e-3, Iters: 100}, Adam{Step: 1e-3, Iters: 100}, LBFGS{Iters: 100}, LBFGS{Iters: 100, Whiten: true}} {
		for _, holdout := range []float64{Off, 0.2} {
			rng := rand.New(rand.NewPCG(29, 30))
			rx := transmit(t, rng, channel.NOMA, cs, 200, 5)
			init, _, _ := InitialMap(rx)
			ctx, cancel := context.WithCancel(context.Background())
			last := 0
			s := Settings{Method: method, Holdout: holdout, Patience: 1000,
				Observe: func(iter, _ int, _ Map) {
					last = iter
					if iter == 3 {
						cancel()
					}
				}}
			fit, err := WVCMC(ctx, rng, rx, target, init, s)
			cancel()
			if !errors.Is(err, ErrCancelled) || !errors.Is(err, context.Canceled) || fit != nil {
				t.Fatalf("%+v holdout %g: got fit %v, error %v; want ErrCancelled wrapping context.Canceled", method, holdout, fit, err)
			}
			if last != 3 {
				t.Fatalf("%+v holdout %g: ran to iteration %d after the context was cancelled at 3", method, holdout, last)
			}
		}
	}
}

// TestProgressChangesNothing: Settings.Progress is called after every
// iteration with the iterations done, in order, and the method's
// IterationCap, and the run's map is bit for bit the one without it.
func TestProgressChangesNothing(t *testing.T) {
	const d = 3
	cs := []*mat.SymDense{toeplitz(d, 0.1), toeplitz(d, 0.5), toeplitz(d, 0.8)}
	target, _ := model.NewGaussian(nil, globalCov(cs))
	for _, method := range []Method{SGD{Step: 1e-3, Iters: 30, BatchSize: 50}, Adam{Step: 1e-3, Iters: 30, BatchSize: 50}, LBFGS{Iters: 40}, LBFGS{}, Newton{Iters: 20}} {
		for _, holdout := range []float64{Off, 0.2} {
			run := func(progress func(done, max int)) *Fit {
				rng := rand.New(rand.NewPCG(31, 32))
				rx := transmit(t, rng, channel.NOMA, cs, 200, 5)
				init, _, _ := InitialMap(rx)
				fit, err := WVCMC(context.Background(), rng, rx, target, init, Settings{Method: method, Holdout: holdout, Progress: progress})
				if err != nil {
					t.Fatalf("%+v holdout %g: %v", method, holdout, err)
				}
				return fit
			}
			s := Settings{Method: method, Holdout: holdout}
			var calls []int
			with := run(func(done, max int) {
				if max != s.IterationCap() {
					t.Errorf("%+v: progress max %d, IterationCap %d", method, max, s.IterationCap())
				}
				if done > max {
					t.Errorf("%+v: %d of %d iterations done", method, done, max)
				}
				calls = append(calls, done)
			})
			without := run(nil)
			if with.Iters == 0 || with.Iters != without.Iters || len(calls) != with.Iters {
				t.Errorf("%+v holdout %g: %d iterations with progress (%d calls), %d without", method, holdout, with.Iters, len(calls), without.Iters)
			}
			for i, done := range calls {
				if done != i+1 {
					t.Fatalf("%+v holdout %g: call %d reports %d iterations done", method, holdout, i+1, done)
				}
			}
			for k := range with.Map.W {
				if !mat.Equal(with.Map.W[k], without.Map.W[k]) {
					t.Errorf("%+v holdout %g: map %d differs with progress", method, holdout, k)
				}
			}
			if !slices.Equal(with.Map.Offset, without.Map.Offset) {
				t.Errorf("%+v holdout %g: offset differs with progress", method, holdout)
			}
		}
	}
}
