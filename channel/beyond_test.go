package channel

import (
	"errors"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat"
)

// hashRx fingerprints the bits of what Transmit returned.
func hashRx(rx *Received) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	put := func(v float64) {
		b := math.Float64bits(v)
		for i := range buf {
			buf[i] = byte(b >> (8 * i))
		}
		h.Write(buf[:])
	}
	for _, y := range rx.Y {
		r, c := y.Dims()
		for i := range r {
			for j := range c {
				put(y.At(i, j))
			}
		}
	}
	for _, p := range rx.Pk {
		put(p)
	}
	put(rx.N0)
	for _, p := range rx.TxPower {
		put(p)
	}
	return h.Sum64()
}

// TestZeroValueGolden: with the zero values of Complex, CSI (σ_e² = 0, no
// pilots), Gains and Control, Transmit, Retransmit and link.json are bit
// for bit what they were before these models existed (hashes recorded from
// that code with the same seeds).
func TestZeroValueGolden(t *testing.T) {
	checkGolden(t, func(c Config) Config { return c })
}

// zeroValueGolden are the links of TestZeroValueGolden with the hashes of
// what Transmit, Retransmit and link.json gave before the models beyond
// the paper existed.
var zeroValueGolden = []struct {
	cfg            Config
	rx, again, lnk uint64
}{
	{Config{Access: OMA, Fading: Flat, Repetition: 1, Power: 1, SNRdB: 10}, 0x429a0661511a5445, 0x951286789dda0c01, 0x615e3a30b7c962ab},
	{Config{Access: NOMA, Fading: Flat, Repetition: 2, Power: 2, SNRdB: 0}, 0x24fed9cd8eb481b0, 0x323ba191f553be0e, 0x4d5dce762e4fd984},
	{Config{Access: OMA, Fading: Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: 5, Physical: true}, 0x8cabf2437ee9a5ea, 0x19c56b9f80feb3e1, 0x43743c5ed67fd3e1},
	{Config{Access: NOMA, Fading: Rayleigh, Repetition: 2, ExtraTx: 3, Power: 1, SNRdB: 5, Physical: true}, 0xf79123e59635ebbd, 0xd877a808a7ce2a4c, 0x500d588576f2b1c0},
	{Config{Access: OMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: -3}, 0x3c5041dc477cce9b, 0xb64ee582d0ff5c0d, 0xd49017f2fc6dcd77},
}

// checkGolden runs the links of zeroValueGolden, each changed by edit,
// and checks their hashes.
func checkGolden(t *testing.T, edit func(Config) Config) {
	t.Helper()
	for i, c := range zeroValueGolden {
		c.cfg = edit(c.cfg)
		rng := rand.New(rand.NewPCG(uint64(i), 99))
		samples := make([]*mat.Dense, 3)
		for k := range samples {
			samples[k] = gaussSamples(rng, 30, 3, float64(k+1))
		}
		rx, err := Transmit(rng, c.cfg, samples)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Retransmit(rng, c.cfg, rx, samples)
		if err != nil {
			t.Fatal(err)
		}
		b, err := NewLink(c.cfg, rx, 5).Encode()
		if err != nil {
			t.Fatal(err)
		}
		lh := fnv.New64a()
		lh.Write(b)
		if got := [3]uint64{hashRx(rx), hashRx(again), lh.Sum64()}; got != [3]uint64{c.rx, c.again, c.lnk} {
			t.Errorf("%+v: hashes %#x, want %#x", c.cfg, got, [3]uint64{c.rx, c.again, c.lnk})
		}
		if rx.Gain != nil || rx.Outage != nil || rx.Residual != nil {
			t.Errorf("%+v: zero-value models filled Gain %v, Outage %v, Residual %v", c.cfg, rx.Gain, rx.Outage != nil, rx.Residual)
		}
	}
}

// meanSE returns the mean of xs and its standard error.
func meanSE(xs []float64) (float64, float64) {
	m, sd := stat.MeanStdDev(xs, nil)
	return m, sd / math.Sqrt(float64(len(xs)))
}

