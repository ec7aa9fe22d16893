package consensus

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/model"
)

// shifted returns samples + m, row by row.
func shifted(x *mat.Dense, m []float64) *mat.Dense {
	out := mat.DenseCopyOf(x)
	r, _ := out.Dims()
	for i := range r {
		for j, v := range m {
			out.Set(i, j, out.At(i, j)+v)
		}
	}
	return out
}

// TestCentringRemovesWGCMCShrinkage: on the setting of
// TestWGCMCShrinksAMeanItsNoiseModelDoesNotCover (workers N(m, cI), an SNR
// that shrinks the paper's WGCMC-OMA output mean to f ≈ 0.7 m), the centred
// link gives WGCMC-OMA, WGCMC-NOMA and GCMC an output mean of m: the
// projection of the output mean on m is 1 within 4 standard errors of
// √(Σ_k δ_k/K² + 2c/(K S'))/‖m‖, from the means' coding error (variance δ_k
// per coordinate, combined with weights ≈ I/K), the workers' sample means
// and the output's own sample mean (variance ≈ c/(K S') each).
func TestCentringRemovesWGCMCShrinkage(t *testing.T) {
	const (
		d, k, s = 2, 4, 50000
		c       = 0.05
	)
	m := []float64{3, -2}
	mv := mat.NewVecDense(d, m)
	rng := rand.New(rand.NewPCG(11, 12))
	samples := make([]*mat.Dense, k)
	for w := range samples {
		x := mat.NewDense(s, d, nil)
		for i := range s {
			for j := range d {
				x.Set(i, j, m[j]+math.Sqrt(c)*rng.NormFloat64())
			}
		}
		samples[w] = x
	}
	proj := func(theta *mat.Dense) float64 {
		mean := make([]float64, d)
		for j := range d {
			mean[j] = stat.Mean(mat.Col(nil, j, theta), nil)
		}
		return mat.Dot(mat.NewVecDense(d, mean), mv) / mat.Dot(mv, mv)
	}
	for _, access := range []channel.Access{channel.OMA, channel.NOMA} {
		cfg := channel.Config{Access: access, Fading: channel.Flat, Repetition: 1, Power: 1, SNRdB: 21.2}
		paper, err := channel.Transmit(rng, cfg, samples)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Centre = true
		rx, err := channel.Transmit(rng, cfg, samples)
		if err != nil {
			t.Fatal(err)
		}
		var delta float64
		for _, v := range rx.MeanVar {
			delta += v / (k * k)
		}
		se := math.Sqrt(delta+2*c/float64(k*rx.S)) / mat.Norm(mv, 2)
		schemes := map[string]func(*channel.Received) (Map, error){"wgcmc": WGCMC}
		if access == channel.OMA {
			schemes["gcmc"] = GCMC
		}
		for name, learn := range schemes {
			before, err := learn(paper)
			if err != nil {
				t.Fatal(err)
			}
			after, err := learn(rx)
			if err != nil {
				t.Fatal(err)
			}
			p0, p1 := proj(before.Apply(paper)), proj(after.Apply(rx))
			t.Logf("%s %v: output mean along m, paper's link %.4f, centred %.4f (want 1 ± %.4f)", name, access, p0, p1, 4*se)
			if math.Abs(p1-1) > 4*se {
				t.Errorf("%s %v: centred output mean along m %.4f, want 1 ± %.4f", name, access, p1, 4*se)
			}
			if name == "wgcmc" && access == channel.OMA && p0 > 0.8 {
				t.Errorf("paper's WGCMC-OMA: output mean along m %.4f, the shrinkage this setting shows (≈ 0.7) is gone", p0)
			}
		}
	}
}

