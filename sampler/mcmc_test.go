package sampler

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/wcmc-project/wcmc/model"
)

// counter is a kernel whose position counts its steps (and turns NaN at
// step nanAt, if positive).
type counter struct{ nanAt int }

type counterState struct{ pos []float64 }

func (s *counterState) Position() []float64 { return s.pos }

func (k counter) Step(_ *rand.Rand, s *counterState) Info {
	s.pos[0]++
	s.pos[1] = -s.pos[0]
	if int(s.pos[0]) == k.nanAt {
		s.pos[1] = math.NaN()
	}
	return Info{AcceptProb: 0.5, Accepted: int(s.pos[0])%2 == 0, StepSize: s.pos[0], IntegrationSteps: 3}
}

// TestRunBurnInAndThinning checks the driver's bookkeeping: burnin + thin·S
// steps, row i holding the position after step burnin + thin·(i+1), the
// hooks called once per step in order, and statistics over the steps after
// burn-in only; a second call continues the chain.
func TestRunBurnInAndThinning(t *testing.T) {
	for _, c := range []struct{ burnin, thin, s int }{{0, 1, 5}, {7, 1, 4}, {3, 4, 6}, {10, 0, 3}, {5, 3, 1}} {
		s := &counterState{pos: make([]float64, 2)}
		dst := mat.NewDense(c.s, 2, nil)
		var before, after []int
		sch := Schedule{BurnIn: c.burnin, Thin: c.thin,
			Before: func(t int) { before = append(before, t) },
			After:  func(t int, info Info) { after = append(after, t) },
			Infos:  make([]Info, c.s)}
		st, err := Run(nil, counter{}, s, sch, dst)
		if err != nil {
			t.Fatal(err)
		}
		thin := max(1, c.thin)
		total := c.burnin + thin*c.s
		if int(s.pos[0]) != total || len(before) != total || len(after) != total {
			t.Fatalf("%+v: %v steps, %d and %d hook calls, want %d", c, s.pos[0], len(before), len(after), total)
		}
		for i := range total {
			if before[i] != i || after[i] != i {
				t.Fatalf("%+v: hook call %d for steps %d and %d", c, i, before[i], after[i])
			}
		}
		for i := range c.s {
			if want := float64(c.burnin + thin*(i+1)); dst.At(i, 0) != want || dst.At(i, 1) != -want {
				t.Errorf("%+v: row %d holds step %v, want %v", c, i, dst.At(i, 0), want)
			}
			// The counter's step size is the step's number: row i's info is
			// that of the step that made it.
			if want := float64(c.burnin + thin*(i+1)); sch.Infos[i].StepSize != want {
				t.Errorf("%+v: info of row %d is step %v's, want %v's", c, i, sch.Infos[i].StepSize, want)
			}
		}
		steps := thin * c.s
		if st.Draws != c.s || st.Steps != steps {
			t.Errorf("%+v: stats count %d draws, %d steps; want %d, %d", c, st.Draws, st.Steps, c.s, steps)
		}
		if steps > 0 {
			// Steps burnin+1, …, total: accepted when even; step size = step.
			accepted := total/2 - c.burnin/2
			meanStep := float64(c.burnin+1+total) / 2
			if st.AcceptRate != float64(accepted)/float64(steps) || st.MeanAcceptProb != 0.5 ||
				st.StepSize != meanStep || st.MeanIntegrationSteps != 3 || st.Divergences != 0 {
				t.Errorf("%+v: stats %+v, want accept rate %d/%d, mean step size %v", c, st, accepted, steps, meanStep)
			}
		} else if !math.IsNaN(st.AcceptRate) {
			t.Errorf("%+v: accept rate %v over no steps, want NaN", c, st.AcceptRate)
		}
	}
	s := &counterState{pos: make([]float64, 2)}
	if _, err := Run(nil, counter{}, s, Schedule{BurnIn: 2}, mat.NewDense(3, 2, nil)); err != nil {
		t.Fatal(err)
	}
	dst := mat.NewDense(2, 2, nil)
	if _, err := Run(nil, counter{}, s, Schedule{Thin: 2}, dst); err != nil || dst.At(1, 0) != 9 {
		t.Errorf("second run: last row at step %v (%v), want 9", dst.At(1, 0), err)
	}
}

