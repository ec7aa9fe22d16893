package digital

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/wcmc-project/wcmc/channel"
)

// TestPracticalZeroIsIdeal: a gap of 0 dB, no block length and coherence 1,
// set explicitly, are the ideal links bit for bit (the recorded hashes of
// TestIdealDigitalGolden).
func TestPracticalZeroIsIdeal(t *testing.T) {
	checkIdealGolden(t, func(l Link) Link {
		l.GapDB, l.BlockLength, l.ErrorProb = 0, 0, 0
		l.Channel.Coherence = 1
		return l
	})
}

// The dispersion is the variance of the information density
// i = ½ log2(1 + x) + (log2 e/2)(y²/(1 + x) − z²) of the real AWGN channel
// y = √x + z given an input of power x (z ~ N(0, 1)), and its mean is the
// capacity: both within 4 Monte Carlo standard errors over 400,000 draws.
func TestDispersionMonteCarlo(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const n = 400000
	for _, x := range []float64{0.1, 1, 10} {
		dens := make([]float64, n)
		for i := range dens {
			z := rng.NormFloat64()
			y := math.Sqrt(x) + z
			dens[i] = 0.5*math.Log2(1+x) + log2e/2*(y*y/(1+x)-z*z)
		}
		mean, v := stat.MeanVariance(dens, nil)
		if se := math.Sqrt(v / n); math.Abs(mean-0.5*math.Log2(1+x)) > 4*se {
			t.Errorf("x = %v: mean information density %v, capacity %v ± %v", x, mean, 0.5*math.Log2(1+x), 4*se)
		}
		// Var of a sample variance ≈ (μ4 − σ⁴)/n.
		var m4 float64
		for _, d := range dens {
			m4 += math.Pow(d-mean, 4) / n
		}
		if se := math.Sqrt((m4 - v*v) / n); math.Abs(v-Dispersion(x)) > 4*se {
			t.Errorf("x = %v: variance of the information density %v, Dispersion %v ± %v", x, v, Dispersion(x), 4*se)
		}
	}
}

// The normal approximation by hand at 0 dB, n = 1000, ε = 10⁻³: C = ½,
// V = (3/8) log2²e, Q⁻¹(10⁻³) = 3.090232306167813, so
// R = ½ − √(V/1000)·3.0902 + log2(1000)/2000 = 0.41864 bits per use. It
// tends to capacity as n grows, rises with ε, and stays within [0, C].
func TestNormalApproxByHand(t *testing.T) {
	want := 0.5 - math.Sqrt(0.375*log2e*log2e/1000)*3.090232306167813 + math.Log2(1000)/2000
	if got := NormalApprox(1, 1000, 1e-3); math.Abs(got-want) > 1e-12 || math.Abs(got-0.41864) > 1e-5 {
		t.Errorf("NormalApprox(1, 1000, 1e-3) = %v, want %v", got, want)
	}
	if got := NormalApprox(1, 0, 0); got != 0.5 {
		t.Errorf("n = ∞: %v, want ½", got)
	}
	prev := 0.0
	for _, n := range []int{100, 1000, 10000, 100000, 10000000} {
		r := NormalApprox(3, n, 1e-3)
		if r <= prev || r >= 0.5*math.Log2(4) {
			t.Errorf("n = %d: rate %v, want above %v and below capacity", n, r, prev)
		}
		prev = r
	}
	if math.Abs(prev-1) > 2e-3 {
		t.Errorf("n = 10⁷: %v, want near capacity 1", prev)
	}
	if NormalApprox(3, 1000, 1e-2) <= NormalApprox(3, 1000, 1e-5) {
		t.Errorf("a larger error probability should allow a larger rate")
	}
	if r := NormalApprox(1e-4, 100, 1e-3); r < 0 || r > 0.5*math.Log2(1+1e-4) {
		t.Errorf("at −40 dB: %v, outside [0, C]", r)
	}
}