// blocks sends the S rows of theta one block at a time over worker link w
// with encoder P_k, physically (zf) or by the equivalent law (eq), and
// returns per block the energy, the residual power per symbol, whether the
// block was sent, and the first residual entry (H x − t)_0.
func blocks(rng *rand.Rand, cfg Config, theta *mat.Dense, pk float64, w workerLink, physical bool) (energy, resid, first []float64, sent []bool) {
	s, d := theta.Dims()
	mr := cfg.Repetition * d
	var zf *zfLink
	var eq *equivLink
	if physical {
		zf = newZFLink(cfg, mr)
	} else {
		eq = newEquivLink(cfg, rng)
	}
	enc := basis(cfg.Repetition, d)
	enc.Scale(math.Sqrt(pk), enc)
	var tx mat.VecDense
	dst := make([]float64, mr)
	for i := range s {
		tx.MulVec(enc, mat.NewVecDense(d, theta.RawRowView(i)))
		t := tx.RawVector().Data
		clear(dst)
		var e, r float64
		var ok bool
		if physical {
			var err error
			if e, r, ok, err = zf.send(rng, dst, t, w); err != nil {
				panic(err) // a Rayleigh or moderate Rician draw is singular with probability zero
			}
		} else {
			e, r, ok = eq.send(dst, t, w)
		}
		energy = append(energy, e)
		sent = append(sent, ok)
		if ok {
			resid = append(resid, r)
			first = append(first, dst[0]-t[0])
		}
	}
	return energy, resid, first, sent
}

// TestResidualInterference: zero-forcing on Ĥ leaves (HĤ^† − I)t, whose
// power per real symbol has expectation (1 − a)² E‖t‖²/m_r + s² β E‖x‖²/κ,
// κ = 1 real, 2 complex (docs/BEYOND.md eq. (12.8)), for the additive-error
// model (a < 1) and the MMSE estimate (a = 1), physically and through the
// equivalent law; the transmit power still meets P.
func TestResidualInterference(t *testing.T) {
	const s, d, P = 6000, 2, 1.5
	rng := rand.New(rand.NewPCG(11, 12))
	theta := gaussSamples(rng, s, d, 1)
	for _, csi := range []CSI{{ErrorVar: 0.1}, {PilotLen: 8, PilotSNRdB: 5}} {
		for _, cplx := range []bool{false, true} {
			for _, physical := range []bool{true, false} {
				// m_t − m_r = 6 (real) / 4 (complex) gives ‖x‖² a finite
				// variance, so standard errors apply.
				cfg := Config{Fading: Rayleigh, Repetition: 1, ExtraTx: 6, Power: P, SNRdB: 10, CSI: csi, Complex: cplx, Physical: physical}
				if cplx {
					cfg.ExtraTx = 4
				}
				if err := cfg.Validate(); err != nil {
					t.Fatal(err)
				}
				w := cfg.workerLink(1)
				pk := cfg.powerScale(theta, w)
				energy, resid, _, _ := blocks(rng, cfg, theta, pk, w, physical)
				m2, _ := sampleNorms(theta, cfg.Repetition)
				mr := float64(cfg.Repetition * d)
				kappa := 1.0
				if cplx {
					kappa = 2
				}
				a, s2, _ := cfg.CSILaw(1)
				want := (1-a)*(1-a)*pk*m2/mr + s2*P/kappa
				got, se := meanSE(resid)
				if math.Abs(got-want) > 5*se {
					t.Errorf("%+v: residual power %g, want %g ± %g", csi, got, want, 5*se)
				}
				if e, se := meanSE(energy); math.Abs(e-P) > 5*se {
					t.Errorf("%+v complex %v: transmit power %g, want %g ± %g", csi, cplx, e, P, 5*se)
				}
				// Transmit itself reports the same residual power.
				rx, err := Transmit(rng, cfg, []*mat.Dense{theta})
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(rx.Residual[0]-want) > 5*se {
					t.Errorf("%+v: Transmit's residual power %g, want %g ± %g", csi, rx.Residual[0], want, 5*se)
				}
			}
		}
	}
}

// ksCritical is the two-sample Kolmogorov–Smirnov critical value at level
// 10⁻³: c(α) √((n+m)/(nm)), c(10⁻³) = √(−ln(α/2)/2).
func ksCritical(n, m int) float64 {
	return math.Sqrt(-math.Log(0.5e-3)/2) * math.Sqrt(float64(n+m)/float64(n*m))
}

func ks(a, b []float64) float64 {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return stat.KolmogorovSmirnov(a, nil, b, nil)
}