func TestRunErrors(t *testing.T) {
	s := &counterState{pos: make([]float64, 2)}
	_, err := Run(nil, counter{nanAt: 6}, s, Schedule{BurnIn: 2}, mat.NewDense(10, 2, nil))
	if !errors.Is(err, ErrDiverged) || !strings.Contains(err.Error(), "iteration 6") || !strings.Contains(err.Error(), "step size 6") {
		t.Errorf("NaN position: error %v", err)
	}
	for _, sch := range []Schedule{{BurnIn: -1}, {Thin: -2}} {
		if _, err := Run(nil, counter{}, s, sch, mat.NewDense(1, 2, nil)); err == nil {
			t.Errorf("%+v: no error", sch)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("wrong number of columns: no panic")
		}
	}()
	Run(nil, counter{}, s, Schedule{}, mat.NewDense(1, 3, nil))
}

// gaussKernel is an HMC kernel on N(μ, C) preconditioned by its exact
// precision, so that the whitened target is N(0, I).
func gaussKernel(t *testing.T) (*HMCKernel, *model.Gaussian) {
	cov := mat.NewSymDense(3, []float64{2, 0.6, 0.2, 0.6, 1, -0.3, 0.2, -0.3, 0.5})
	mu := []float64{1, -2, 0.5}
	g, err := model.NewGaussian(mu, cov)
	if err != nil {
		t.Fatal(err)
	}
	var ch mat.Cholesky
	ch.Factorize(cov)
	var prec mat.SymDense
	ch.InverseTo(&prec)
	k, err := NewHMCKernel(fusedGaussian{g}, mu, &prec)
	if err != nil {
		t.Fatal(err)
	}
	return k, g
}

// TestHMCKernelInfo checks HMC's per-step info: the acceptance probability
// is in [0, 1] and positive whenever the move is accepted; the step size is
// the nominal one jittered into [0.8ε, 1.2ε] with ⌈1.5/ε⌉ leapfrog steps;
// the log density is the target's at the new position; a rejected move
// leaves the position unchanged. At ε = 0.5 on the whitened N(0, I) almost
// every move is accepted and none diverges; at ε = 50 the one leapfrog step
// overshoots by ~ε² and every move is divergent and rejected.
func TestHMCKernelInfo(t *testing.T) {
	k, g := gaussKernel(t)
	rng := rand.New(rand.NewPCG(3, 4))
	s, err := k.Init(nil)
	if err != nil {
		t.Fatal(err)
	}
	lp := make([]float64, 1)
	for _, eps := range []float64{0.5, 50} {
		k.StepSize = eps
		var sumA float64
		var div int
		const n = 400
		for range n {
			prev := append([]float64(nil), s.Position()...)
			info := k.Step(rng, s)
			switch {
			case !(info.AcceptProb >= 0 && info.AcceptProb <= 1):
				t.Fatalf("ε = %v: acceptance probability %v", eps, info.AcceptProb)
			case info.Accepted && info.AcceptProb == 0:
				t.Fatalf("ε = %v: accepted with probability 0", eps)
			case info.StepSize < 0.8*eps || info.StepSize > 1.2*eps:
				t.Fatalf("ε = %v: step size %v outside the jitter range", eps, info.StepSize)
			case info.IntegrationSteps != max(1, min(100, int(math.Ceil(1.5/info.StepSize)))):
				t.Fatalf("ε = %v: %d leapfrog steps for step %v", eps, info.IntegrationSteps, info.StepSize)
			}
			g.LogJoint(lp, mat.NewDense(1, 3, s.Position()))
			if math.Abs(lp[0]-info.LogDensity) > 1e-9*(1+math.Abs(lp[0])) {
				t.Fatalf("ε = %v: info log density %v, target's %v", eps, info.LogDensity, lp[0])
			}
			if !info.Accepted && !floatsEqual(prev, s.Position()) {
				t.Fatalf("ε = %v: a rejected move changed θ", eps)
			}
			sumA += info.AcceptProb
			if info.Divergent {
				div++
			}
		}
		switch eps {
		case 0.5:
			if sumA/n < 0.8 || div != 0 {
				t.Errorf("ε = 0.5: mean acceptance %v, %d divergent", sumA/n, div)
			}
		case 50:
			if sumA/n > 1e-6 || div != n {
				t.Errorf("ε = 50: mean acceptance %v, %d of %d divergent", sumA/n, div, n)
			}
		}
	}
}

