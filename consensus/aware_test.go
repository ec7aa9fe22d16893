package consensus

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/model"
)

// exactCov returns s rows, repeated l times along each row (y = B z), whose
// z has sample covariance exactly target (up to rounding): random rows,
// centred and whitened by their own sample covariance, then coloured by
// target's Cholesky factor.
func exactCov(rng *rand.Rand, s, l int, target *mat.SymDense) *mat.Dense {
	d := target.SymmetricDim()
	z := mat.NewDense(s, d, nil)
	for i := range s {
		for j := range d {
			z.Set(i, j, rng.NormFloat64())
		}
	}
	var own mat.SymDense
	stat.CovarianceMatrix(&own, z, nil)
	var co, ct mat.Cholesky
	if !co.Factorize(&own) || !ct.Factorize(target) {
		panic("exactCov: not positive definite")
	}
	var lo, lt, white mat.TriDense
	co.LTo(&lo)
	ct.LTo(&lt)
	if err := white.InverseTri(&lo); err != nil {
		panic(err)
	}
	means := make([]float64, d)
	for j := range d {
		means[j] = stat.Mean(mat.Col(nil, j, z), nil)
	}
	for i := range s {
		for j := range d {
			z.Set(i, j, z.At(i, j)-means[j])
		}
	}
	// z ← z L_own^{-T} L_targetᵀ
	z.Mul(z, white.T())
	z.Mul(z, lt.T())
	y := mat.NewDense(s, l*d, nil)
	for i := range s {
		for c := range l {
			for j := range d {
				y.Set(i, c*d+j, z.At(i, j))
			}
		}
	}
	return y
}

// combinedCov returns Σ_k W_k B T_k Bᵀ W_kᵀ, the covariance of the map's
// output on independent streams y_k = B z_k with Cov z_k = T_k.
func combinedCov(m Map, rx *channel.Received, targets []*mat.SymDense) *mat.Dense {
	b := rx.Basis()
	out := mat.NewDense(rx.D, rx.D, nil)
	for k, w := range m.W {
		var wb, t mat.Dense
		wb.Mul(w, b)
		t.Product(&wb, targets[k], wb.T())
		out.Add(out, &t)
	}
	return out
}

// TestWGCMCAwareIsExact: on signals whose second moments are those of the
// CSI-aware model, z_k = a_k √P_k θ_k + white noise of variance
// ν_k = (N0 + CSINoise[k])/l (docs/MATH.md eq. (20.5)), exactly in sample,
// WGCMCAware's output has exactly the global covariance (Σ_k C_k^{-1})^{-1}
// under OMA, and C_0/K under NOMA with homogeneous C_0, while WGCMC, which
// takes the noise for N0/l and the gain for 1, does not; without CSI
// statistics WGCMCAware is WGCMC.
func TestWGCMCAwareIsExact(t *testing.T) {
	const d, k, l, s = 3, 3, 2, 400
	rng := rand.New(rand.NewPCG(21, 22))
	covs := make([]*mat.SymDense, k)
	prec := mat.NewSymDense(d, nil)
	for w := range covs {
		a := mat.NewDense(d, d, nil)
		for i := range d {
			for j := range d {
				a.Set(i, j, rng.NormFloat64())
			}
		}
		c := mat.NewSymDense(d, nil)
		c.SymOuterK(0.3, a)
		for i := range d {
			c.SetSym(i, i, c.At(i, i)+0.2)
		}
		covs[w] = c
		var ch mat.Cholesky
		ch.Factorize(c)
		var inv mat.SymDense
		if err := ch.InverseTo(&inv); err != nil {
			t.Fatal(err)
		}
		prec.AddSym(prec, &inv)
	}
	var global mat.SymDense
	var ch mat.Cholesky
	ch.Factorize(prec)
	if err := ch.InverseTo(&global); err != nil {
		t.Fatal(err)
	}
	gain := []float64{0.9, 1, 0.8}
	extra := []float64{0.3, 0.1, 0.5}
	pk := []float64{2, 5, 3}
	const n0 = 0.2
	rx := &channel.Received{Access: channel.OMA, K: k, S: s, D: d, Mr: l * d, L: l, Pk: pk, N0: n0, Power: 1, CSIGain: gain, CSINoise: extra}
	targets := make([]*mat.SymDense, k)
	for w := range k {
		tg := mat.NewSymDense(d, nil)
		tg.ScaleSym(gain[w]*gain[w]*pk[w], covs[w])
		targets[w] = shiftDiag(tg, (n0+extra[w])/l)
		rx.Y = append(rx.Y, exactCov(rng, s, l, targets[w]))
	}
	aware, err := WGCMCAware(rx)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := WGCMC(rx)
	if err != nil {
		t.Fatal(err)
	}
	gotAware, gotPlain := combinedCov(aware, rx, targets), combinedCov(plain, rx, targets)
	if !mat.EqualApprox(gotAware, &global, 1e-10) {
		t.Errorf("OMA: aware output covariance\n%v\nwant\n%v", mat.Formatted(gotAware), mat.Formatted(&global))
	}
	var diff mat.Dense
	diff.Sub(gotPlain, &global)
	rel := mat.Norm(&diff, 2) / mat.Norm(&global, 2)
	t.Logf("OMA: the unaware WGCMC's output covariance is off by %.3g (relative, spectral norm)", rel)
	if rel < 0.05 {
		t.Errorf("OMA: the unaware WGCMC's output covariance is within %.3g of the global one; the test's noise should matter", rel)
	}

	// NOMA: one stream, Σ_k a_k² P C_0 + (N0 + Σ_k CSINoise[k])/l.
	c0 := mat.NewSymDense(d, nil)
	c0.ScaleSym(float64(k), &global)
	var a2, noise float64 = 0, n0
	for w := range k {
		a2 += gain[w] * gain[w]
		noise += extra[w]
	}
	tg := mat.NewSymDense(d, nil)
	tg.ScaleSym(a2*pk[0], c0)
	target := shiftDiag(tg, noise/l)
	nomaPk := []float64{pk[0], pk[0], pk[0]}
	noma := &channel.Received{Access: channel.NOMA, K: k, S: s, D: d, Mr: l * d, L: l, Pk: nomaPk, N0: n0, Power: 1, CSIGain: gain, CSINoise: extra,
		Y: []*mat.Dense{exactCov(rng, s, l, target)}}
	aware, err = WGCMCAware(noma)
	if err != nil {
		t.Fatal(err)
	}
	if got := combinedCov(aware, noma, []*mat.SymDense{target}); !mat.EqualApprox(got, &global, 1e-10) {
		t.Errorf("NOMA: aware output covariance\n%v\nwant\n%v", mat.Formatted(got), mat.Formatted(&global))
	}

	// Without CSI statistics: WGCMC itself.
	rx.CSIGain, rx.CSINoise = nil, nil
	plain, _ = WGCMC(rx)
	same, err := WGCMCAware(rx)
	if err != nil {
		t.Fatal(err)
	}
	for w := range plain.W {
		if !mat.Equal(plain.W[w], same.W[w]) {
			t.Errorf("perfect CSI: WGCMCAware's map of worker %d differs from WGCMC's", w+1)
		}
	}
}

