// Package bench measures wcmc's hot kernels — the Albert–Chib Gibbs sweep,
// the truncated-normal latent draws, the batched probit gradient, SGLD and
// WVCMC iterations, parallel workers — each next to the hardware bound
// that limits it, measured in the same run and interleaved with it (a
// plain read of the design matrix, plain normal draws, a plain BLAS
// matrix product of the same shapes), so that the ratio stays meaningful
// on a busy machine. It also times the kernels over a range of sizes (N,
// d, K and S) for a log-log scaling plot.
//
// Run runs the fixed set and returns a Report; Report.Markdown writes the
// table and Report.Chart the scaling plot (see cmd/wcmc `wcmc bench` and
// docs/PERFORMANCE.md). The package's go test benchmarks time the bounds
// on their own; the kernels' own benchmarks live in model and sampler.
package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"wcmc/channel"
	"wcmc/consensus"
	"wcmc/dataset"
	"wcmc/model"
	"wcmc/sampler"
)

// Config sets the size of a run. The zero value is the full set (about two
// minutes on two cores).
type Config struct {
	// Quick uses smaller problems and fewer repetitions (about 20 s);
	// the Gibbs sizes of the issue are kept.
	Quick bool
	// Reps is the number of interleaved rounds per measurement (0: 7, or
	// 3 when Quick); each result is the best round.
	Reps int
	// MinSample is the minimum duration of one timed sample (0: 100 ms,
	// or 30 ms when Quick).
	MinSample time.Duration
	// Progress, if not nil, receives one line per measurement.
	Progress io.Writer

	sizes *sizes // problem sizes; nil: by Quick (tests use tiny ones)
}

// Kernel is one measured kernel and the bound it is compared with.
type Kernel struct {
	Name string // what is timed, e.g. "Gibbs sweep"
	Size string // the problem, e.g. "N=15000 d=300"
	// Time is the best time of one operation (one sweep, one draw, one
	// gradient over S samples, …) and Rate the corresponding rate in Unit
	// (samples/s, draws/s, GFLOP/s, …).
	Time time.Duration
	Rate float64
	Unit string
	// Bound names the reference measured alongside (empty if none),
	// BoundTime its time for the same work, BoundRate its rate in Unit.
	Bound     string
	BoundTime time.Duration
	BoundRate float64
	// Ratio is Time/BoundTime (≥ 1 means slower than the bound); 0 when
	// there is no bound.
	Ratio float64
	// Target states the goal of the issue, if any, and Met whether it is
	// met.
	Target string
	Met    bool
	// Allocs is the number of heap allocations per operation (−1: not
	// measured).
	Allocs float64
	Note   string
}

// Series is one scaling curve: time per operation against a size.
type Series struct {
	Name    string    // e.g. "Gibbs sweep vs N (d = 30)"
	Short   string    // legend label, e.g. "sweep vs N (d=30)"
	Param   string    // the size varied: N, d, K or S
	X       []float64 // sizes
	Seconds []float64 // best time per operation at each size
	Slope   float64   // least-squares slope of log time on log size
}

// Report is the outcome of Run.
type Report struct {
	Start      time.Time
	Duration   time.Duration
	Quick      bool
	CPU        string
	NumCPU     int
	GOMAXPROCS int
	GoVersion  string
	GOARCH     string
	BLAS       string // the gonum BLAS implementation in use
	RowKernels string // sampler.RowKernels()
	Kernels    []Kernel
	Scaling    []Series
}

// sizes are the problem sizes of a run.
type sizes struct {
	gibbs               []gibbsCase
	gradN, gradD, gradS int
	latentN             int // (N, d = 5) chain whose margins feed the latent draws
	scaleN              []int
	scaleND             int
	scaleD              []int
	scaleDN             int
	scaleS              []int
	scaleSN, scaleSD    int
	scaleK              []int
	scaleKShard         int
	scaleKSamples       int
	sgldN, sgldBatch    int
	wvcmcN, wvcmcS, wvK int
	parN, parK, parS    int
	truncA              []float64
	normalDraws         int
	burnin              int
}

type gibbsCase struct {
	n, d   int
	target string
	ok     func(k Kernel) bool
}