// TestEquivalentLawMatchesPhysical: the equivalent model (draw X, then
// a t + r with r | X Gaussian, docs/BEYOND.md eq. (12.7)) has the law of the
// physical chain: two-sample KS tests on the transmit energy, a residual
// entry and the residual power, at level 10⁻³ each, with m_t − m_r = 2
// (the paper's case, infinite-variance energy) and truncated inversion.
func TestEquivalentLawMatchesPhysical(t *testing.T) {
	const s, d = 3000, 2
	rng := rand.New(rand.NewPCG(13, 14))
	theta := gaussSamples(rng, s, d, 1)
	for _, cfg := range []Config{
		{Fading: Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, CSI: CSI{ErrorVar: 0.2}},
		{Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, CSI: CSI{PilotLen: 4, PilotSNRdB: 0}},
		{Fading: Rayleigh, Repetition: 1, ExtraTx: 1, Power: 1, Complex: true, CSI: CSI{ErrorVar: 0.2}},
		{Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, CSI: CSI{ErrorVar: 0.05}, Control: PowerControl{PeakPower: 60}},
	} {
		w := cfg.workerLink(1)
		pk := cfg.powerScale(theta, w)
		if cfg.Control.PeakPower > 0 {
			var err error
			if pk, err = cfg.truncatedScale(theta, w); err != nil {
				t.Fatal(err)
			}
			_, mx := sampleNorms(theta, cfg.Repetition)
			w.cutoff = cfg.cutoffFor(pk, mx, w)
		}
		e1, r1, f1, _ := blocks(rng, cfg, theta, pk, w, true)
		e2, r2, f2, _ := blocks(rng, cfg, theta, pk, w, false)
		for name, pair := range map[string][2][]float64{"energy": {e1, e2}, "residual entry": {f1, f2}, "residual power": {r1, r2}} {
			if dist, crit := ks(pair[0], pair[1]), ksCritical(len(pair[0]), len(pair[1])); dist > crit {
				t.Errorf("%+v: %s: KS distance %.4f between physical and equivalent, critical %.4f", cfg, name, dist, crit)
			}
		}
	}
}

// TestComplexZeroImaginaryIsReal: a complex channel A + i0 acts on the I
// and Q halves of a block as the real channel A acts on each (same
// zero-forcing output and energy), through the real representation.
func TestComplexZeroImaginaryIsReal(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	const mc, extra = 3, 2
	mtc := mc + extra
	cx := newZFLink(Config{Fading: Rayleigh, Complex: true, ExtraTx: extra, Repetition: 1}, 2*mc)
	re := newZFLink(Config{Fading: Rayleigh, ExtraTx: extra, Repetition: 1}, mc)
	w := Config{Fading: Rayleigh}.workerLink(1)
	for range 20 {
		a := make([]float64, mc*mtc)
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		complexRep(cx.h, a, make([]float64, mc*mtc), mc, mtc)
		copy(re.h.RawMatrix().Data, a)
		if !cx.factor() || !re.factor() {
			t.Fatal("singular draw")
		}
		tv := make([]float64, 2*mc)
		for i := range tv {
			tv[i] = rng.NormFloat64()
		}
		yc := make([]float64, 2*mc)
		ec, _, _ := cx.apply(yc, tv, w)
		yi := make([]float64, mc)
		yq := make([]float64, mc)
		ei, _, _ := re.apply(yi, tv[:mc], w)
		eq, _, _ := re.apply(yq, tv[mc:], w)
		want := append(yi, yq...)
		for i := range want {
			if math.Abs(yc[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
				t.Fatalf("entry %d: complex %g, real %g", i, yc[i], want[i])
			}
		}
		if math.Abs(ec-(ei+eq)) > 1e-12*ec {
			t.Fatalf("energy: complex %g, real I+Q %g", ec, ei+eq)
		}
	}
}

// TestComplexChainDelivers: on the complex channel with perfect CSI the
// physical chain delivers y = E θ + n, including the zero pad of an odd
// m_r (d = 3), for Rayleigh and Rician fading, OMA and NOMA.
func TestComplexChainDelivers(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	samples := []*mat.Dense{gaussSamples(rng, 50, 3, 1), gaussSamples(rng, 50, 3, 2)}
	for _, cfg := range []Config{
		{Access: OMA, Fading: Rayleigh, Complex: true, Repetition: 1, ExtraTx: 1, Power: 1, SNRdB: 300, Physical: true},
		{Access: NOMA, Fading: Rician, KFactor: 4, Complex: true, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: 300, Physical: true},
	} {
		rx, err := Transmit(rng, cfg, samples)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]*mat.Dense, rx.Streams())
		for k := range want {
			want[k] = mat.NewDense(rx.S, rx.Mr, nil)
		}
		for k, th := range samples {
			var tmp mat.Dense
			tmp.Mul(th, rx.Encoder(k).T())
			want[min(k, rx.Streams()-1)].Add(want[min(k, rx.Streams()-1)], &tmp)
		}
		for k := range want {
			var res mat.Dense
			res.Sub(rx.Y[k], want[k])
			if mx := mat.Norm(&res, math.Inf(1)); mx > 1e-6*mat.Norm(want[k], math.Inf(1)) {
				t.Errorf("%v %v: residual %g: not E θ", cfg.Fading, cfg.Access, mx)
			}
		}
	}
}

