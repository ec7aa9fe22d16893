package consensus

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/wcmc-project/wcmc/channel"
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