func fullSizes(quick bool) *sizes {
	s := &sizes{
		gibbs: []gibbsCase{
			{8500, 5, "≥ 10,000 samples/s", func(k Kernel) bool { return k.Rate >= 10000 }},
			{12665, 30, "", nil},
			{15000, 300, "≤ 1.5× the read of U", func(k Kernel) bool { return k.Ratio <= 1.5 }},
		},
		gradN: 15000, gradD: 300, gradS: 1000,
		latentN: 8500,
		scaleN:  []int{1000, 2000, 4000, 8000, 16000, 32000, 64000}, scaleND: 30,
		scaleD: []int{5, 10, 20, 40, 80, 160, 320}, scaleDN: 4000,
		scaleS: []int{10, 30, 100, 300, 1000, 3000}, scaleSN: 4000, scaleSD: 50,
		scaleK: []int{1, 2, 4, 8, 16, 32}, scaleKShard: 425, scaleKSamples: 200,
		sgldN: 8500, sgldBatch: 85,
		wvcmcN: 8500, wvcmcS: 1000, wvK: 20,
		parN: 8500, parK: 20, parS: 500,
		truncA:      []float64{-1, -0.25, 0, 0.1, 1, 40},
		normalDraws: 8500,
		burnin:      20,
	}
	if quick {
		s.gradS = 200
		s.scaleN = []int{1000, 4000, 16000, 64000}
		s.scaleD = []int{5, 20, 80, 320}
		s.scaleS = []int{10, 100, 1000}
		s.scaleK = []int{1, 2, 8, 32}
		s.scaleKSamples = 50
		s.wvcmcN, s.wvcmcS = 2000, 200
		s.parS = 100
	}
	return s
}

// tinySizes are for tests of the code paths: everything small.
func tinySizes() *sizes {
	return &sizes{
		gibbs: []gibbsCase{
			{300, 5, "≥ 10,000 samples/s", func(k Kernel) bool { return k.Rate >= 10000 }},
			{200, 20, "≤ 1.5× the read of U", func(k Kernel) bool { return k.Ratio <= 1.5 }},
		},
		gradN: 200, gradD: 10, gradS: 20,
		latentN: 300,
		scaleN:  []int{100, 200}, scaleND: 5,
		scaleD: []int{3, 12}, scaleDN: 100,
		scaleS: []int{2, 8}, scaleSN: 100, scaleSD: 4,
		scaleK: []int{1, 3}, scaleKShard: 50, scaleKSamples: 5,
		sgldN: 300, sgldBatch: 10,
		wvcmcN: 300, wvcmcS: 30, wvK: 3,
		parN: 300, parK: 3, parS: 5,
		truncA:      []float64{-1, 0, 2},
		normalDraws: 300,
		burnin:      2,
	}
}

// Run measures the fixed set of kernels and the scaling series. It
// returns early with ctx's error if ctx is cancelled between measurements.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	s := cfg.sizes
	if s == nil {
		s = fullSizes(cfg.Quick)
	}
	if cfg.Reps <= 0 {
		cfg.Reps = 7
		if cfg.Quick {
			cfg.Reps = 3
		}
	}
	if cfg.MinSample <= 0 {
		cfg.MinSample = 100 * time.Millisecond
		if cfg.Quick {
			cfg.MinSample = 30 * time.Millisecond
		}
	}
	r := &Report{
		Start:      time.Now(),
		Quick:      cfg.Quick,
		CPU:        cpuName(),
		NumCPU:     runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		GoVersion:  runtime.Version(),
		GOARCH:     runtime.GOARCH,
		BLAS:       fmt.Sprintf("%T", blas64.Implementation()),
		RowKernels: sampler.RowKernels(),
	}
	b := &suite{cfg: cfg, s: s, r: r, ctx: ctx}
	steps := []func() error{
		b.gibbs, b.latent, b.truncated, b.gradient, b.sgld, b.wvcmc, b.parallel,
		b.scaleN, b.scaleD, b.scaleS, b.scaleK,
	}
	for _, step := range steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := step(); err != nil {
			return nil, err
		}
	}
	r.Duration = time.Since(r.Start)
	return r, nil
}

type suite struct {
	cfg Config
	s   *sizes
	r   *Report
	ctx context.Context
}

func (b *suite) best(fs ...func()) []time.Duration {
	return bestOf(b.cfg.Reps, b.cfg.MinSample, fs...)
}