// TestComplexPowerMeetsP: on the complex channel the power rule uses
// E[(HHᴴ)^{-1}] = I/(m_t − m_r) (Rayleigh) or the Monte Carlo g1, g2
// (Rician, docs/BEYOND.md eq. (14.6)); the measured mean energy is P within
// its standard error and, for Rician, the table's.
func TestComplexPowerMeetsP(t *testing.T) {
	const s, d, P = 8000, 2, 2.0
	rng := rand.New(rand.NewPCG(19, 20))
	theta := gaussSamples(rng, s, d, 1)
	for _, cfg := range []Config{
		{Fading: Rayleigh, Complex: true, Repetition: 2, ExtraTx: 4, Power: P, Physical: true},
		{Fading: Rician, KFactor: 3, Complex: true, Repetition: 2, ExtraTx: 4, Power: P, Physical: true},
		{Fading: Rician, KFactor: 3, Complex: true, Repetition: 1, ExtraTx: 4, Power: P, Physical: true, CSI: CSI{PilotLen: 8, PilotSNRdB: 3}},
	} {
		w := cfg.workerLink(1)
		pk := cfg.powerScale(theta, w)
		energy, _, _, _ := blocks(rng, cfg, theta, pk, w, true)
		got, se := meanSE(energy)
		tol := 5 * se
		if cfg.Fading == Rician {
			mc, mtc := cfg.complexDims(cfg.Repetition * d)
			g := ricianTable(mc, mtc, w.mean/math.Sqrt(w.vHat))
			rel := math.Max(g[2]/g[0], g[3]/g[1])
			tol = 5 * math.Hypot(se, P*rel)
		}
		if math.Abs(got-P) > tol {
			t.Errorf("%v K=%v %+v: mean energy %g, want %g ± %g", cfg.Fading, cfg.KFactor, cfg.CSI, got, P, tol)
		}
	}
}

// TestRicianTableAtK0: at λ = 0 the Monte Carlo table must give the
// closed form g1 = g2 = 1/(m_t − m_r) of complex Rayleigh fading.
func TestRicianTableAtK0(t *testing.T) {
	for _, dims := range [][2]int{{1, 3}, {4, 6}} {
		g := ricianTable(dims[0], dims[1], 0)
		want := 1 / float64(dims[1]-dims[0])
		if math.Abs(g[0]-want) > 5*g[2] || math.Abs(g[1]-want) > 5*g[3] {
			t.Errorf("m=%d mt=%d: g1 %g ± %g, g2 %g ± %g, want %g", dims[0], dims[1], g[0], g[2], g[1], g[3], want)
		}
	}
}