// The practical rates in closed form on the AWGN block: OMA
// (n_r/2) log2(1 + SNR/Γ) with a gap, n_r·NormalApprox(SNR, n, ε) with a
// block length, both with both; NOMA min_n (n_r/n)·NormalApprox(n·SNR/Γ, n, ε)
// over the n weakest of equal-gain workers.
func TestPracticalRates(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	const k, s, d = 3, 200, 2
	samples := workers(rng, k, s, d)
	snr := math.Pow(10, 0.8) // 8 dB
	gamma := math.Pow(10, 0.153)
	for _, c := range []struct {
		access   channel.Access
		gap      float64
		n        int
		eps      float64
		wantBits float64
	}{
		{channel.OMA, 1.53, 0, 0, 2 * 0.5 * math.Log2(1+snr/gamma)},
		{channel.OMA, 0, 300, 1e-3, 2 * NormalApprox(snr, 300, 1e-3)},
		{channel.OMA, 1.53, 400, 1e-4, 2 * NormalApprox(snr/gamma, 400, 1e-4)},
		{channel.NOMA, 1.53, 400, 1e-3, math.Min(2*NormalApprox(snr/gamma, 400, 1e-3),
			math.Min(2*NormalApprox(2*snr/gamma, 400, 1e-3)/2, 2*NormalApprox(3*snr/gamma, 400, 1e-3)/3))},
	} {
		l := Link{Channel: channel.Config{Access: c.access, Repetition: 1, Power: 1, SNRdB: 8}, Quantizer: TestChannel{}, GapDB: c.gap, BlockLength: c.n, ErrorProb: c.eps}
		_, b, err := l.Send(rng, samples)
		if err != nil {
			t.Fatal(err)
		}
		for w, wb := range b.Workers {
			if math.Abs(wb.Capacity-c.wantBits) > 1e-12 {
				t.Errorf("%v gap %v n %d: worker %d carries %v bits per sample, want %v", c.access, c.gap, c.n, w+1, wb.Capacity, c.wantBits)
			}
		}
	}
}

// Digital under imperfect CSI, against an independent simulation: Gaussian
// symbols sent through the physical chain (channel.Transmit, zero-forcing
// on the estimate, both estimate models) give the linear signal-to-
// interference-plus-noise ratio Cov(y, t)²/(Var t·Var y − Cov(y, t)²) per
// symbol that the rate (16.9) assumes, a² v̂ β SNR/g / (1 + s² β P/(κ N0)),
// within 4 standard errors (batch means); the capacity is (m_r/2) log2 of
// one plus it.
func TestImperfectCSIRateMatchesSimulation(t *testing.T) {
	const d, s, batches = 2, 40000, 20
	for _, cfg := range []channel.Config{
		{Access: channel.OMA, Fading: channel.Rayleigh, ExtraTx: 6, Repetition: 1, Power: 1, SNRdB: 15, Physical: true, CSI: channel.CSI{ErrorVar: 0.05}},
		{Access: channel.OMA, Fading: channel.Rayleigh, ExtraTx: 6, Repetition: 1, Power: 2, SNRdB: 10, Physical: true, CSI: channel.CSI{PilotLen: 8, PilotSNRdB: 5}, Gains: channel.LargeScale{OffsetDB: []float64{-2}}},
	} {
		rng := rand.New(rand.NewPCG(45, 46))
		theta := mat.NewDense(s, d, nil)
		for i := range s {
			for j := range d {
				theta.Set(i, j, rng.NormFloat64())
			}
		}
		rx, err := channel.Transmit(rng, cfg, []*mat.Dense{theta})
		if err != nil {
			t.Fatal(err)
		}
		sinr := make([]float64, batches)
		per := s / batches
		for bt := range batches {
			var sty, stt, syy float64
			for i := bt * per; i < (bt+1)*per; i++ {
				for j := range d {
					tv := math.Sqrt(rx.Pk[0]) * theta.At(i, j)
					yv := rx.Y[0].At(i, j)
					sty += tv * yv
					stt += tv * tv
					syy += yv * yv
				}
			}
			sinr[bt] = sty * sty / (stt*syy - sty*sty)
		}
		mean, sd := stat.MeanStdDev(sinr, nil)
		se := sd / math.Sqrt(batches)
		beta := 1.0
		if rx.Gain != nil {
			beta = rx.Gain[0]
		}
		eff := effectiveGains(cfg, []float64{beta}, d)[0]
		snr := cfg.Power / (float64(d) * cfg.N0(d))
		want := eff * snr / cfg.InvGramMean()
		t.Logf("%+v: measured SINR %.4f ± %.4f, formula %.4f", cfg.CSI, mean, se, want)
		if math.Abs(mean-want) > 4*se {
			t.Errorf("%+v: measured SINR %v ± %v, (16.9) gives %v", cfg.CSI, mean, se, want)
		}
		_, b, err := Link{Channel: cfg, Quantizer: TestChannel{}}.Send(rng, []*mat.Dense{theta})
		if err != nil {
			t.Fatal(err)
		}
		if got := b.Workers[0].Capacity; math.Abs(got-float64(d)/2*math.Log2(1+want)) > 1e-12 {
			t.Errorf("%+v: %v bits per sample, want %v", cfg.CSI, got, float64(d)/2*math.Log2(1+want))
		}
	}
}

