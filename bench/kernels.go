package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/consensus"
	"github.com/wcmc-project/wcmc/dataset"
	"github.com/wcmc-project/wcmc/internal/machine"
	"github.com/wcmc-project/wcmc/model"
	"github.com/wcmc-project/wcmc/sampler"
)

// gibbs times one sweep at each size against one plain read of U (floats.Sum
// over its entries: the memory traffic a fused sweep cannot avoid) and
// against N plain normal draws (rng.NormFloat64: the randomness it cannot
// avoid); for the cases marked float32, the sweep of the opt-in float32
// copy of U (sampler.NewGibbsFloat32) in the same rounds, against the same
// read of the float64 U.
func (b *suite) gibbs() error {
	for _, c := range b.s.gibbs {
		g, rng, set, err := b.newChain(c.n, c.d, sampler.NewGibbs)
		if err != nil {
			return err
		}
		raw := set.U.RawMatrix().Data
		var sink float64
		norm := make([]float64, c.n)
		nrng := rand.New(rand.NewPCG(4, 5))
		fs := []func(){
			func() { g.Sweep(rng) },
			func() { sink += floats.Sum(raw) },
			func() {
				for i := range norm {
					norm[i] = nrng.NormFloat64()
				}
			},
		}
		var g32 *sampler.Gibbs
		var rng32 *rand.Rand
		if c.float32 {
			if g32, rng32, _, err = b.newChain(c.n, c.d, sampler.NewGibbsFloat32); err != nil {
				return err
			}
			fs = append(fs, func() { g32.Sweep(rng32) })
		}
		t := b.best(fs...)
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
		if g32 != nil {
			k32 := Kernel{
				Name: gibbs32Name, Size: size, Time: t[3], Rate: 1 / t[3].Seconds(), Unit: "samples/s",
				Bound: read, BoundTime: t[1], BoundRate: 1 / t[1].Seconds(),
				Ratio:  float64(t[3]) / float64(t[1]),
				Allocs: allocsPerCall(5, func() { g32.Sweep(rng32) }),
				Note: fmt.Sprintf("reads a float32 copy of U (%.3g MB); %.2f× the float64 sweep; draws of the posterior with U rounded to float32",
					mb/2, float64(t[3])/float64(t[0])),
			}
			if c.target != "" {
				k32.Target, k32.Met = c.target, c.ok(k32)
			}
			b.add(k32)
		}
	}
	return nil
}

// gibbs32Name is the name of the rows of the float32 Gibbs sweep.
const gibbs32Name = "Gibbs sweep, float32 U (opt-in)"