// TestPathLossGains: β_k = (d_k/d_ref)^{−α} with d_k uniform from the link's
// generator, P_k carries β_k (received SNR β_k·SNR, noise N0 unchanged),
// and d_ref makes the mean per-worker SNR in dB the configured one.
func TestPathLossGains(t *testing.T) {
	const k, s, d = 5, 4000, 2
	ls := LargeScale{DMin: 2, DMax: 20, Exponent: 3}
	base := Config{Access: OMA, Fading: Flat, Repetition: 1, Power: 1, SNRdB: 5}
	cfg := base
	cfg.Gains = ls
	rng := rand.New(rand.NewPCG(21, 22))
	samples := make([]*mat.Dense, k)
	for i := range samples {
		samples[i] = gaussSamples(rng, s, d, 1)
	}
	seed := rand.NewPCG(23, 24)
	rx, err := Transmit(rand.New(seed), cfg, samples)
	if err != nil {
		t.Fatal(err)
	}
	ref := rand.New(rand.NewPCG(23, 24)) // the distances are its first draws
	flat, err := Transmit(rand.New(rand.NewPCG(1, 1)), base, samples)
	if err != nil {
		t.Fatal(err)
	}
	for i := range k {
		dist := ls.DMin + (ls.DMax-ls.DMin)*ref.Float64()
		beta := math.Pow(dist/ls.RefDistance(), -ls.Exponent)
		if math.Abs(rx.Gain[i]-beta) > 1e-12*beta || math.Abs(rx.Pk[i]-beta*flat.Pk[i]) > 1e-12*rx.Pk[i] {
			t.Fatalf("worker %d: gain %g, P_k %g; want β = %g, β·P_k = %g", i+1, rx.Gain[i], rx.Pk[i], beta, beta*flat.Pk[i])
		}
		// Measured: noise N0 (the receiver's), signal power β_k P.
		var noise, sig []float64
		for b := range s {
			for j := range d {
				tv := math.Sqrt(rx.Pk[i]) * samples[i].At(b, j)
				noise = append(noise, rx.Y[i].At(b, j)-tv)
				sig = append(sig, tv*tv)
			}
		}
		n0 := stat.Variance(noise, nil)
		if se := rx.N0 * math.Sqrt(2/float64(len(noise))); math.Abs(n0-rx.N0) > 5*se {
			t.Errorf("worker %d: noise variance %g, want N0 = %g ± %g", i+1, n0, rx.N0, 5*se)
		}
		snr := stat.Mean(sig, nil) / rx.N0
		if want := rx.WorkerSNR(i); math.Abs(snr-want) > 1e-9*want {
			t.Errorf("worker %d: received SNR %g, want β_k·SNR = %g", i+1, snr, want)
		}
	}
	// E[10 log10 β] = 0 over the distance law.
	var db []float64
	for range 20000 {
		g, _ := ls.gains(rng, 1)
		db = append(db, 10*math.Log10(g[0]))
	}
	if m, se := meanSE(db); math.Abs(m) > 5*se {
		t.Errorf("mean SNR offset %g dB, want 0 ± %g", m, 5*se)
	}
	// Retransmit keeps the gains; Realize gives an explicit list for it.
	again, err := Retransmit(rng, cfg, rx, samples)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.Gain, rx.Gain) {
		t.Errorf("retransmit changed the gains %v → %v", rx.Gain, again.Gain)
	}
	fixed, err := ls.Realize(rand.New(rand.NewPCG(23, 24)), k)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range fixed.OffsetDB {
		if math.Abs(math.Pow(10, o/10)-rx.Gain[i]) > 1e-12*rx.Gain[i] {
			t.Errorf("Realize: worker %d offset %g dB, gain %g", i+1, o, rx.Gain[i])
		}
	}
}

