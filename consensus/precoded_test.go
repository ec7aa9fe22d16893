package consensus

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/model"
)

// randomRotation returns a d×d orthogonal matrix (the Q of a Gaussian
// matrix).
func randomRotation(rng *rand.Rand, d int) *mat.Dense {
	a := mat.NewDense(d, d, nil)
	for i := range d {
		for j := range d {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(a)
	var q mat.Dense
	qr.QTo(&q)
	return &q
}

// randomCov returns 0.3 A Aᵀ + 0.2 I for a Gaussian d×d A.
func randomCov(rng *rand.Rand, d int) *mat.SymDense {
	a := mat.NewDense(d, d, nil)
	for i := range d {
		for j := range d {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	c := mat.NewSymDense(d, nil)
	c.SymOuterK(0.3, a)
	return shiftDiag(c, 0.2)
}

// precodedTarget is Cov z_k = P_k F C Fᵀ + ν I of the combined signal of a
// precoded stream with F = diag(f) Uᵀ.
func precodedTarget(c mat.Symmetric, u *mat.Dense, f []float64, pk, nu float64) *mat.SymDense {
	d := c.SymmetricDim()
	var fm, t mat.Dense
	fm.Mul(mat.NewDiagDense(d, f), u.T())
	t.Product(&fm, c, fm.T())
	out := mat.NewSymDense(d, nil)
	for i := range d {
		for j := i; j < d; j++ {
			out.SetSym(i, j, pk*(t.At(i, j)+t.At(j, i))/2)
		}
	}
	return shiftDiag(out, nu)
}

// TestWGCMCPrecodedIsExact: on the signals of a precoded link whose second
// moments are exactly those of the model, z_k = √P_k F_k θ_k + ñ_k
// (docs/MATH.md eq. (22.7)), WGCMC's output has exactly the global
// covariance (Σ_k C_k^{-1})^{-1} under OMA, and C_0/K under NOMA with a
// shared precoder and homogeneous C_0; the paper's WGCMC, which reads the
// same signals as √P_k θ_k + ñ_k, does not.
func TestWGCMCPrecodedIsExact(t *testing.T) {
	const d, k, l, s = 3, 3, 2, 400
	rng := rand.New(rand.NewPCG(31, 32))
	covs := make([]*mat.SymDense, k)
	prec := mat.NewSymDense(d, nil)
	for w := range covs {
		covs[w] = randomCov(rng, d)
		inv, err := pinv(covs[w])
		if err != nil {
			t.Fatal(err)
		}
		prec.AddSym(prec, inv)
	}
	global, err := pinv(prec)
	if err != nil {
		t.Fatal(err)
	}
	pk := []float64{2, 5, 3}
	const n0 = 0.3
	rx := &channel.Received{Access: channel.OMA, K: k, S: s, D: d, Mr: l * d, L: l, Pk: pk, N0: n0, Power: 1}
	targets := make([]*mat.SymDense, k)
	for w := range k {
		u := randomRotation(rng, d)
		f := []float64{1.5, 0.7, 0.2 + 0.3*float64(w)}
		rx.Rotation, rx.DirGain = append(rx.Rotation, u), append(rx.DirGain, f)
		targets[w] = precodedTarget(covs[w], u, f, pk[w], n0/l)
		rx.Y = append(rx.Y, exactCov(rng, s, l, targets[w]))
	}
	m, err := WGCMC(rx)
	if err != nil {
		t.Fatal(err)
	}
	if got := combinedCov(m, rx, targets); !mat.EqualApprox(got, global, 1e-10) {
		t.Errorf("OMA: output covariance\n%v\nwant\n%v", mat.Formatted(got), mat.Formatted(global))
	}
	paper := *rx
	paper.Rotation, paper.DirGain = nil, nil
	plain, err := WGCMC(&paper)
	if err != nil {
		t.Fatal(err)
	}
	var diff mat.Dense
	diff.Sub(combinedCov(plain, rx, targets), global)
	if rel := mat.Norm(&diff, 2) / mat.Norm(global, 2); rel < 0.1 {
		t.Errorf("OMA: WGCMC blind to the precoder is within %.3g of the global covariance; the precoder should matter", rel)
	}

	c0 := mat.NewSymDense(d, nil)
	c0.ScaleSym(float64(k), global)
	u := randomRotation(rng, d)
	f := []float64{1.2, 0.9, 0.4}
	target := precodedTarget(c0, u, f, float64(k)*pk[0], n0/l)
	noma := &channel.Received{Access: channel.NOMA, K: k, S: s, D: d, Mr: l * d, L: l, Pk: []float64{pk[0], pk[0], pk[0]}, N0: n0, Power: 1,
		Rotation: []*mat.Dense{u, u, u}, DirGain: [][]float64{f, f, f}, Y: []*mat.Dense{exactCov(rng, s, l, target)}}
	m, err = WGCMC(noma)
	if err != nil {
		t.Fatal(err)
	}
	if got := combinedCov(m, noma, []*mat.SymDense{target}); !mat.EqualApprox(got, global, 1e-10) {
		t.Errorf("NOMA: output covariance\n%v\nwant C_0/K =\n%v", mat.Formatted(got), mat.Formatted(global))
	}
}

// precodedLink sends k workers' Gaussian samples over a flat OMA link at
// snr dB with the whiten precoder.
func precodedLink(t *testing.T, rng *rand.Rand, access channel.Access, snr float64, samples []*mat.Dense) *channel.Received {
	t.Helper()
	rx, err := channel.Transmit(rng, channel.Config{Access: access, Repetition: 2, Power: 1, SNRdB: snr, Precoder: channel.Whiten}, samples)
	if err != nil {
		t.Fatal(err)
	}
	return rx
}

// On a precoded link at 300 dB the decoded signals are the samples sent:
// GCMC is noiseless CMC on them, and SingleWorker returns the worker's own
// samples.
func TestGCMCPrecodedDecodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	const k, s, d = 3, 200, 3
	samples := make([]*mat.Dense, k)
	for w := range samples {
		samples[w] = correlated(rng, s, d, 0.3*float64(w), 1+float64(w))
	}
	rx := precodedLink(t, rng, channel.OMA, 300, samples)
	sent := make([]*mat.Dense, k)
	for w, x := range samples {
		sent[w] = x.Slice(0, rx.S, 0, d).(*mat.Dense)
	}
	want, err := Noiseless(sent)
	if err != nil {
		t.Fatal(err)
	}
	m, err := GCMC(rx)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Apply(rx); !mat.EqualApprox(got, want, 1e-8*mat.Norm(want, math.Inf(1))) {
		t.Errorf("GCMC on a precoded link at 300 dB differs from noiseless CMC")
	}
	for w := range k {
		if got := SingleWorker(rx, w).Apply(rx); !mat.EqualApprox(got, sent[w], 1e-8*mat.Norm(sent[w], math.Inf(1))) {
			t.Errorf("worker %d: SingleWorker does not decode its samples", w+1)
		}
	}
}

// correlated draws s rows of d equicorrelated coordinates (correlation ρ)
// of scale sd with mean 0.5.
func correlated(rng *rand.Rand, s, d int, rho, sd float64) *mat.Dense {
	x := mat.NewDense(s, d, nil)
	for i := range s {
		common := rng.NormFloat64()
		for j := range d {
			x.Set(i, j, 0.5+sd*(math.Sqrt(rho)*common+math.Sqrt(1-rho)*rng.NormFloat64()))
		}
	}
	return x
}

// At low SNR the precoder sends the weakest directions without power.
// With each worker's weak direction along another axis, GCMC's weights
// still add up to the identity, Σ_k W_k E_k = I (the other workers carry
// each worker's unsent direction), WGCMC's map is finite, and WVCMC
// refuses with ErrRankDeficient.
func TestPrecodedRankDeficient(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	const k, s, d = 3, 400, 3
	samples := make([]*mat.Dense, k)
	for w := range samples {
		samples[w] = mat.NewDense(s, d, nil)
		for i := range s {
			for j := range d {
				sd := 1.0
				if j == w {
					sd = 0.05
				}
				samples[w].Set(i, j, sd*rng.NormFloat64())
			}
		}
	}
	rx := precodedLink(t, rng, channel.OMA, -3, samples)
	for w, f := range rx.DirGain {
		if rx.FullRank() || slices.Min(f) > 0 {
			t.Fatalf("worker %d's gains %v: want a direction without power at −3 dB", w+1, f)
		}
	}
	g, err := GCMC(rx)
	if err != nil {
		t.Fatal(err)
	}
	sumWE := mat.NewDense(d, d, nil)
	for w, wk := range g.W {
		var we mat.Dense
		we.Mul(wk, rx.Encoder(w))
		sumWE.Add(sumWE, &we)
	}
	if !mat.EqualApprox(sumWE, eye(d), 1e-9) {
		t.Errorf("GCMC: Σ_k W_k E_k =\n%v\nwant I", mat.Formatted(sumWE))
	}
	m, err := WGCMC(rx)
	if err != nil {
		t.Fatal(err)
	}
	for w, wk := range m.W {
		if !allFiniteDense(wk) {
			t.Errorf("WGCMC: worker %d's map is not finite", w+1)
		}
	}
	target, err := model.NewGaussian(nil, shiftDiag(mat.NewSymDense(d, nil), 1))
	if err != nil {
		t.Fatal(err)
	}
	init, _, err := InitialMap(rx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WVCMC(context.Background(), rng, rx, target, init, Settings{}); !errors.Is(err, ErrRankDeficient) {
		t.Errorf("WVCMC: %v, want ErrRankDeficient", err)
	}
}

func allFiniteDense(m *mat.Dense) bool {
	for _, v := range m.RawMatrix().Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// WVCMC runs on a precoded link of full rank: its objective falls from the
// GCMC start, whose entropy term uses the precoded encoders.
func TestWVCMCOnPrecodedLink(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 38))
	const k, s, d = 3, 300, 2
	samples := make([]*mat.Dense, k)
	for w := range samples {
		samples[w] = correlated(rng, s, d, 0.5, 1)
	}
	for _, access := range []channel.Access{channel.OMA, channel.NOMA} {
		rx := precodedLink(t, rng, access, 10, samples)
		if !rx.FullRank() {
			t.Fatalf("%v: gains %v, want every direction sent at 10 dB", access, rx.DirGain)
		}
		target, err := model.NewGaussian([]float64{0.5, 0.5}, shiftDiag(mat.NewSymDense(d, nil), 1.0/k))
		if err != nil {
			t.Fatal(err)
		}
		init, _, err := InitialMap(rx)
		if err != nil {
			t.Fatal(err)
		}
		v, err := NewVariational(rx, target)
		if err != nil {
			t.Fatal(err)
		}
		start, err := v.Value(init)
		if err != nil {
			t.Fatal(err)
		}
		fit, err := WVCMC(context.Background(), rng, rx, target, init, Settings{Holdout: Off})
		if err != nil {
			t.Fatal(err)
		}
		end, err := v.Value(fit.Map)
		if err != nil {
			t.Fatal(err)
		}
		if !(end < start) {
			t.Errorf("%v: objective %v from the start's %v", access, end, start)
		}
	}
}
