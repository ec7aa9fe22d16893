package channel

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// farSamples draws s rows of N(m, c I) (d = len(m)).
func farSamples(rng *rand.Rand, s int, m []float64, c float64) *mat.Dense {
	x := mat.NewDense(s, len(m), nil)
	for i := range s {
		for j, mj := range m {
			x.Set(i, j, mj+math.Sqrt(c)*rng.NormFloat64())
		}
	}
	return x
}

// The mean's code: the Elias gamma code of the zigzag index, 2⌊log2(z+1)⌋ + 1 bits.
func TestIntBits(t *testing.T) {
	for _, c := range []struct {
		q    int64
		bits int
	}{{0, 1}, {-1, 3}, {1, 3}, {-2, 5}, {2, 5}, {-3, 5}, {3, 5}, {-4, 7}, {4, 7}, {-1000, 21}} {
		if got := IntBits(c.q); got != c.bits {
			t.Errorf("IntBits(%d) = %d, want %d", c.q, got, c.bits)
		}
	}
}

// The dithered quantiser's error is uniform on [−Δ/2, Δ/2] whatever the
// mean, with Δ²/12 in (ε v/4, ε v]: its mean and variance match 0 and
// Δ²/12 within 4 standard errors over n draws (the variance of e² for a
// uniform error is Δ⁴/180). A zero mean costs 1 bit per coordinate beyond
// the step's exponent.
func TestQuantizeMean(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const v, n = 0.37, 50000
	m := []float64{12.3456, -0.001, 3e3, 0}
	var sum, sq float64
	var step float64
	for range n / len(m) {
		mhat, st, _, err := QuantizeMean(rng, m, v)
		if err != nil {
			t.Fatal(err)
		}
		step = st
		for i, x := range mhat {
			e := x - m[i]
			if math.Abs(e) > st/2 {
				t.Fatalf("error %g beyond half the step %g", e, st/2)
			}
			sum += e
			sq += e * e
		}
	}
	if q := step * step / 12; q > CentreMeanErr*v || q <= CentreMeanErr*v/4 {
		t.Errorf("error variance Δ²/12 = %g, want in (%g, %g]", q, CentreMeanErr*v/4, CentreMeanErr*v)
	}
	mean, variance := sum/n, sq/n
	if se := step / math.Sqrt(12*n); math.Abs(mean) > 4*se {
		t.Errorf("mean error %g, want 0 ± %g", mean, 4*se)
	}
	if want, se := step*step/12, step*step/math.Sqrt(180*n); math.Abs(variance-want) > 4*se {
		t.Errorf("error variance %g, want Δ²/12 = %g ± %g", variance, want, 4*se)
	}
	_, st, bits, err := QuantizeMean(rng, make([]float64, 5), v)
	if err != nil {
		t.Fatal(err)
	}
	if want := IntBits(int64(math.Log2(st))) + 5; bits != want {
		t.Errorf("a zero mean of d = 5 costs %d bits, want %d", bits, want)
	}
	for _, bad := range []float64{0, math.Inf(1), math.NaN()} {
		if _, _, _, err := QuantizeMean(rng, m, bad); err == nil {
			t.Errorf("variance %v: no error", bad)
		}
	}
}