// TestCentringZeroMeanChangesNothing: for zero-mean Gaussian subposteriors
// (K = 4 Toeplitz C_k, d = 3) centring removes nothing, so a centred link
// should do what the paper's link does with the S' samples the means leave
// it: over 40 paired trials (the same samples, the paper's link fed the S'
// rows the centred one sends), err2 of every closed-form scheme against the
// exact global covariance differs by less than 4 standard errors of the
// paired differences. The means' code costs the exponent and about a bit
// per coordinate (|m_k| ≈ σ/√S is well inside a step Δ ≳ 0.17 σ).
func TestCentringZeroMeanChangesNothing(t *testing.T) {
	const (
		d, s, trials = 3, 400, 40
	)
	cs := []*mat.SymDense{toeplitz(d, 0), toeplitz(d, 0.3), toeplitz(d, 0.6), toeplitz(d, 0.9)}
	ref := globalCov(cs)
	rng := rand.New(rand.NewPCG(21, 22))
	diffs := map[string][]float64{}
	for range trials {
		samples := make([]*mat.Dense, len(cs))
		for k, c := range cs {
			samples[k] = draw(rng, c, s)
		}
		for _, access := range []channel.Access{channel.OMA, channel.NOMA} {
			cfg := channel.Config{Access: access, Fading: channel.Flat, Repetition: 1, Power: 1, SNRdB: 10, Centre: true}
			rx, err := channel.Transmit(rng, cfg, samples)
			if err != nil {
				t.Fatal(err)
			}
			for k, b := range rx.MeanBits {
				e := int64(math.Round(math.Log2(math.Sqrt(12 * rx.MeanVar[k]))))
				if b > channel.IntBits(e)+3*d {
					t.Fatalf("worker %d's zero mean cost %d bits, more than the exponent's %d and 3 per coordinate", k+1, b, channel.IntBits(e))
				}
			}
			first := make([]*mat.Dense, len(samples))
			for k, x := range samples {
				first[k] = x.Slice(0, rx.S, 0, d).(*mat.Dense)
			}
			cfg.Centre = false
			paper, err := channel.Transmit(rng, cfg, first)
			if err != nil {
				t.Fatal(err)
			}
			schemes := map[string]func(*channel.Received) (Map, error){access.String() + "/wgcmc": WGCMC}
			if access == channel.OMA {
				schemes["gcmc"] = GCMC
			}
			for name, learn := range schemes {
				var e [2]float64
				for i, link := range []*channel.Received{rx, paper} {
					mp, err := learn(link)
					if err != nil {
						t.Fatal(err)
					}
					e[i] = err2(mp.Apply(link), ref)
				}
				diffs[name] = append(diffs[name], e[0]-e[1])
			}
		}
	}
	for name, ds := range diffs {
		mean, sd := stat.MeanStdDev(ds, nil)
		se := sd / math.Sqrt(float64(len(ds)))
		t.Logf("%s: err2 centred − paper's link = %.4f ± %.4f (standard error)", name, mean, se)
		if math.Abs(mean) > 4*se {
			t.Errorf("%s: centring a zero mean changed err2 by %.4f, beyond 4 standard errors (%.4f)", name, mean, 4*se)
		}
	}
}

// err2 is eq: err2 of theta against the reference second moment ref.
func err2(theta *mat.Dense, ref mat.Symmetric) float64 {
	s, d := theta.Dims()
	var m mat.SymDense
	m.SymOuterK(1/float64(s), theta.T())
	var sum float64
	for i := range d {
		for j := range d {
			sum += math.Abs(m.At(i, j)-ref.At(i, j)) / math.Abs(ref.At(i, j))
		}
	}
	return sum / float64(d*d)
}