// TestVariationalNeedsNoCSIStatistics: WVCMC's objective rewritten for a
// server that knows the workers' estimate errors (docs/MATH.md eq. (20.6):
// the signal a_k E_k θ_k, the noise of variance N0 + CSINoise[k]) differs
// from the unaware objective by a constant, a·d·Σ_k log(1/a_k) with
// a = 1/(2K) under OMA and K/(K+1) under NOMA, at every map, with the same
// gradient: the noise level is not read, and the gains shift only the value.
func TestVariationalNeedsNoCSIStatistics(t *testing.T) {
	const d, k, s = 3, 3, 60
	cs := []*mat.SymDense{toeplitz(d, 0.1), toeplitz(d, 0.5), toeplitz(d, 0.8)}
	target, err := model.NewGaussian([]float64{0.2, -0.1, 0.3}, globalCov(cs))
	if err != nil {
		t.Fatal(err)
	}
	for _, access := range []channel.Access{channel.OMA, channel.NOMA} {
		rng := rand.New(rand.NewPCG(31, uint64(access)))
		samples := make([]*mat.Dense, k)
		for w, c := range cs {
			samples[w] = draw(rng, c, s)
		}
		cfg := channel.Config{Access: access, Fading: channel.Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: 10, Physical: true,
			CSI: channel.CSI{ErrorVar: 0.2}}
		rx, err := channel.Transmit(rng, cfg, samples)
		if err != nil {
			t.Fatal(err)
		}
		aware := *rx
		aware.Pk = make([]float64, len(rx.Pk))
		var logGain float64
		for w, a := range rx.CSIGain {
			if !(a < 1) || !(rx.CSINoise[w] > 0) {
				t.Fatalf("%v: worker %d has CSI gain %g and noise %g; the test needs a < 1 and residual interference", access, w+1, a, rx.CSINoise[w])
			}
			logGain += math.Log(a)
			aware.N0 += rx.CSINoise[w]
		}
		// E_k = √P_k B, so a_k E_k is the encoder of P_k a_k² (under NOMA
		// every a_k is a = v/(v + σ_e²), one common P).
		for i := range aware.Pk {
			aware.Pk[i] = rx.Pk[i] * rx.CSIGain[i] * rx.CSIGain[i]
		}
		weight := 1 / (2 * float64(k))
		if access == channel.NOMA {
			weight = 1 / (float64(k) + 1)
		}
		want := -weight * float64(d) * logGain
		if want <= 0 {
			t.Fatalf("%v: constant %g, want > 0", access, want)
		}
		v, err := NewVariational(rx, target)
		if err != nil {
			t.Fatal(err)
		}
		va, err := NewVariational(&aware, target)
		if err != nil {
			t.Fatal(err)
		}
		start, _, err := InitialMap(rx)
		if err != nil {
			t.Fatal(err)
		}
		moved := start.Clone()
		for _, w := range moved.W {
			r, c := w.Dims()
			for i := range r {
				for j := range c {
					w.Set(i, j, w.At(i, j)*(1+0.3*rng.NormFloat64())+0.05*rng.NormFloat64())
				}
			}
		}
		for name, m := range map[string]Map{"start": start, "moved": moved} {
			g, ga := m.Clone(), m.Clone()
			f, err := v.ValueGrad(g, m)
			if err != nil {
				t.Fatal(err)
			}
			fa, err := va.ValueGrad(ga, m)
			if err != nil {
				t.Fatal(err)
			}
			// Rounding of sums of |f|-sized terms: far below 1e-10·|f|.
			if got := fa - f; math.Abs(got-want) > 1e-10*(1+math.Abs(f)) {
				t.Errorf("%v, %s map: aware − unaware objective %.15g, want the constant %.15g", access, name, got, want)
			}
			if rel := relFrob(mat.NewVecDense(len(flattenMap(ga)), flattenMap(ga)), mat.NewVecDense(len(flattenMap(g)), flattenMap(g))); rel > 1e-12 {
				t.Errorf("%v, %s map: the gradients differ by %.3g (relative)", access, name, rel)
			}
		}
	}
}