func (b *suite) add(k Kernel) {
	if k.BoundTime > 0 {
		k.Ratio = float64(k.Time) / float64(k.BoundTime)
	}
	b.r.Kernels = append(b.r.Kernels, k)
	if w := b.cfg.Progress; w != nil {
		fmt.Fprintf(w, "%-34s %-22s %12s %s", k.Name, k.Size, fmtRate(k.Rate), k.Unit)
		if k.Ratio > 0 {
			fmt.Fprintf(w, "  %.2f× %s", k.Ratio, k.Bound)
		}
		fmt.Fprintln(w)
	}
}

func (b *suite) addSeries(sr Series) {
	sr.Slope = logLogSlope(sr.X, sr.Seconds)
	b.r.Scaling = append(b.r.Scaling, sr)
	if w := b.cfg.Progress; w != nil {
		fmt.Fprintf(w, "scaling: %-40s slope %.2f\n", sr.Name, sr.Slope)
	}
}

// probitData draws the synthetic probit data of Sec. VI-B with the
// experiments' θ* (dataset.ThetaStar: ‖θ*‖ ≈ 2.09 for every d).
func probitData(seed uint64, n, d int) dataset.Set {
	rng := rand.New(rand.NewPCG(seed, uint64(n*1000+d)))
	return dataset.Synthetic(rng, dataset.ThetaStar(d), n)
}

// newChain returns a Gibbs sampler on (n, d) data, run for the burn-in so
// that its margins are those of a chain in equilibrium, and its generator.
func (b *suite) newChain(n, d int) (*sampler.Gibbs, *rand.Rand, dataset.Set, error) {
	set := probitData(1, n, d)
	g, err := sampler.NewGibbs(set.U, set.V, 1)
	if err != nil {
		return nil, nil, set, fmt.Errorf("gibbs (N=%d, d=%d): %w", n, d, err)
	}
	rng := rand.New(rand.NewPCG(2, 3))
	for range b.s.burnin {
		g.Sweep(rng)
	}
	return g, rng, set, nil
}

// gibbs times one sweep at each size against one plain read of U (floats.Sum
// over its entries: the memory traffic a fused sweep cannot avoid) and
// against N plain normal draws (rng.NormFloat64: the randomness it cannot
// avoid).
func (b *suite) gibbs() error {
	for _, c := range b.s.gibbs {
		g, rng, set, err := b.newChain(c.n, c.d)
		if err != nil {
			return err
		}
		raw := set.U.RawMatrix().Data
		var sink float64
		norm := make([]float64, c.n)
		nrng := rand.New(rand.NewPCG(4, 5))
		t := b.best(
			func() { g.Sweep(rng) },
			func() { sink += floats.Sum(raw) },
			func() {
				for i := range norm {
					norm[i] = nrng.NormFloat64()
				}
			},
		)
		_ = sink
		allocs := allocsPerCall(5, func() { g.Sweep(rng) })
		size := fmt.Sprintf("N=%d d=%d", c.n, c.d)
		mb := float64(8*len(raw)) / 1e6
		read := fmt.Sprintf("one read of U (%.3g MB)", mb)
		draws := fmt.Sprintf("%d normal draws (rng.NormFloat64)", c.n)
		// The binding bound is the larger: memory for large d, randomness
		// for small d.
		k := Kernel{
			Name: "Gibbs sweep", Size: size, Time: t[0], Rate: 1 / t[0].Seconds(), Unit: "samples/s",
			Bound: read, BoundTime: t[1], Allocs: allocs,
			Note: fmt.Sprintf("U read at %.1f GB/s; %s: %s", mb/1e3/t[1].Seconds(), draws, fmtDur(t[2])),
		}
		if t[2] > t[1] {
			k.Bound, k.BoundTime = draws, t[2]
			k.Note = fmt.Sprintf("%s: %s (%.1f GB/s)", read, fmtDur(t[1]), mb/1e3/t[1].Seconds())
		}
		k.BoundRate = 1 / k.BoundTime.Seconds()
		if c.target != "" {
			k.Ratio = float64(k.Time) / float64(k.BoundTime)
			k.Target, k.Met = c.target, c.ok(k)
		}
		b.add(k)
	}
	return nil
}