// centredLink sends three workers' samples N(μ_k, C_k) (μ_k far from 0)
// over a centred link and returns it with the global target N(μ, C),
// C = (Σ C_k^{-1})^{-1}, μ = C Σ C_k^{-1} μ_k.
func centredLink(t *testing.T, access channel.Access, s int) (*channel.Received, *model.Gaussian) {
	t.Helper()
	const d = 3
	cs := []*mat.SymDense{toeplitz(d, 0.1), toeplitz(d, 0.5), toeplitz(d, 0.8)}
	mus := [][]float64{{4, -3, 2}, {5, -2, 2.5}, {4.5, -3.5, 1}}
	c := globalCov(cs)
	var mu mat.VecDense
	mu.ReuseAsVec(d)
	for k, ck := range cs {
		var inv mat.SymDense
		var ch mat.Cholesky
		ch.Factorize(ck)
		if err := ch.InverseTo(&inv); err != nil {
			t.Fatal(err)
		}
		var t1 mat.VecDense
		t1.MulVec(&inv, mat.NewVecDense(d, mus[k]))
		mu.AddVec(&mu, &t1)
	}
	mu.MulVec(c, &mu)
	target, err := model.NewGaussian(mu.RawVector().Data, c)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(31, uint64(access)))
	samples := make([]*mat.Dense, len(cs))
	for k, ck := range cs {
		samples[k] = shifted(draw(rng, ck, s), mus[k])
	}
	cfg := channel.Config{Access: access, Fading: channel.Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: 15, Physical: true, Centre: true}
	rx, err := channel.Transmit(rng, cfg, samples)
	if err != nil {
		t.Fatal(err)
	}
	return rx, target
}