// The channel uses are charged exactly: worker k's mean takes
// ⌈b_k/c_k⌉ blocks at the zero-forcing rate c_k of its link (b_k ≤ n_k c_k
// < b_k + c_k), and the samples get the rest of the budget: under OMA
// K·S' + Σ n_k + idle = K·S with 0 ≤ idle < K, under NOMA S' + Σ n_k = S.
// The signals carry the first S' rows minus the centre m_k, the mean of all
// S rows; P_k is the power rule on those fluctuations; m̂_k is within
// Δ_k/2 of m_k per coordinate.
func TestCentreBudget(t *testing.T) {
	for i, cfg := range []Config{
		{Access: OMA, Fading: Flat, Repetition: 1, Power: 1, SNRdB: 0, Centre: true},
		{Access: NOMA, Fading: Flat, Repetition: 2, Power: 2, SNRdB: 10, Centre: true},
		{Access: OMA, Fading: Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: 5, Physical: true, Centre: true,
			Gains: LargeScale{OffsetDB: []float64{-3, 0, 3}}},
		{Access: NOMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 3, Power: 1, SNRdB: 20, Complex: true, Centre: true},
		{Access: OMA, Fading: Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: 5, Physical: true, Centre: true, RxAntennas: 3},
		{Access: NOMA, Fading: Flat, Repetition: 1, Power: 1, SNRdB: 0, Centre: true, RxAntennas: 2},
	} {
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		const s, d = 300, 3
		samples := make([]*mat.Dense, 3)
		for k := range samples {
			samples[k] = farSamples(rng, s, []float64{float64(4 * k), -5, 2}, 0.02*float64(k+1))
		}
		rx, err := Transmit(rng, cfg, samples)
		if err != nil {
			t.Fatalf("%+v: %v", cfg, err)
		}
		used, idle := rx.MeanUses()
		var sum int
		for k, n := range rx.MeanBlocks {
			gain := 1.0
			if rx.Gain != nil {
				gain = rx.Gain[k]
			}
			c := cfg.BlockBits(d, gain)
			if b := float64(rx.MeanBits[k]); b > float64(n)*c || float64(n)*c >= b+c {
				t.Errorf("%+v: worker %d: %v bits in %d blocks of %.4g bits", cfg, k+1, b, n, c)
			}
			sum += n
		}
		if sum != used || rx.Budget != s {
			t.Errorf("%+v: MeanUses %d, blocks %v; budget %d, want %d", cfg, used, rx.MeanBlocks, rx.Budget, s)
		}
		if cfg.Access == OMA {
			if rx.K*rx.S+used+idle != rx.K*s || idle < 0 || idle >= rx.K {
				t.Errorf("%+v: K·S' + Σn_k + idle = %d·%d + %d + %d, want K·S = %d with 0 ≤ idle < K", cfg, rx.K, rx.S, used, idle, rx.K*s)
			}
		} else if rx.S+used != s || idle != 0 {
			t.Errorf("%+v: S' + Σn_k = %d + %d, idle %d, want S = %d", cfg, rx.S, used, idle, s)
		}
		if r, _ := rx.Y[0].Dims(); r != rx.S || rx.S >= s {
			t.Errorf("%+v: %d signal rows, S' = %d of %d", cfg, r, rx.S, s)
		}
		for k, x := range samples {
			m, v := meanMinVar(x)
			for j := range m {
				if m[j] != rx.Centre[k][j] || math.Abs(rx.Mean[k][j]-m[j]) > math.Sqrt(3*rx.MeanVar[k]) {
					t.Errorf("%+v: worker %d: centre %v, decoded %v, want %v within Δ/2 = %g", cfg, k+1, rx.Centre[k], rx.Mean[k], m, math.Sqrt(3*rx.MeanVar[k]))
					break
				}
			}
			if mv := rx.MeanVar[k]; mv > CentreMeanErr*v || mv <= CentreMeanErr*v/4 {
				t.Errorf("%+v: worker %d: mean error variance %g, want in (ε v/4, ε v] with v = %g", cfg, k+1, mv, v)
			}
			if cfg.Access == OMA {
				gain := 1.0
				if rx.Gain != nil {
					gain = rx.Gain[k]
				}
				w := cfg.workerLink(gain)
				if cfg.rxAntennas() > 1 {
					w.rxGram = cfg.CombinedInvGram(d, 1) // the combined channel's g (docs/MATH.md (21.4))
				}
				want := cfg.powerScale(fluctuations([]*mat.Dense{x}, [][]float64{m}, rx.S)[0], w)
				if math.Abs(rx.Pk[k]/want-1) > 1e-12 {
					t.Errorf("%+v: worker %d: P_k = %g, want the power rule on the fluctuations %g", cfg, k+1, rx.Pk[k], want)
				}
			}
		}
	}
}

// Centring raises the fluctuations' effective SNR by E‖θ‖²/E‖θ − m‖²:
// the power rule spends P on the fluctuations alone. Measured on the
// decoded signals ẑ = Bᵀy/(l√P_k) − (θ − centre): the noise variance
// against the fluctuations' variance, centred over uncentred, within 4
// standard errors of (‖m‖² + d c)/(d c): relative errors √(2/n) of each of
// the four variances and of the sum Σ‖θ − m_k‖² behind P_k, n = K·S·d.
func TestCentreSNRGain(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const k, s, c = 2, 20000, 0.05
	m := []float64{3, -2}
	d := len(m)
	samples := make([]*mat.Dense, k)
	for w := range samples {
		samples[w] = farSamples(rng, s, m, c)
	}
	snr := func(centre bool) float64 {
		cfg := Config{Access: OMA, Fading: Flat, Repetition: 2, Power: 1, SNRdB: 15, Centre: centre}
		rx, err := Transmit(rng, cfg, samples)
		if err != nil {
			t.Fatal(err)
		}
		var sig, noise float64
		for w := range k {
			z := rx.Combine(w)
			for i := range rx.S {
				for j := range d {
					f := samples[w].At(i, j)
					if centre {
						f -= rx.Centre[w][j]
					} else {
						f -= m[j] // the fluctuation, to measure its variance
					}
					n := z.At(i, j)/math.Sqrt(rx.Pk[w]) - samples[w].At(i, j)
					if centre {
						n += rx.Centre[w][j]
					}
					sig += f * f
					noise += n * n
				}
			}
		}
		return sig / noise
	}
	gain := snr(true) / snr(false)
	want := (mat.Dot(mat.NewVecDense(d, m), mat.NewVecDense(d, m)) + float64(d)*c) / (float64(d) * c)
	tol := 4 * math.Sqrt(5*2.0/float64(k*s*d))
	t.Logf("effective SNR of the fluctuations, centred over uncentred: %.2f, want E‖θ‖²/E‖θ−m‖² = %.2f ± %.1f%%", gain, want, 100*tol)
	if math.Abs(gain/want-1) > tol {
		t.Errorf("SNR gain %.3f, want %.3f within %.1f%%", gain, want, 100*tol)
	}
}