// latent times sampler.DrawLatent on the margins of the (8500, 5) chain —
// the truncated-normal draws of a sweep, with their real mix of bounds —
// against as many plain normal draws.
func (b *suite) latent() error {
	n := b.s.latentN
	g, rng, set, err := b.newChain(n, 5)
	if err != nil {
		return err
	}
	th := mat.NewVecDense(5, append([]float64(nil), g.Theta()...))
	var m mat.VecDense
	m.MulVec(set.U, th)
	margins := m.RawVector().Data
	sign := make([]float64, n)
	above := 0
	for i, v := range set.V {
		sign[i] = 2*v - 1
		if -sign[i]*margins[i] > 0 {
			above++
		}
	}
	kap := make([]float64, n)
	norm := make([]float64, n)
	nrng := rand.New(rand.NewPCG(4, 5))
	t := b.best(
		func() {
			copy(kap, margins)
			sampler.DrawLatent(rng, kap, sign)
		},
		func() {
			for i := range norm {
				norm[i] = nrng.NormFloat64()
			}
		},
	)
	per := func(d time.Duration) time.Duration { return d / time.Duration(n) }
	k := Kernel{
		Name: "truncated-normal latent draws", Size: fmt.Sprintf("margins of the N=%d d=5 chain", n),
		Time: per(t[0]), Rate: float64(n) / t[0].Seconds(), Unit: "draws/s",
		Bound: "plain normal draws (rng.NormFloat64)", BoundTime: per(t[1]), BoundRate: float64(n) / t[1].Seconds(),
		Target: "≤ 2× plain normal draws",
		Allocs: allocsPerCall(5, func() { sampler.DrawLatent(rng, kap, sign) }) / float64(n),
		Note:   fmt.Sprintf("%.1f%% of the bounds a = −s·m are > 0 (points on the wrong side)", 100*float64(above)/float64(n)),
	}
	k.Met = float64(k.Time) <= 2*float64(k.BoundTime)
	b.add(k)
	return nil
}

// truncated times single StdNormalAbove calls at fixed bounds against
// rng.NormFloat64.
func (b *suite) truncated() error {
	const n = 1024
	rng := rand.New(rand.NewPCG(6, 7))
	var sink float64
	fs := []func(){func() {
		for range n {
			sink += rng.NormFloat64()
		}
	}}
	for _, a := range b.s.truncA {
		fs = append(fs, func() {
			for range n {
				sink += sampler.StdNormalAbove(rng, a)
			}
		})
	}
	t := b.best(fs...)
	_ = sink
	for i, a := range b.s.truncA {
		b.add(Kernel{
			Name: "StdNormalAbove (one call)", Size: fmt.Sprintf("a = %g", a),
			Time: t[i+1] / n, Rate: n / t[i+1].Seconds(), Unit: "draws/s",
			Bound: "rng.NormFloat64", BoundTime: t[0] / n, BoundRate: n / t[0].Seconds(),
			Allocs: -1,
		})
	}
	return nil
}

// gradient times the batched probit gradient (model.Probit.GradLogJoint)
// and the fused log-joint and gradient on S samples near θ*, in GFLOP/s
// counting the two products M = Θ Uᵀ and W U (4·S·N·d flops), against
// blas64.Gemm computing the same two products in single calls, both on
// one core (the gradient's products are serial by design: wcmc
// parallelises over tasks); the all-core Gemm rate is given for
// reference.
func (b *suite) gradient() error {
	n, d, s := b.s.gradN, b.s.gradD, b.s.gradS
	set := probitData(8, n, d)
	p, err := model.NewProbit(set.U, set.V, 1)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(9, 10))
	ts := dataset.ThetaStar(d)
	theta := mat.NewDense(s, d, nil)
	for i := range s {
		row := theta.RawRowView(i)
		for j := range row {
			row[j] = ts[j] + 0.05*rng.NormFloat64()
		}
	}
	grad := mat.NewDense(s, d, nil)
	logp := make([]float64, s)
	mbuf := make([]float64, s*n)
	th, u := theta.RawMatrix(), set.U.RawMatrix()
	g := grad.RawMatrix()
	mm := blas64.General{Rows: s, Cols: n, Stride: n, Data: mbuf}
	gemms := func() {
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, th, u, 0, mm)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, mm, u, 0, g)
	}
	var t []time.Duration
	withProcs(1, func() {
		t = bestOf(max(2, b.cfg.Reps/2), b.cfg.MinSample,
			func() { p.GradLogJoint(grad, theta) },
			func() { p.LogJointGrad(logp, grad, theta) },
			gemms,
		)
	})
	tAll := bestOf(max(2, b.cfg.Reps/2), b.cfg.MinSample, gemms)[0]
	flops := 4 * float64(s) * float64(n) * float64(d)
	gf := func(d time.Duration) float64 { return flops / d.Seconds() / 1e9 }
	size := fmt.Sprintf("N=%d d=%d S=%d", n, d, s)
	bound, tb := fmt.Sprintf("%s Dgemm, same products, 1 core", blasName()), t[2]
	perMargin := func(d time.Duration) string {
		ns := float64(d-tb) / float64(s*n)
		if ns < 0 {
			return fmt.Sprintf("time beyond the products: %.3g ns per margin (Probit's cache-blocked products beat one Dgemm call)", ns)
		}
		return fmt.Sprintf("time beyond the products: %.3g ns per margin (the special functions)", ns)
	}
	k := Kernel{
		Name: "probit gradient (batched)", Size: size, Time: t[0], Rate: gf(t[0]), Unit: "GFLOP/s",
		Bound: bound, BoundTime: tb, BoundRate: gf(tb),
		Target: "≤ 1.3× the matrix products",
		Allocs: allocsPerCall(1, func() { p.GradLogJoint(grad, theta) }),
		Note:   perMargin(t[0]),
	}
	k.Met = float64(k.Time) <= 1.3*float64(k.BoundTime)
	b.add(k)
	b.add(Kernel{
		Name: "probit log-joint + gradient (fused)", Size: size, Time: t[1], Rate: gf(t[1]), Unit: "GFLOP/s",
		Bound: bound, BoundTime: tb, BoundRate: gf(tb),
		Allocs: allocsPerCall(1, func() { p.LogJointGrad(logp, grad, theta) }),
		Note:   perMargin(t[1]),
	})
	b.add(Kernel{
		Name: "Dgemm (all cores)", Size: size, Time: tAll, Rate: gf(tAll), Unit: "GFLOP/s",
		Allocs: -1, Note: fmt.Sprintf("GOMAXPROCS=%d, for reference", runtime.GOMAXPROCS(0)),
	})
	return nil
}