func floatsEqual(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// TestHMCDivergencesCounted checks that Run's statistics count the
// divergences of a pathological step size (no adaptation: HMCKernel alone).
func TestHMCDivergencesCounted(t *testing.T) {
	k, _ := gaussKernel(t)
	k.StepSize = 40
	s, err := k.Init(nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Run(rand.New(rand.NewPCG(5, 5)), k, s, Schedule{BurnIn: 10}, mat.NewDense(100, 3, nil))
	if err != nil {
		t.Fatal(err)
	}
	if st.Divergences != 100 || st.AcceptRate != 0 {
		t.Errorf("ε = 40: %d of 100 divergent, acceptance rate %v", st.Divergences, st.AcceptRate)
	}
}

// TestGibbsKernelInfo: a Gibbs step always moves, with no log density or
// step size to report.
func TestGibbsKernelInfo(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 0))
	u, v := goldenProbit(rng, 200, 3)
	g, err := NewGibbs(u, v, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := g.Kernel().Init(g.MAP())
	info := g.Kernel().Step(rng, s)
	if info.AcceptProb != 1 || !info.Accepted || !math.IsNaN(info.LogDensity) || info.StepSize != 0 || info.Divergent {
		t.Errorf("Gibbs info %+v", info)
	}
	dst := mat.NewDense(20, 3, nil)
	st, err := g.Run(context.Background(), rng, dst, nil, 5, 2, nil)
	if err != nil || st.Steps != 40 || st.AcceptRate != 1 || st.Divergences != 0 {
		t.Errorf("Gibbs stats %+v, %v", st, err)
	}
	infos := make([]Info, 20)
	if a := testing.AllocsPerRun(5, func() { g.Run(context.Background(), rng, dst, infos, 1, 1, nil) }); a != 0 {
		t.Errorf("the driver allocates %v times per run", a)
	}
}

// probitChains runs NewProbitChains with C chains on generators derived
// from seed and returns the draws, the statistics and the starting points.
func probitChains(t *testing.T, method string, u *mat.Dense, v []float64, c, burnin, s int, seed uint64) ([]*mat.Dense, []Stats, [][]float64) {
	rngs := make([]*rand.Rand, c)
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(seed, uint64(i)))
	}
	chains, err := NewProbitChains(method, rngs, u, v, 2)
	if err != nil {
		t.Fatal(err)
	}
	starts := make([][]float64, c)
	dst := make([]*mat.Dense, c)
	_, d := u.Dims()
	for i := range chains {
		starts[i] = append([]float64(nil), chains[i].Position()...)
		dst[i] = mat.NewDense(s, d, nil)
	}
	st, err := RunChains(context.Background(), rngs, chains, dst, nil, burnin, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	return dst, st, starts
}

// TestProbitChainsDeterministic checks, for both samplers, that C chains
// run in parallel give the same bits on 1 and on 4 cores, that chain 1
// equals the single chain of NewGibbs / NewProbitHMC on the same generator
// (so adding chains never changes it), and that the chains differ.
func TestProbitChainsDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 0))
	u, v := goldenProbit(rng, 300, 4)
	for _, method := range Methods {
		t.Run(method, func(t *testing.T) {
			prev := runtime.GOMAXPROCS(1)
			one, st1, _ := probitChains(t, method, u, v, 4, 50, 100, 9)
			runtime.GOMAXPROCS(4)
			four, st4, _ := probitChains(t, method, u, v, 4, 50, 100, 9)
			runtime.GOMAXPROCS(prev)
			for c := range one {
				if !mat.Equal(one[c], four[c]) || st1[c] != st4[c] {
					t.Errorf("chain %d differs between GOMAXPROCS 1 and 4", c+1)
				}
			}
			if mat.Equal(one[0], one[1]) {
				t.Error("chains 1 and 2 are identical")
			}
			var single Runner
			var err error
			if method == MethodGibbs {
				single, err = NewGibbs(u, v, 2)
			} else {
				single, err = NewProbitHMC(u, v, 2)
			}
			if err != nil {
				t.Fatal(err)
			}
			alone := mat.NewDense(100, 4, nil)
			if _, err := single.Run(context.Background(), rand.New(rand.NewPCG(9, 0)), alone, nil, 50, 1, nil); err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(alone, one[0]) {
				t.Error("chain 1 of 4 differs from the single chain on the same generator")
			}
		})
	}
	if _, err := NewProbitChains("nuts", []*rand.Rand{rng}, u, v, 1); err == nil || !strings.Contains(err.Error(), `"nuts"`) {
		t.Errorf("unknown method: error %v", err)
	}
}