// TestTruncatedInversion: truncated channel inversion keeps every block
// within P_peak, meets the mean power P, and its outage frequency matches
// P(X < c) (docs/BEYOND.md eq. (15.3)), on the real channel with
// m_t − m_r = 2 (where plain inversion has infinite-variance energy) and
// on the complex one with m_t − m_r = 1, physically and by the equivalent
// law, and through Transmit (OMA; NOMA stays below P).
func TestTruncatedInversion(t *testing.T) {
	const s, d, P = 20000, 2, 1.0
	rng := rand.New(rand.NewPCG(25, 26))
	theta := gaussSamples(rng, s, d, 1)
	other := gaussSamples(rng, s, d, 1)
	for _, cfg := range []Config{
		{Access: OMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: P, SNRdB: 10},
		{Access: OMA, Fading: Rayleigh, Complex: true, Repetition: 2, ExtraTx: 1, Power: P, SNRdB: 10},
	} {
		// 20% above the least peak power that works for both workers.
		peak := 1.2 * math.Max(cfg.MinPeakPower(theta), cfg.MinPeakPower(other))
		cfg.Control.PeakPower = peak
		if _, err := cfg.truncatedScale(theta, cfg.workerLink(1)); err != nil {
			t.Fatal(err)
		}
		cfg.Control.PeakPower = 0.99 * cfg.MinPeakPower(theta)
		if _, err := cfg.truncatedScale(theta, cfg.workerLink(1)); err == nil {
			t.Errorf("complex %v: P_peak 1%% below MinPeakPower accepted", cfg.Complex)
		}
		cfg.Control.PeakPower = peak
		w := cfg.workerLink(1)
		pk, err := cfg.truncatedScale(theta, w)
		if err != nil {
			t.Fatal(err)
		}
		m2, mx := sampleNorms(theta, cfg.Repetition)
		w.cutoff = cfg.cutoffFor(pk, mx, w)
		pout := cfg.OutageProb(w.cutoff)
		// The solver: the closed-form mean energy (eq. (15.5)) at P_k is P.
		alpha, scale := cfg.costLaw()
		if mean := pk * m2 / (w.gain * w.vHat) * truncatedMean(alpha, scale, w.cutoff); math.Abs(mean-P) > 1e-9*P {
			t.Errorf("complex %v: closed-form mean energy %g at the solved P_k, want %g", cfg.Complex, mean, P)
		}
		for _, physical := range []bool{true, false} {
			energy, _, _, sent := blocks(rng, cfg, theta, pk, w, physical)
			if top := slices.Max(energy); top > peak*(1+1e-12) {
				t.Errorf("complex %v physical %v: block energy %g above P_peak %g", cfg.Complex, physical, top, peak)
			}
			if m, se := meanSE(energy); math.Abs(m-P) > 5*se {
				t.Errorf("complex %v physical %v: mean energy %g, want %g ± %g", cfg.Complex, physical, m, P, 5*se)
			}
			lost := 0
			for _, ok := range sent {
				if !ok {
					lost++
				}
			}
			if se := math.Sqrt(pout * (1 - pout) / s); math.Abs(float64(lost)/s-pout) > 5*se {
				t.Errorf("complex %v physical %v: outage %g, want %g ± %g", cfg.Complex, physical, float64(lost)/s, pout, 5*se)
			}
		}
		// Through Transmit: two workers, OMA meets P, NOMA (common, smaller
		// encoder) does not exceed it.
		for _, acc := range []Access{OMA, NOMA} {
			cfg.Access = acc
			cfg.Physical = acc == NOMA
			rx, err := Transmit(rng, cfg, []*mat.Dense{theta, other})
			if err != nil {
				t.Fatal(err)
			}
			for k := range 2 {
				lost := 0
				for _, o := range rx.Outage[k] {
					if o {
						lost++
					}
				}
				// A bound on the energy's SE: it lies in [0, P_peak].
				se := peak / 2 / math.Sqrt(s)
				if acc == OMA && math.Abs(rx.TxPower[k]-P) > 5*se || rx.TxPower[k] > P+5*se {
					t.Errorf("%v complex %v worker %d: mean power %g, want P = %g (± %g)", acc, cfg.Complex, k+1, rx.TxPower[k], P, 5*se)
				}
				if acc == OMA && k == 0 {
					if se := math.Sqrt(pout * (1 - pout) / s); math.Abs(float64(lost)/s-pout) > 5*se {
						t.Errorf("Transmit: outage %g, want %g ± %g", float64(lost)/s, pout, 5*se)
					}
				}
			}
		}
	}
}

// TestDelivered: outage blocks are removed per worker under OMA (streams
// cut to the smallest count) and for every worker under NOMA.
func TestDelivered(t *testing.T) {
	y := func() *mat.Dense { return mat.NewDense(4, 1, []float64{0, 1, 2, 3}) }
	oma := &Received{Access: OMA, K: 2, S: 4, D: 1, Mr: 1, L: 1, Y: []*mat.Dense{y(), y()},
		Outage: [][]bool{{false, true, false, false}, {true, false, true, false}}}
	got, err := oma.Delivered()
	if err != nil {
		t.Fatal(err)
	}
	if got.S != 2 || got.Outage != nil || !slices.Equal(got.Y[0].RawMatrix().Data, []float64{0, 2}) || !slices.Equal(got.Y[1].RawMatrix().Data, []float64{1, 3}) {
		t.Errorf("OMA: S = %d, streams %v %v", got.S, got.Y[0].RawMatrix().Data, got.Y[1].RawMatrix().Data)
	}
	noma := &Received{Access: NOMA, K: 2, S: 4, D: 1, Mr: 1, L: 1, Y: []*mat.Dense{y()}, Outage: oma.Outage}
	if got, err = noma.Delivered(); err != nil || got.S != 1 || got.Y[0].At(0, 0) != 3 {
		t.Errorf("NOMA: %v, %+v", err, got)
	}
	noma.Outage = [][]bool{{true, true, true, true}, {false, false, false, false}}
	if _, err := noma.Delivered(); err == nil {
		t.Error("NOMA with every block lost: no error")
	}
	if got, _ := (&Received{S: 4}).Delivered(); got.S != 4 {
		t.Error("no outage: not returned as is")
	}
	part := oma.Rows(1, 3)
	if !slices.Equal(part.Outage[1], []bool{false, true}) {
		t.Errorf("Rows: outage %v", part.Outage)
	}
}