// Under NOMA with imperfect CSI every worker's residual is noise to all:
// equal-gain workers get min_n (n_r/(2n)) log2(1 + n G SNR/(g(1 + K·I))).
func TestImperfectCSINOMA(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 48))
	const k, s, d = 3, 50, 2
	cfg := channel.Config{Access: channel.NOMA, Fading: channel.Rayleigh, ExtraTx: 2, Repetition: 1, Power: 1, SNRdB: 10, CSI: channel.CSI{ErrorVar: 0.02}}
	_, b, err := Link{Channel: cfg, Quantizer: AdditiveNoise{}}.Send(rng, workers(rng, k, s, d))
	if err != nil {
		t.Fatal(err)
	}
	a, s2, vHat := cfg.CSILaw(1)
	snr := 10.0
	inr := float64(k) * s2 * cfg.Power / cfg.N0(d)
	want := math.Inf(1)
	for n := 1; n <= k; n++ {
		want = math.Min(want, float64(d)/(2*float64(n))*math.Log2(1+float64(n)*a*a*vHat*snr/cfg.InvGramMean()/(1+inr)))
	}
	for w, wb := range b.Workers {
		if math.Abs(wb.Capacity-want) > 1e-12 {
			t.Errorf("worker %d: %v bits per sample, want %v", w+1, wb.Capacity, want)
		}
	}
}

// Charged pilots leave S' of the S blocks to the samples' bits
// (channel.Config.SplitBudget, MATH.md (20.3)), at the rate of the pilots'
// MMSE estimate (σ² = 1/(β L_p ρ_p), ρ_p the data SNR): the bits per
// sample are S'/S times (16.9) with that CSI, under OMA and NOMA.
func TestPilotsChargeDigital(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 50))
	const k, s, d = 4, 60, 2
	samples := workers(rng, k, s, d)
	for _, access := range []channel.Access{channel.OMA, channel.NOMA} {
		cfg := channel.Config{Access: access, Fading: channel.Rayleigh, ExtraTx: 2, Repetition: 1, Power: 1, SNRdB: 10, Coherence: 5, Pilots: channel.Pilots{On: true}}
		_, b, err := Link{Channel: cfg, Quantizer: TestChannel{}}.Send(rng, samples)
		if err != nil {
			t.Fatal(err)
		}
		split, err := cfg.SplitBudget(k, s, d)
		if err != nil {
			t.Fatal(err)
		}
		if b.Pilots == nil || *b.Pilots != split {
			t.Fatalf("%v: pilot budget %+v, want %+v", access, b.Pilots, split)
		}
		free := cfg
		free.Pilots = channel.Pilots{}
		free.CSI = channel.CSI{PilotLen: 4, PilotSNRdB: 10} // L_p = m_t = 4 at the data SNR
		_, ref, err := Link{Channel: free, Quantizer: TestChannel{}}.Send(rng, samples)
		if err != nil {
			t.Fatal(err)
		}
		for w := range k {
			want := ref.Workers[w].Capacity * float64(split.Samples) / s
			if got := b.Workers[w].Capacity; math.Abs(got-want) > 1e-12 {
				t.Errorf("%v worker %d: %v bits per sample, want %v (S' = %d of %d)", access, w+1, got, want, split.Samples, s)
			}
		}
	}
}