// sgld times SGLD iterations (eq: update SGLD) on the probit target with
// minibatches and counts the allocations per iteration as the difference
// between runs of 2T and T iterations (set-up cancels).
func (b *suite) sgld() error {
	set := probitData(11, b.s.sgldN, 5)
	p, err := model.NewProbit(set.U, set.V, 1)
	if err != nil {
		return err
	}
	const iters = 1000
	cfg := sampler.SGLDConfig{Alpha: 1e-4, Beta: 1, Gamma: 0.55, BatchSize: b.s.sgldBatch}
	rng := rand.New(rand.NewPCG(12, 13))
	theta0 := dataset.ThetaStar(5)
	dst := mat.NewDense(iters, 5, nil)
	dst2 := mat.NewDense(2*iters, 5, nil)
	run := func(m *mat.Dense) {
		if e := sampler.RunSGLD(rng, p, cfg, theta0, m); e != nil {
			err = e
		}
	}
	t := b.best(func() { run(dst) })
	if err != nil {
		return fmt.Errorf("sgld: %w", err)
	}
	a1 := allocsPerCall(3, func() { run(dst) })
	a2 := allocsPerCall(3, func() { run(dst2) })
	b.add(Kernel{
		Name: "SGLD iteration", Size: fmt.Sprintf("N=%d d=5 N_b=%d", b.s.sgldN, b.s.sgldBatch),
		Time: t[0] / iters, Rate: iters / t[0].Seconds(), Unit: "iterations/s",
		Target: "0 allocations per iteration", Allocs: (a2 - a1) / iters, Met: a2 == a1,
	})
	return nil
}