// TestProbitChainsDispersedStarts checks the law of the starts of chains
// 2, …, C: θ₀ ~ N(θ̂, 4H⁻¹), so q = (θ₀ − θ̂)ᵀH(θ₀ − θ̂)/4 ~ χ²_d. Over 199
// starts the mean of q is within 4 standard errors (√(2d/199)) of d, and
// chain 1 starts at the mode.
func TestProbitChainsDispersedStarts(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 0))
	const d, c = 3, 200
	u, v := goldenProbit(rng, 150, d)
	rngs := make([]*rand.Rand, c)
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(10, uint64(i)))
	}
	chains, err := NewProbitChains(MethodGibbs, rngs, u, v, 2)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := model.NewProbit(u, v, 2)
	mode, _ := p.MAP(nil)
	h := p.NegHessian(mode)
	if !floatsEqual(chains[0].Position(), mode) {
		t.Errorf("chain 1 starts at %v, want the mode %v", chains[0].Position(), mode)
	}
	q := make([]float64, c-1)
	for i := 1; i < c; i++ {
		dev := mat.NewVecDense(d, nil)
		dev.SubVec(mat.NewVecDense(d, append([]float64(nil), chains[i].Position()...)), mat.NewVecDense(d, mode))
		q[i-1] = mat.Inner(dev, h, dev) / 4
	}
	mean := stat.Mean(q, nil)
	if se := math.Sqrt(2 * d / float64(c-1)); math.Abs(mean-d) > 4*se {
		t.Errorf("mean of (θ₀−θ̂)ᵀH(θ₀−θ̂)/4 = %.3f, want χ²_%d mean %d ± %.3f", mean, d, d, 4*se)
	}
	// And the tail: P(q > χ²_d 0.9-quantile) ≈ 0.1.
	q90 := distuv.ChiSquared{K: d}.Quantile(0.9)
	var above float64
	for _, x := range q {
		if x > q90 {
			above++
		}
	}
	if frac, se := above/float64(c-1), math.Sqrt(0.09/float64(c-1)); math.Abs(frac-0.1) > 4*se {
		t.Errorf("fraction above the χ² 90%% quantile %.3f, want 0.1 ± %.3f", frac, 4*se)
	}
}

// TestRunChainsErrors: RunChains refuses shared generators and repeated
// chains, and names the chain that fails.
func TestRunChainsErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 0))
	u, v := goldenProbit(rng, 100, 2)
	g, err := NewGibbs(u, v, 1)
	if err != nil {
		t.Fatal(err)
	}
	dst := []*mat.Dense{mat.NewDense(2, 2, nil), mat.NewDense(2, 2, nil)}
	if _, err := RunChains(context.Background(), []*rand.Rand{rng, rng}, []Runner{g, g}, dst, nil, 0, 1, nil); err == nil || !strings.Contains(err.Error(), "share a generator") {
		t.Errorf("shared generator: error %v", err)
	}
	r2 := rand.New(rand.NewPCG(9, 1))
	if _, err := RunChains(context.Background(), []*rand.Rand{rng, r2}, []Runner{g, g}, dst, nil, 0, 1, nil); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("repeated chain: error %v", err)
	}
	if _, err := RunChains(context.Background(), []*rand.Rand{rng}, []Runner{g}, dst[:1], nil, -1, 1, nil); err == nil || !strings.Contains(err.Error(), "chain 1: gibbs: negative burn-in") {
		t.Errorf("negative burn-in: error %v", err)
	}
}

// TestNameChains: the chains of one posterior name themselves in their
// errors, "name, chain c" when there are several, and a named chain draws
// what the chain itself draws.
func TestNameChains(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 0))
	u, v := goldenProbit(rng, 100, 2)
	for _, c := range []struct {
		name   string
		chains int
		want   string
	}{
		{"worker 3", 1, "worker 3: gibbs: negative burn-in -1"},
		{"worker 3", 2, "worker 3, chain 2: gibbs: negative burn-in -1"},
		{"", 2, "chain 2: gibbs: negative burn-in -1"},
		{"", 1, "gibbs: negative burn-in -1"},
	} {
		rngs := make([]*rand.Rand, c.chains)
		for i := range rngs {
			rngs[i] = rand.New(rand.NewPCG(10, uint64(i)))
		}
		chains, err := NewProbitChains(MethodGibbs, rngs, u, v, 1)
		if err != nil {
			t.Fatal(err)
		}
		NameChains(c.name, chains)
		last := chains[c.chains-1]
		if _, err := last.Run(context.Background(), rngs[c.chains-1], mat.NewDense(2, 2, nil), nil, -1, 1, nil); err == nil || err.Error() != c.want {
			t.Errorf("%q with %d chains: error %v, want %q", c.name, c.chains, err, c.want)
		}
	}
	plain, _ := NewGibbs(u, v, 1)
	other, _ := NewGibbs(u, v, 1)
	a, b := mat.NewDense(20, 2, nil), mat.NewDense(20, 2, nil)
	if _, err := plain.Run(context.Background(), rand.New(rand.NewPCG(3, 4)), a, nil, 5, 2, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Named(other, "x").Run(context.Background(), rand.New(rand.NewPCG(3, 4)), b, nil, 5, 2, nil); err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(a, b) {
		t.Error("the named chain draws differently from the chain")
	}
}