func TestValidateBeyond(t *testing.T) {
	ray := Config{Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1}
	with := func(f func(*Config)) Config {
		c := ray
		f(&c)
		return c
	}
	for want, c := range map[string]Config{
		"σ_e² = -0.1":                             with(func(c *Config) { c.CSI.ErrorVar = -0.1 }),
		"σ_e² = NaN":                              with(func(c *Config) { c.CSI.ErrorVar = math.NaN() }),
		"pilot length L_p = -1":                   with(func(c *Config) { c.CSI.PilotLen = -1 }),
		"without a pilot length":                  with(func(c *Config) { c.CSI.PilotSNRdB = 10 }),
		"both given":                              with(func(c *Config) { c.CSI = CSI{ErrorVar: 0.1, PilotLen: 4} }),
		"imperfect CSI with flat fading":          with(func(c *Config) { c.Fading, c.CSI.ErrorVar = Flat, 0.1 }),
		"empty list":                              with(func(c *Config) { c.Gains.OffsetDB = []float64{} }),
		"offset of worker 2 = +Inf":               with(func(c *Config) { c.Gains.OffsetDB = []float64{0, math.Inf(1)} }),
		"choose one":                              with(func(c *Config) { c.Gains = LargeScale{OffsetDB: []float64{0}, DMin: 1, DMax: 2} }),
		"need 0 < d_min":                          with(func(c *Config) { c.Gains = LargeScale{DMin: 0, DMax: 2, Exponent: 3} }),
		"d_max = 1 < d_min = 2":                   with(func(c *Config) { c.Gains = LargeScale{DMin: 2, DMax: 1, Exponent: 3} }),
		"exponent α = -1":                         with(func(c *Config) { c.Gains = LargeScale{DMin: 1, DMax: 2, Exponent: -1} }),
		"K-factor = -1":                           with(func(c *Config) { c.Fading, c.Complex, c.KFactor = Rician, true, -1 }),
		"K-factor = 1e+40: must be in [0, 1e+06]": with(func(c *Config) { c.Fading, c.Complex, c.KFactor = Rician, true, 1e40 }),
		"σ_e² = 1e+300: must be in [0, 1e+10]":    with(func(c *Config) { c.CSI.ErrorVar = 1e300 }),
		"offset of worker 1 = 1e+300 dB":          with(func(c *Config) { c.Gains.OffsetDB = []float64{1e300, 0} }),
		"pilot SNR = -1e+300 dB":                  with(func(c *Config) { c.CSI = CSI{PilotLen: 8, PilotSNRdB: -1e300} }),
		"used only by rician":                     with(func(c *Config) { c.KFactor = 2 }),
		"set complex":                             with(func(c *Config) { c.Fading = Rician }),
		"≥ 2 for Rician":                          with(func(c *Config) { c.Fading, c.Complex, c.ExtraTx = Rician, true, 1 }),
		"≥ 1 for complex Rayleigh":                with(func(c *Config) { c.Complex, c.ExtraTx = true, 0 }),
		"P_peak = -1":                             with(func(c *Config) { c.Control.PeakPower = -1 }),
		"is not above the mean power":             with(func(c *Config) { c.Control.PeakPower = 0.5 }),
		"needs rayleigh fading":                   with(func(c *Config) { c.Fading, c.Control.PeakPower = Flat, 2 }),
		"outage law is closed-form there":         with(func(c *Config) { c.Fading, c.Complex, c.Control.PeakPower = Rician, true, 2 }),
	} {
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: error %v, want one mentioning %q", c, err, want)
		}
	}
	// Errors that need the samples.
	rng := rand.New(rand.NewPCG(27, 28))
	two := []*mat.Dense{gaussSamples(rng, 20, 3, 1), gaussSamples(rng, 20, 3, 1)}
	for want, c := range map[string]Config{
		"1 entries for K = 2 workers":        with(func(c *Config) { c.Gains.OffsetDB = []float64{3} }),
		"orthogonal pilots need L_p ≥":       with(func(c *Config) { c.CSI = CSI{PilotLen: 4, PilotSNRdB: 10} }),
		"truncated inversion needs P_peak ≥": with(func(c *Config) { c.Control.PeakPower = 1.01 }),
	} {
		if _, err := Transmit(rng, c, two); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: error %v, want one mentioning %q", c, err, want)
		}
	}
}