// Retransmit sends fresh rows minus the link's centres with its encoders,
// all of them (no means are sent again), and refuses a centre setting the
// link did not have.
func TestRetransmitCentred(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	cfg := Config{Access: OMA, Fading: Flat, Repetition: 1, Power: 1, SNRdB: 60, Centre: true}
	samples := []*mat.Dense{farSamples(rng, 100, []float64{2, 1}, 0.1), farSamples(rng, 100, []float64{-1, 3}, 0.2)}
	rx, err := Transmit(rng, cfg, samples)
	if err != nil {
		t.Fatal(err)
	}
	fresh := []*mat.Dense{farSamples(rng, 40, []float64{2, 1}, 0.1), farSamples(rng, 40, []float64{-1, 3}, 0.2)}
	again, err := Retransmit(rng, cfg, rx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	if again.S != 40 || again.MeanBlocks != nil || again.Mean == nil || again.Pk[0] != rx.Pk[0] {
		t.Fatalf("retransmission: S = %d, blocks %v, means %v, P_k %v (link %v)", again.S, again.MeanBlocks, again.Mean, again.Pk, rx.Pk)
	}
	// At 60 dB the decoded signal is the fluctuation to within 1e-3·√ν/P_k.
	for w, x := range fresh {
		z := again.Combine(w)
		tol := 5 * math.Sqrt(again.CombinedNoise()/again.Pk[w])
		for i := range 40 {
			for j := range 2 {
				if got, want := z.At(i, j)/math.Sqrt(again.Pk[w]), x.At(i, j)-rx.Centre[w][j]; math.Abs(got-want) > tol {
					t.Fatalf("worker %d row %d: decoded %g, want %g ± %g", w+1, i, got, want, tol)
				}
			}
		}
	}
	off := cfg
	off.Centre = false
	if _, err := Retransmit(rng, off, rx, fresh); err == nil {
		t.Error("retransmit without centre over a centred link: no error")
	}
}

// What centring cannot be combined with, and a budget the means exhaust.
func TestCentreRefusals(t *testing.T) {
	base := Config{Access: OMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: 10, Centre: true}
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.CSI.ErrorVar = 0.1 }, "imperfect CSI"},
		{func(c *Config) { c.Control.PeakPower = 40 }, "truncated inversion"},
		{func(c *Config) { c.Fading, c.Complex, c.KFactor = Rician, true, 3 }, "rician"},
	} {
		cfg := base
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error about %s", cfg, err, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 1))
	samples := []*mat.Dense{farSamples(rng, 3, []float64{100, -50}, 1e-6)}
	_, err := Transmit(rng, Config{Access: NOMA, Fading: Flat, Repetition: 1, Power: 1, SNRdB: -10, Centre: true}, samples)
	if err == nil || !strings.Contains(err.Error(), ErrMeanBudget.Error()) {
		t.Errorf("means beyond the budget: %v", err)
	}
}

// link.json carries the decoded means and their cost, and gives them back
// to the server; inconsistent means are refused.
func TestLinkRoundTripCentre(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	cfg := Config{Access: NOMA, Fading: Flat, Repetition: 1, Power: 1, SNRdB: 10, Centre: true}
	samples := []*mat.Dense{farSamples(rng, 50, []float64{2, 1}, 0.1), farSamples(rng, 50, []float64{-1, 3}, 0.2)}
	rx, err := Transmit(rng, cfg, samples)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewLink(cfg, rx, 1).Encode()
	if err != nil {
		t.Fatal(err)
	}
	l, err := ParseLink(b)
	if err != nil {
		t.Fatal(err)
	}
	back, err := l.Received(rx.Y, []string{"received.npy"})
	if err != nil {
		t.Fatal(err)
	}
	if !l.Centre || back.Budget != rx.Budget || back.Mean[1][1] != rx.Mean[1][1] || back.MeanVar[0] != rx.MeanVar[0] || back.MeanBlocks[1] != rx.MeanBlocks[1] {
		t.Errorf("round trip: %+v", back)
	}
	for _, bad := range []func(*Link){
		func(l *Link) { l.Mean = l.Mean[:1] },
		func(l *Link) { l.Mean = [][]float64{{1}, {2}} },
		func(l *Link) { l.MeanVar = []float64{0, 1} },
		func(l *Link) { l.Centre = false },
	} {
		c := l
		c.Mean, c.MeanVar = append([][]float64(nil), l.Mean...), append([]float64(nil), l.MeanVar...)
		bad(&c)
		b, _ := c.Encode()
		if _, err := ParseLink(b); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}