// wvcmc times one full-batch evaluation of the WVCMC objective and its
// gradient (consensus.Variational.ValueGrad, the inner step of Algorithms
// 1–2 with L-BFGS) on NOMA signals of K workers, and counts its
// allocations.
func (b *suite) wvcmc() error {
	set := probitData(14, b.s.wvcmcN, 5)
	p, err := model.NewProbit(set.U, set.V, 1)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(15, 16))
	ts := dataset.ThetaStar(5)
	samples := make([]*mat.Dense, b.s.wvK)
	for k := range samples {
		m := mat.NewDense(b.s.wvcmcS, 5, nil)
		for i := range b.s.wvcmcS {
			for j := range 5 {
				m.Set(i, j, ts[j]+0.1*rng.NormFloat64())
			}
		}
		samples[k] = m
	}
	link := channel.Config{Access: channel.NOMA, Fading: channel.Flat, Repetition: 2, Power: 1, SNRdB: 20}
	rx, err := channel.Transmit(rng, link, samples)
	if err != nil {
		return fmt.Errorf("wvcmc signals: %w", err)
	}
	v, err := consensus.NewVariational(rx, p)
	if err != nil {
		return err
	}
	m, err := consensus.WGCMC(rx)
	if err != nil {
		return err
	}
	grad := m.Clone()
	call := func() {
		if _, e := v.ValueGrad(grad, m); e != nil {
			err = e
		}
	}
	t := b.best(call)
	if err != nil {
		return fmt.Errorf("wvcmc: %w", err)
	}
	allocs := allocsPerCall(3, call)
	b.add(Kernel{
		Name: "WVCMC value + gradient", Size: fmt.Sprintf("NOMA K=%d S=%d N=%d d=5", b.s.wvK, b.s.wvcmcS, b.s.wvcmcN),
		Time: t[0], Rate: 1 / t[0].Seconds(), Unit: "evaluations/s",
		Target: "0 allocations per iteration", Allocs: allocs, Met: allocs == 0,
	})
	return nil
}

// workerSetup returns K Gibbs chains on equal shards of (n, 5) data (the
// paper's subposteriors: prior variance K·σ²), fresh generators and
// output matrices of s rows.
func workerSetup(n, k, s int) ([]sampler.Chain, []*rand.Rand, []*mat.Dense, error) {
	set := probitData(17, n, 5)
	chains := make([]sampler.Chain, k)
	rngs := make([]*rand.Rand, k)
	dst := make([]*mat.Dense, k)
	for i := range k {
		lo, hi := i*n/k, (i+1)*n/k
		sh := set.Subset(seq(lo, hi))
		var err error
		if chains[i], err = sampler.NewGibbs(sh.U, sh.V, float64(k)); err != nil {
			return nil, nil, nil, fmt.Errorf("worker %d: %w", i, err)
		}
		rngs[i] = rand.New(rand.NewPCG(18, uint64(i)))
		dst[i] = mat.NewDense(s, 5, nil)
	}
	return chains, rngs, dst, nil
}

func seq(lo, hi int) []int {
	idx := make([]int, hi-lo)
	for i := range idx {
		idx[i] = lo + i
	}
	return idx
}

// parallel runs K workers' chains (sampler.SampleChains) on one core and
// on all cores, in interleaved rounds from the same start and seeds, and
// checks that the samples are identical.
func (b *suite) parallel() error {
	n, k, s := b.s.parN, b.s.parK, b.s.parS
	procs := runtime.NumCPU()
	best := [2]time.Duration{math.MaxInt64, math.MaxInt64}
	var cores float64 // CPU time / wall time of the best all-core run
	var out [2][]*mat.Dense
	for range max(3, b.cfg.Reps) {
		for i, p := range []int{1, procs} {
			chains, rngs, dst, err := workerSetup(n, k, s)
			if err != nil {
				return err
			}
			withProcs(p, func() {
				c0, ok0 := processCPU()
				t0 := time.Now()
				err = sampler.SampleChains(rngs, chains, dst, 0)
				el := time.Since(t0)
				c1, ok1 := processCPU()
				if el < best[i] {
					best[i] = el
					if i == 1 && ok0 && ok1 {
						cores = float64(c1-c0) / float64(el)
					}
				}
			})
			if err != nil {
				return err
			}
			out[i] = dst
		}
	}
	same := true
	for i := range out[0] {
		same = same && mat.Equal(out[0][i], out[1][i])
	}
	speedup := float64(best[0]) / float64(best[1])
	ideal := float64(min(procs, k))
	samples := float64(k * s)
	b.add(Kernel{
		Name: "K workers in parallel", Size: fmt.Sprintf("K=%d N=%d d=5 S=%d, %d cores", k, n, s, procs),
		Time: best[1], Rate: samples / best[1].Seconds(), Unit: "samples/s",
		Bound: "the same on 1 core", BoundTime: best[0], BoundRate: samples / best[0].Seconds(),
		Target: fmt.Sprintf("speed-up near %.0f×, identical results", ideal),
		Met:    same && speedup >= 0.85*ideal,
		Allocs: -1,
		Note:   fmt.Sprintf("speed-up %.2f×%s; samples identical to the 1-core run: %v", speedup, coresNote(cores), same),
	})
	return nil
}