// The offset's gradient ∇_b L̃ = −(1/S) Σ_s ∇ log p(θ_s, Z), in raw and
// whitened coordinates, and the Newton Hessian with the offset's block,
// against central differences (tolerances as in the tests without offset).
func TestOffsetDerivativesMatchFiniteDifferences(t *testing.T) {
	for _, access := range []channel.Access{channel.OMA, channel.NOMA} {
		rx, target := centredLink(t, access, 40)
		m, _, err := InitialMap(rx)
		if err != nil {
			t.Fatal(err)
		}
		if m.Offset == nil {
			t.Fatalf("%v: the start map of a centred link has no offset", access)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range m.Offset {
			m.Offset[i] += 0.3 * rng.NormFloat64()
		}
		v, err := NewVariational(rx, target)
		if err != nil {
			t.Fatal(err)
		}
		grad := zeroLike(m)
		if err := v.Gradient(grad, m, nil); err != nil {
			t.Fatal(err)
		}
		num, ana := flattenMap(fdGradient(t, v, m)), flattenMap(grad)
		for i := range ana {
			if math.Abs(ana[i]-num[i]) > 1e-5*(1+math.Abs(num[i])) {
				t.Fatalf("%v: gradient entry %d of %d: analytic %g, finite difference %g", access, i, len(ana), ana[i], num[i])
			}
		}
		w, err := newWhitened(rx, m)
		if err != nil {
			t.Fatal(err)
		}
		x0 := w.fromMap(m)
		if len(x0) != w.d*w.r+rx.D {
			t.Fatalf("%v: %d whitened coordinates, want d·r + d = %d", access, len(x0), w.d*w.r+rx.D)
		}
		probe, g := m.Clone(), m.Clone()
		numW := fd.Gradient(nil, func(x []float64) float64 {
			w.toMap(probe, x)
			f, err := v.Value(probe)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}, x0, &fd.Settings{Formula: fd.Central, Step: 1e-6})
		anaW := w.pullback(nil, grad)
		for i := range anaW {
			if math.Abs(anaW[i]-numW[i]) > 1e-5*(1+math.Abs(numW[i])) {
				t.Fatalf("%v: whitened gradient entry %d: analytic %g, finite difference %g", access, i, anaW[i], numW[i])
			}
		}
		h := newHessian(v, w, target)
		n := len(x0)
		hess := mat.NewSymDense(n, nil)
		if err := h.eval(hess, m); err != nil {
			t.Fatal(err)
		}
		numH := mat.NewDense(n, n, nil)
		fd.Jacobian(numH, func(dst, x []float64) {
			w.toMap(probe, x)
			if err := v.Gradient(g, probe, nil); err != nil {
				t.Fatal(err)
			}
			copy(dst, w.pullback(nil, g))
		}, x0, &fd.JacobianSettings{Formula: fd.Central, Step: 1e-7})
		scale := mat.Norm(numH, math.Inf(1))
		for i := range n {
			for j := range n {
				if e := math.Abs(hess.At(i, j) - numH.At(i, j)); e > 1e-6*scale {
					t.Fatalf("%v: Hessian entry (%d,%d): %g, finite differences %g (scale %g)", access, i, j, hess.At(i, j), numH.At(i, j), scale)
				}
			}
		}
	}
}

// WVCMC learns the offset: on a Gaussian target N(μ, C), ∇_b L̃ =
// C^{-1}(θ̄ − μ) with θ̄ the mean of the fitted outputs, so a run stopped at
// gradient norm g has ‖C^{-1}(θ̄ − μ)‖ ≤ g. Started with its offset 0.5 off
// in every coordinate, the offset's own fit (W fixed) brings it to its
// gradient tolerance, and the converged protocol ends with the bound, far
// below the start's; the map it returns acts on the signals themselves
// (its centred coordinates undone): applied to rx it gives the outputs the
// bound is about.
func TestWVCMCLearnsTheOffset(t *testing.T) {
	for _, access := range []channel.Access{channel.OMA, channel.NOMA} {
		rx, target := centredLink(t, access, 400)
		init, _, err := InitialMap(rx)
		if err != nil {
			t.Fatal(err)
		}
		for i := range init.Offset {
			init.Offset[i] += 0.5
		}
		scoreOfMean := func(m Map) float64 {
			theta := m.Apply(rx)
			_, d := theta.Dims()
			diff := mat.NewVecDense(d, nil)
			for j := range d {
				diff.SetVec(j, stat.Mean(mat.Col(nil, j, theta), nil)-target.Mean()[j])
			}
			var ch mat.Cholesky
			ch.Factorize(target.Cov())
			var sol mat.VecDense
			if err := ch.SolveVecTo(&sol, diff); err != nil {
				t.Fatal(err)
			}
			return mat.Norm(&sol, 2)
		}
		// The offset alone, W fixed (WVCMC's first stage): the gradient in b
		// falls to offsetGradTol of its start, so ‖C^{-1}(θ̄ − μ)‖ does.
		v, err := NewVariational(rx, target)
		if err != nil {
			t.Fatal(err)
		}
		alone, evals := v.fitOffset(init)
		if got, start := scoreOfMean(alone), scoreOfMean(init); got > 1.01*offsetGradTol*start || evals == 0 {
			t.Errorf("%v: the offset fitted alone leaves ‖C^{-1}(θ̄ − μ)‖ = %.3g, start %.3g (%d evaluations)", access, got, start, evals)
		}
		fit, err := WVCMC(context.Background(), rand.New(rand.NewPCG(1, 1)), rx, target, init, Converged(0, 1e-8))
		if err != nil {
			t.Fatal(err)
		}
		start, end := scoreOfMean(init), scoreOfMean(fit.Map)
		t.Logf("%v: ‖C^{-1}(θ̄ − μ)‖ %.3g → %.3g (final gradient norm %.3g, %v)", access, start, end, fit.GradNorm, fit.Status)
		if end > fit.GradNorm*(1+1e-6)+1e-9 || end > 1e-3*start {
			t.Errorf("%v: ‖C^{-1}(θ̄ − μ)‖ = %.3g at the end (start %.3g), above the final gradient norm %.3g or 1e-3 of the start", access, end, start, fit.GradNorm)
		}
	}
}

// The centred coordinates are the same affine map: a map on y and the
// same map moved to the centred signals (offset + Σ_k W_k ȳ_k) give the
// same outputs, and moving back restores it.
func TestSignalShiftIsTheSameMap(t *testing.T) {
	rx, _ := centredLink(t, channel.OMA, 60)
	m, _, err := InitialMap(rx)
	if err != nil {
		t.Fatal(err)
	}
	sh := newSignalShift(rx, 45)
	c := sh.centred(m, 1)
	a, b := m.Apply(rx), c.Apply(sh.rx)
	if e := relFrob(a, b); e > 1e-13 {
		t.Errorf("outputs differ by %g", e)
	}
	back := sh.centred(c, -1)
	for i, v := range back.Offset {
		if math.Abs(v-m.Offset[i]) > 1e-13*(1+math.Abs(v)) {
			t.Errorf("offset %v back as %v", m.Offset, back.Offset)
			break
		}
	}
}