// Block fading: the zero-forcing rate does not depend on the draws, so
// coherence leaves it as it is; the isotropic rate of a worker whose S
// blocks share one channel (T_c = S) is one draw of ½ log2(1 + ρχ²_{m_t})
// (m_r = 1), so across workers its mean is the same as with T_c = 1 and
// its variance S times larger (both within 4 standard errors).
func TestBlockFadingDigital(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	const k, s, d = 600, 8, 1
	samples := workers(rng, k, s, d)
	base := channel.Config{Access: channel.OMA, Fading: channel.Rayleigh, ExtraTx: 3, Repetition: 1, Power: 1, SNRdB: 5}
	send := func(mode Capacity, tc int) []float64 {
		cfg := base
		cfg.Coherence = tc
		_, b, err := Link{Channel: cfg, Capacity: mode, Quantizer: TestChannel{}}.Send(rand.New(rand.NewPCG(53, 54)), samples)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, k)
		for w, wb := range b.Workers {
			out[w] = wb.Capacity
		}
		return out
	}
	zf1, zf8 := send(ZeroForcing, 1), send(ZeroForcing, s)
	for w := range k {
		if zf1[w] != zf8[w] {
			t.Fatalf("worker %d: zf rate %v at T_c = 1, %v at T_c = %d", w+1, zf1[w], zf8[w], s)
		}
	}
	_, mt := base.Dims(d)
	rho := base.Power / (float64(mt) * base.N0(d))
	chi := distuv.ChiSquared{K: float64(mt)}
	f := func(x float64) float64 { return math.Log2(1+rho*x) / 2 }
	mean := quad.Fixed(func(x float64) float64 { return f(x) * chi.Prob(x) }, 0, 200, 400, nil, 0)
	central := func(p float64) float64 {
		return quad.Fixed(func(x float64) float64 { return math.Pow(f(x)-mean, p) * chi.Prob(x) }, 0, 200, 400, nil, 0)
	}
	v, mu4 := central(2), central(4)
	for _, tc := range []int{1, s} {
		caps := send(Isotropic, tc)
		m, vv := stat.MeanVariance(caps, nil)
		// A worker's rate is the mean of n = S/T_c independent draws of f:
		// variance v/n, fourth central moment (μ4 + 3(n − 1)v²)/n³.
		n := float64(s / tc)
		wantVar, want4 := v/n, (mu4+3*(n-1)*v*v)/(n*n*n)
		if se := math.Sqrt(wantVar / k); math.Abs(m-mean) > 4*se {
			t.Errorf("T_c = %d: mean rate %v, want %v ± %v", tc, m, mean, 4*se)
		}
		if se := math.Sqrt((want4 - wantVar*wantVar) / k); math.Abs(vv-wantVar) > 4*se {
			t.Errorf("T_c = %d: variance of the rate across workers %v, want %v ± %v", tc, vv, wantVar, 4*se)
		}
	}
}

// The practical options' refusals.
func TestPracticalRefusals(t *testing.T) {
	rng := rand.New(rand.NewPCG(55, 56))
	samples := workers(rng, 2, 20, 2)
	flat := channel.Config{Access: channel.OMA, Repetition: 1, Power: 1, SNRdB: 5}
	ray := channel.Config{Access: channel.OMA, Fading: channel.Rayleigh, ExtraTx: 2, Repetition: 1, Power: 1, SNRdB: 5}
	csi := ray
	csi.CSI.ErrorVar = 0.1
	for _, c := range []struct {
		link Link
		want string
	}{
		{Link{Channel: flat, GapDB: -1}, "SNR gap"},
		{Link{Channel: flat, GapDB: math.Inf(1)}, "SNR gap"},
		{Link{Channel: flat, BlockLength: -3}, "block length -3"},
		{Link{Channel: flat, ErrorProb: 0.01}, "without a block length"},
		{Link{Channel: flat, BlockLength: 20, ErrorProb: 0.7}, "must be in (0, 0.5)"},
		{Link{Channel: ray, Capacity: Isotropic, BlockLength: 20, ErrorProb: 1e-3}, "finite block length with isotropic"},
		{Link{Channel: csi, Capacity: Isotropic}, "imperfect CSI with isotropic"},
		{Link{Channel: flat, BlockLength: 41, ErrorProb: 1e-3}, "exceeds the 40 real channel uses"},
	} {
		c.link.Quantizer = TestChannel{}
		if _, _, err := c.link.Send(rng, samples); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error containing %q", c.link, err, c.want)
		}
	}
}