// latent times sampler.DrawLatent on the margins of the (8500, 5) chain —
// the truncated-normal draws of a sweep, with their real mix of bounds —
// against as many plain normal draws.
func (b *suite) latent() error {
	n := b.s.latentN
	g, rng, set, err := b.newChain(n, 5, sampler.NewGibbs)
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
	p, set, err := probitTarget(8, n, d)
	if err != nil {
		return err
	}
	theta := nearThetaStar(rand.New(rand.NewPCG(9, 10)), s, d, 0.05)
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
	bound, tb := fmt.Sprintf("%s Dgemm, same products, 1 core", machine.BLAS()), t[2]
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
	p, _, err := probitTarget(11, b.s.sgldN, 5)
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

// wvcmcFlopsPerMargin counts the arithmetic of one margin of the WVCMC
// objective on probit: θ_sᵀu_n and the gradient's w_n·u_n (2d flops each),
// the two degree-10 polynomials of log Φ and λ by fused multiply-adds (40
// flops, an FMA counted as two) and about 10 more (the sign, the local
// variable and its powers, the sums). The objective evaluates S·N margins.
func wvcmcFlopsPerMargin(d int) float64 { return float64(4*d + 50) }

// wvcmc times one full-batch evaluation of the WVCMC objective and its
// gradient (consensus.Variational.ValueGrad, the inner step of Algorithms
// 1–2 with L-BFGS) on NOMA signals of K workers, at each size, and counts
// its allocations. Its bound is the same margins' arithmetic
// (wvcmcFlopsPerMargin) at the core's vector peak (vectorPeak), measured
// in the same rounds: the distance of the objective from the machine.
// Alongside, the special functions alone (model.LogPhiInvMillsRow, the
// kernel in use) on the margins of the objective's first sample rows, so
// that the note can say how much of the time they take.
func (b *suite) wvcmc() error {
	run, perRound, peakName, hasPeak := vectorPeak()
	const rounds = 1 << 12
	for i, c := range b.s.wvcmc {
		p, _, err := probitTarget(uint64(14+i), c.n, c.d)
		if err != nil {
			return err
		}
		rng := rand.New(rand.NewPCG(15, uint64(16+i)))
		samples := make([]*mat.Dense, c.k)
		for k := range samples {
			samples[k] = nearThetaStar(rng, c.s, c.d, 0.1)
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
		special, copyOnly, rows := objectiveMargins(p, m.Apply(rx))
		fs := []func(){call, special, copyOnly}
		if hasPeak {
			fs = append(fs, func() { run(rounds) })
		}
		t := b.best(fs...)
		if err != nil {
			return fmt.Errorf("wvcmc: %w", err)
		}
		allocs := allocsPerCall(3, call)
		margins := float64(c.s) * float64(c.n)
		perMargin := t[0].Seconds() / margins * 1e9
		spec := max(t[1]-t[2], 0).Seconds() / float64(rows*c.n) * 1e9
		k := Kernel{
			Name: "WVCMC value + gradient", Size: fmt.Sprintf("NOMA K=%d S=%d N=%d d=%d", c.k, c.s, c.n, c.d),
			Time: t[0], Rate: 1 / t[0].Seconds(), Unit: "evaluations/s",
			Target: "0 allocations per iteration", Allocs: allocs, Met: allocs == 0,
			Note: fmt.Sprintf("%.3g ns per margin (S·N = %.3g margins), of which the special functions alone %.3g ns (%s kernel, on its first %d samples' margins)",
				perMargin, margins, spec, model.RowKernel(), rows),
		}
		if hasPeak {
			peak := perRound * rounds / t[3].Seconds()
			flops := margins * wvcmcFlopsPerMargin(c.d)
			k.Bound = fmt.Sprintf("%.0f flops per margin at the %s", wvcmcFlopsPerMargin(c.d), peakName)
			k.BoundTime = time.Duration(flops / peak * 1e9)
			k.BoundRate = 1 / k.BoundTime.Seconds()
			k.Note += fmt.Sprintf(", %.2f× the bound on their own; peak %.1f GFLOP/s, the objective %.2f GFLOP/s",
				spec/(k.BoundTime.Seconds()/margins*1e9), peak/1e9, flops/t[0].Seconds()/1e9)
		}
		b.add(k)
	}
	return nil
}

// objectiveMargins returns a function applying the special functions of
// the probit log-joint and gradient (model.LogPhiInvMillsRow) to the
// margins s_n θ_sᵀu_n of the first rows samples of theta, a copy of
// them in before each row, and a function doing only the copies.
func objectiveMargins(p *model.Probit, theta *mat.Dense) (special, copyOnly func(), rows int) {
	s, _ := theta.Dims()
	rows = min(s, 32)
	var mg mat.Dense
	mg.Mul(theta.Slice(0, rows, 0, theta.RawMatrix().Cols), p.U().T())
	n := p.NumData()
	raw, work := mg.RawMatrix(), make([]float64, n)
	var sink float64
	special = func() {
		for r := range rows {
			copy(work, raw.Data[r*raw.Stride:r*raw.Stride+n])
			sink += model.LogPhiInvMillsRow(work, p.Signs(), 1)
		}
	}
	copyOnly = func() {
		for r := range rows {
			copy(work, raw.Data[r*raw.Stride:r*raw.Stride+n])
		}
	}
	return special, copyOnly, rows
}

// parallel runs K workers' chains (sampler.RunChains) on one core and
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
				_, err = sampler.RunChains(context.Background(), rngs, chains, dst, nil, 0, 1, nil)
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