// coresNote reports the CPU the all-core run obtained, which shows whether
// other load left the cores to it.
func coresNote(cores float64) string {
	if cores == 0 {
		return ""
	}
	return fmt.Sprintf(" (the all-core run got %.2f cores of CPU time)", cores)
}

// scaleN times a Gibbs sweep at fixed d for growing N.
func (b *suite) scaleN() error {
	sr := Series{Name: fmt.Sprintf("Gibbs sweep vs N (d = %d)", b.s.scaleND), Param: "N",
		Short: fmt.Sprintf("Gibbs sweep vs N (d=%d)", b.s.scaleND)}
	for _, n := range b.s.scaleN {
		g, rng, _, err := b.newChain(n, b.s.scaleND)
		if err != nil {
			return err
		}
		t := b.best(func() { g.Sweep(rng) })
		sr.X = append(sr.X, float64(n))
		sr.Seconds = append(sr.Seconds, t[0].Seconds())
	}
	b.addSeries(sr)
	return nil
}

// scaleD times a Gibbs sweep at fixed N for growing d.
func (b *suite) scaleD() error {
	sr := Series{Name: fmt.Sprintf("Gibbs sweep vs d (N = %d)", b.s.scaleDN), Param: "d",
		Short: fmt.Sprintf("Gibbs sweep vs d (N=%d)", b.s.scaleDN)}
	for _, d := range b.s.scaleD {
		g, rng, _, err := b.newChain(b.s.scaleDN, d)
		if err != nil {
			return err
		}
		t := b.best(func() { g.Sweep(rng) })
		sr.X = append(sr.X, float64(d))
		sr.Seconds = append(sr.Seconds, t[0].Seconds())
	}
	b.addSeries(sr)
	return nil
}

// scaleS times the batched gradient at fixed (N, d) for growing S, on one
// core.
func (b *suite) scaleS() error {
	n, d := b.s.scaleSN, b.s.scaleSD
	set := probitData(19, n, d)
	p, err := model.NewProbit(set.U, set.V, 1)
	if err != nil {
		return err
	}
	sr := Series{Name: fmt.Sprintf("probit gradient vs S (N = %d, d = %d)", n, d), Param: "S",
		Short: fmt.Sprintf("gradient vs S (N=%d, d=%d)", n, d)}
	rng := rand.New(rand.NewPCG(20, 21))
	ts := dataset.ThetaStar(d)
	for _, s := range b.s.scaleS {
		theta := mat.NewDense(s, d, nil)
		for i := range s {
			for j := range d {
				theta.Set(i, j, ts[j]+0.05*rng.NormFloat64())
			}
		}
		grad := mat.NewDense(s, d, nil)
		var t []time.Duration
		withProcs(1, func() { t = b.best(func() { p.GradLogJoint(grad, theta) }) })
		sr.X = append(sr.X, float64(s))
		sr.Seconds = append(sr.Seconds, t[0].Seconds())
	}
	b.addSeries(sr)
	return nil
}

// scaleK times K workers (sampler.SampleChains, all cores), each with its own
// shard of fixed size, so that the work grows like K.
func (b *suite) scaleK() error {
	sr := Series{
		Name:  fmt.Sprintf("K workers' chains vs K (%d points each, d = 5, S = %d)", b.s.scaleKShard, b.s.scaleKSamples),
		Short: fmt.Sprintf("K chains vs K (%d points each)", b.s.scaleKShard),
		Param: "K",
	}
	for _, k := range b.s.scaleK {
		best := time.Duration(math.MaxInt64)
		for range max(2, b.cfg.Reps/2) {
			chains, rngs, dst, err := workerSetup(k*b.s.scaleKShard, k, b.s.scaleKSamples)
			if err != nil {
				return err
			}
			t0 := time.Now()
			if err := sampler.SampleChains(rngs, chains, dst, 0); err != nil {
				return err
			}
			best = min(best, time.Since(t0))
		}
		sr.X = append(sr.X, float64(k))
		sr.Seconds = append(sr.Seconds, best.Seconds())
	}
	b.addSeries(sr)
	return nil
}

func blasName() string {
	name := fmt.Sprintf("%T", blas64.Implementation())
	switch {
	case strings.HasPrefix(name, "gonum."):
		return "gonum"
	case strings.HasPrefix(name, "netlib."):
		return "OpenBLAS (cgo)"
	}
	return name
}

// cpuName returns the CPU model from /proc/cpuinfo, or GOARCH.
func cpuName() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
			}
		}
	}
	return runtime.GOARCH
}