// TestBeyondLimits: the models beyond the paper transmit at the edges of
// their ranges (MaxKFactor, MaxCSIError, ±MaxOffsetDB, ±MaxPilotDB) with a
// finite power scale P_k.
func TestBeyondLimits(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	two := []*mat.Dense{gaussSamples(rng, 20, 3, 1), gaussSamples(rng, 20, 3, 1)}
	base := Config{Access: OMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: 10, Physical: true}
	for name, f := range map[string]func(*Config){
		"K-factor":    func(c *Config) { c.Fading, c.Complex, c.KFactor = Rician, true, MaxKFactor },
		"CSI error":   func(c *Config) { c.CSI.ErrorVar = MaxCSIError },
		"offsets":     func(c *Config) { c.Gains.OffsetDB = []float64{MaxOffsetDB, -MaxOffsetDB} },
		"low pilots":  func(c *Config) { c.CSI = CSI{PilotLen: 8, PilotSNRdB: -MaxPilotDB} },
		"high pilots": func(c *Config) { c.CSI = CSI{PilotLen: 8, PilotSNRdB: MaxPilotDB} },
	} {
		c := base
		f(&c)
		rx, err := Transmit(rng, c, two)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for k, p := range rx.Pk {
			if !(p > 0) || math.IsInf(p, 0) {
				t.Errorf("%s: P_%d = %v", name, k+1, p)
			}
		}
	}
}

// TestDrawGivesUp: a Rician K-factor far above MaxKFactor makes every
// draw of H exactly rank one; draw reports it instead of redrawing forever.
func TestDrawGivesUp(t *testing.T) {
	c := Config{Fading: Rician, Complex: true, ExtraTx: 2, Repetition: 1, KFactor: 1e40}
	z := newZFLink(c, 4)
	if err := z.draw(rand.New(rand.NewPCG(33, 34)), c.workerLink(1)); !errors.Is(err, errSingular) {
		t.Fatalf("K = 1e40: draw error %v, want errSingular", err)
	}
	c.KFactor = MaxKFactor
	if err := z.draw(rand.New(rand.NewPCG(33, 34)), c.workerLink(1)); err != nil {
		t.Fatalf("K = MaxKFactor: %v", err)
	}
	// Pilots at −100 dB and a gain of −100 dB: the MMSE estimate of a
	// K = 10⁶ channel is its line of sight alone up to rounding, nearly
	// every draw rank one. Transmit reports it, naming the block.
	c.CSI = CSI{PilotLen: 8, PilotSNRdB: -MaxPilotDB}
	c.Gains.OffsetDB = []float64{-MaxOffsetDB}
	c.Power, c.Physical, c.Repetition = 1, true, 2
	rng := rand.New(rand.NewPCG(35, 36))
	if _, err := Transmit(rng, c, []*mat.Dense{gaussSamples(rng, 200, 3, 1)}); !errors.Is(err, errSingular) || !strings.Contains(err.Error(), "worker 1, block ") {
		t.Fatalf("weak pilots of a K = MaxKFactor channel: error %v, want errSingular naming worker 1's block", err)
	}
}

// TestLinkRoundTripBeyond: gains, outage marks and residual powers survive
// link.json.
func TestLinkRoundTripBeyond(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	samples := []*mat.Dense{gaussSamples(rng, 40, 2, 1), gaussSamples(rng, 40, 2, 2)}
	cfg := Config{Access: OMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: 10,
		CSI: CSI{ErrorVar: 0.1}, Gains: LargeScale{OffsetDB: []float64{-3, 3}}, Control: PowerControl{PeakPower: 30}}
	rx, err := Transmit(rng, cfg, samples)
	if err != nil {
		t.Fatal(err)
	}
	data, err := NewLink(cfg, rx, 1).Encode()
	if err != nil {
		t.Fatal(err)
	}
	l, err := ParseLink(data)
	if err != nil {
		t.Fatal(err)
	}
	back, err := l.Received(rx.Y, l.Signals)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Gain, rx.Gain) || !slices.Equal(back.Residual, rx.Residual) || l.CSIError != 0.1 || l.PeakPower != 30 {
		t.Errorf("round trip: gain %v residual %v, link %+v", back.Gain, back.Residual, l)
	}
	for k := range rx.Outage {
		if !slices.Equal(back.Outage[k], rx.Outage[k]) {
			t.Errorf("worker %d: outage %v, want %v", k+1, back.Outage[k], rx.Outage[k])
		}
	}
	bad := strings.Replace(string(data), `"gain": [`, `"gain": [-1, `, 1)
	if _, err := ParseLink([]byte(bad)); err == nil {
		t.Error("negative gain accepted")
	}
}

// truncatedMean returns E[1/X; X ≥ c] = Q(α − 1, c/θ)/((α − 1) θ), Q the
// regularised upper incomplete gamma, for α > 1.
func truncatedMean(alpha, scale, cutoff float64) float64 {
	return mathext.GammaIncRegComp(alpha-1, cutoff/scale) / ((alpha - 1) * scale)
}
