package digital

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/consensus"
	"github.com/wcmc-project/wcmc/model"
)

// workers draws k blocks of s samples, worker i (from 1) equicorrelated
// with ρ = (i−1)/k (heterogeneous subposteriors) and mean
// (0.3, 0.3, …).
func workers(rng *rand.Rand, k, s, d int) []*mat.Dense {
	out := make([]*mat.Dense, k)
	mean := make([]float64, d)
	for i := range mean {
		mean[i] = 0.3
	}
	for i := range out {
		out[i] = gaussian(rng, s, mean, equicorrelated(d, float64(i)/float64(k)))
	}
	return out
}

func TestCapacityAWGN(t *testing.T) {
	// Under flat fading every transmitter gets (m_r/2) log2(1 + SNR) per
	// block under OMA and (m_r/(2K)) log2(1 + K·SNR) per worker under NOMA;
	// zero-forcing under Rayleigh fading sees SNR/g, g = 1/(m_t − m_r − 1).
	rng := rand.New(rand.NewPCG(1, 2))
	const k, s, d = 3, 50, 2
	samples := workers(rng, k, s, d)
	for _, c := range []struct {
		cfg   channel.Config
		modes []Capacity
		uses  float64
		want  float64
	}{
		{channel.Config{Access: channel.OMA, Repetition: 2, Power: 1, SNRdB: 7}, []Capacity{ZeroForcing, Isotropic, WaterFilling}, 4, 2 * math.Log2(1+math.Pow(10, 0.7))},
		{channel.Config{Access: channel.NOMA, Repetition: 1, Power: 2, SNRdB: -3}, []Capacity{ZeroForcing, Isotropic, WaterFilling}, 2.0 / 3, math.Log2(1+3*math.Pow(10, -0.3)) / 3},
		{channel.Config{Access: channel.OMA, Fading: channel.Rayleigh, ExtraTx: 4, Repetition: 1, Power: 1, SNRdB: 10}, []Capacity{ZeroForcing}, 2, math.Log2(1 + 10*3)},
		{channel.Config{Access: channel.NOMA, Fading: channel.Rayleigh, ExtraTx: 2, Repetition: 2, Power: 1, SNRdB: 10}, []Capacity{ZeroForcing}, 4.0 / 3, 2 * math.Log2(1+3*10) / 3},
	} {
		for _, mode := range c.modes {
			_, b, err := Link{Channel: c.cfg, Capacity: mode, Quantizer: TestChannel{}}.Send(rng, samples)
			if err != nil {
				t.Fatal(err)
			}
			if b.Uses != c.uses {
				t.Errorf("%v %v: %v channel uses per sample, want %v", c.cfg.Access, mode, b.Uses, c.uses)
			}
			for w, wb := range b.Workers {
				if math.Abs(wb.Capacity-c.want) > 1e-12 || wb.Rate != wb.Capacity {
					t.Errorf("%v %v %v, worker %d: %v bits per sample (rate %v), want %v", c.cfg.Access, c.cfg.Fading, mode, w+1, wb.Capacity, wb.Rate, c.want)
				}
			}
		}
	}
}

func TestCapacityGainsAndComplex(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	samples := workers(rng, 2, 30, 2)
	snr := 10.0 // 10 dB
	for _, c := range []struct {
		name string
		cfg  channel.Config
		want []float64
	}{
		// OMA: each worker at its own SNR β_k·SNR.
		{"oma gains", channel.Config{Access: channel.OMA, Repetition: 1, Power: 1, SNRdB: 10, Gains: channel.LargeScale{OffsetDB: []float64{0, -10}}},
			[]float64{math.Log2(1 + snr), math.Log2(1 + 1)}},
		// NOMA: min(log2(1 + 0.1·SNR), ½log2(1 + 1.1·SNR)) = min(1, 1.79):
		// the weak worker alone binds.
		{"noma gains", channel.Config{Access: channel.NOMA, Repetition: 1, Power: 1, SNRdB: 10, Gains: channel.LargeScale{OffsetDB: []float64{0, -10}}},
			[]float64{1, 1}},
		// Complex Rayleigh, m_r = 2·2 = 4 real symbols on 2 complex uses,
		// g = 1/(m_t − m_r) = 1 in complex dimensions: 2 log2(1 + SNR).
		{"complex", channel.Config{Access: channel.OMA, Fading: channel.Rayleigh, Complex: true, ExtraTx: 1, Repetition: 2, Power: 1, SNRdB: 10},
			[]float64{2 * math.Log2(1+snr), 2 * math.Log2(1+snr)}},
	} {
		_, b, err := Link{Channel: c.cfg, Quantizer: TestChannel{}}.Send(rng, samples)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for w, wb := range b.Workers {
			if math.Abs(wb.Capacity-c.want[w]) > 1e-12 {
				t.Errorf("%s, worker %d: %v bits per sample, want %v", c.name, w+1, wb.Capacity, c.want[w])
			}
		}
	}
	// An odd m_r on the complex channel fills ⌈m_r/2⌉ uses: n_r = 4 real
	// dimensions for m_r = 3, at per-dimension SNR P/(4 N0) = ¾·SNR.
	odd := workers(rng, 2, 30, 3)
	cfg := channel.Config{Access: channel.OMA, Fading: channel.Rayleigh, Complex: true, ExtraTx: 1, Repetition: 1, Power: 1, SNRdB: 10}
	_, b, err := Link{Channel: cfg, Quantizer: TestChannel{}}.Send(rng, odd)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * math.Log2(1+0.75*snr); b.Uses != 4 || math.Abs(b.Workers[0].Capacity-want) > 1e-12 {
		t.Errorf("complex, m_r = 3: %v uses, %v bits per sample; want 4 uses, %v bits", b.Uses, b.Workers[0].Capacity, want)
	}
}

func TestCapacityIsotropicRayleigh(t *testing.T) {
	// With m_r = 1, H Hᵀ ~ χ²_{m_t}: each worker's bits per sample are the
	// mean over its S blocks of ½ log2(1 + ρχ²), ρ = P/(m_t N0), whose
	// expectation and variance follow by quadrature against the χ² density.
	rng := rand.New(rand.NewPCG(3, 4))
	const k, s, d = 4, 3000, 1
	cfg := channel.Config{Access: channel.OMA, Fading: channel.Rayleigh, ExtraTx: 3, Repetition: 1, Power: 1, SNRdB: 5}
	_, mt := cfg.Dims(d)
	rho := cfg.Power / (float64(mt) * cfg.N0(d))
	chi := distuv.ChiSquared{K: float64(mt)}
	f := func(x float64) float64 { return math.Log2(1+rho*x) / 2 }
	mean := quad.Fixed(func(x float64) float64 { return f(x) * chi.Prob(x) }, 0, 200, 400, nil, 0)
	second := quad.Fixed(func(x float64) float64 { return f(x) * f(x) * chi.Prob(x) }, 0, 200, 400, nil, 0)
	se := math.Sqrt((second - mean*mean) / s)
	_, b, err := Link{Channel: cfg, Capacity: Isotropic, Quantizer: TestChannel{}}.Send(rng, workers(rng, k, s, d))
	if err != nil {
		t.Fatal(err)
	}
	for w, wb := range b.Workers {
		if math.Abs(wb.Capacity-mean) > 4*se {
			t.Errorf("worker %d: %v bits per sample, E½log2(1+ρχ²_%d) = %v (4 SE = %.2g)", w+1, wb.Capacity, mt, mean, 4*se)
		}
	}
}

func TestWaterFillingBeatsIsotropic(t *testing.T) {
	// On the same channel draws (same seed), water-filling the energy S·P
	// is at least the isotropic rate, which spends P in every block.
	const k, s, d = 2, 40, 2
	cfg := channel.Config{Access: channel.OMA, Fading: channel.Rayleigh, ExtraTx: 2, Repetition: 2, Power: 1, SNRdB: 0}
	samples := workers(rand.New(rand.NewPCG(5, 6)), k, s, d)
	send := func(mode Capacity) Budget {
		_, b, err := Link{Channel: cfg, Capacity: mode, Quantizer: TestChannel{}}.Send(rand.New(rand.NewPCG(7, 8)), samples)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	iso, wf := send(Isotropic), send(WaterFilling)
	for w := range k {
		if wf.Workers[w].Capacity < iso.Workers[w].Capacity-1e-12 {
			t.Errorf("worker %d: water-filling %v < isotropic %v bits per sample", w+1, wf.Workers[w].Capacity, iso.Workers[w].Capacity)
		}
	}
}

func TestHighSNRIsNoiselessCMC(t *testing.T) {
	// At 300 dB the link carries ≈ 50 bits per entry: the decoded samples
	// are the samples up to ~2^{-50} of their scale (Uniform: its cap of
	// 32 bits, ~2^{-30}), and digital GCMC is classical CMC on the exact
	// samples. At 0 dB it is not (the test can fail).
	rng := rand.New(rand.NewPCG(9, 10))
	const k, s, d = 3, 400, 3
	samples := workers(rng, k, s, d)
	exact, err := consensus.Noiseless(samples)
	if err != nil {
		t.Fatal(err)
	}
	scale := mat.Norm(exact, math.Inf(1))
	for _, q := range []Quantizer{TestChannel{}, AdditiveNoise{}, Uniform{Dither: true}} {
		for _, snr := range []float64{300, 0} {
			cfg := channel.Config{Access: channel.OMA, Repetition: 1, Power: 1, SNRdB: snr}
			decoded, b, err := Link{Channel: cfg, Quantizer: q}.Send(rng, samples)
			if err != nil {
				t.Fatal(err)
			}
			theta, err := GCMC(decoded)
			if err != nil {
				t.Fatal(err)
			}
			var diff mat.Dense
			diff.Sub(theta, exact)
			gap := mat.Norm(&diff, math.Inf(1)) / scale
			if high := snr > 100; high != (gap < 1e-6) {
				t.Errorf("%T at %v dB: digital GCMC differs from noiseless CMC by %.3g (relative), distortion %v", q, snr, gap, b.Workers[0].Distortion)
			}
		}
	}
}

func TestSideInformationCharged(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const k, s, d = 2, 100, 2
	cfg := channel.Config{Access: channel.OMA, Repetition: 1, Power: 1, SNRdB: 10}
	// 5 reals (2 for the mean, 3 for the covariance) at 32 bits over 100
	// samples: 1.6 bits per sample.
	_, b, err := Link{Channel: cfg, Quantizer: TestChannel{}, SideInfoBits: 32}.Send(rng, workers(rng, k, s, d))
	if err != nil {
		t.Fatal(err)
	}
	if b.SideInfo != 5 {
		t.Errorf("side information %d reals, want 5", b.SideInfo)
	}
	for _, w := range b.Workers {
		if math.Abs(w.Capacity-w.Rate-1.6) > 1e-12 {
			t.Errorf("capacity %v, rate %v: side information should cost 1.6 bits per sample", w.Capacity, w.Rate)
		}
	}
}

func TestSendRefusals(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	good := channel.Config{Access: channel.OMA, Repetition: 1, Power: 1, SNRdB: 5}
	samples := workers(rng, 2, 20, 2)
	nan := mat.DenseCopyOf(samples[1])
	nan.Set(3, 1, math.NaN())
	for _, c := range []struct {
		link    Link
		samples []*mat.Dense
		want    string
	}{
		{Link{Channel: good}, samples, "no quantizer"},
		{Link{Channel: channel.Config{Repetition: 0, Power: 1}, Quantizer: TestChannel{}}, samples, "repetition"},
		{Link{Channel: good, Quantizer: TestChannel{}, Capacity: 7}, samples, "unknown capacity"},
		{Link{Channel: good, Quantizer: TestChannel{}, SideInfoBits: -1}, samples, "side-information cost"},
		{Link{Channel: good, Quantizer: TestChannel{}}, nil, "no workers"},
		{Link{Channel: good, Quantizer: TestChannel{}}, []*mat.Dense{samples[0], mat.NewDense(20, 3, nil)}, "worker 2 sent 20×3"},
		{Link{Channel: good, Quantizer: TestChannel{}}, []*mat.Dense{samples[0], nan}, "worker 2: samples contain NaN"},
		{Link{Channel: good, Quantizer: TestChannel{}}, []*mat.Dense{samples[0].Slice(0, 1, 0, 2).(*mat.Dense), samples[1].Slice(0, 1, 0, 2).(*mat.Dense)}, "at least 2"},
		{Link{Channel: good, Quantizer: TestChannel{}, SideInfoBits: 64}, samples, "side information costs"},
		{Link{Channel: channel.Config{Access: channel.NOMA, Fading: channel.Rayleigh, ExtraTx: 2, Repetition: 1, Power: 1}, Capacity: WaterFilling, Quantizer: TestChannel{}}, samples, "waterfilling under NOMA"},
		{Link{Channel: channel.Config{Access: channel.NOMA, Fading: channel.Rayleigh, ExtraTx: 2, Repetition: 1, Power: 1, Gains: channel.LargeScale{OffsetDB: []float64{0, 3}}}, Capacity: Isotropic, Quantizer: TestChannel{}}, samples, "unequal large-scale gains"},
		{Link{Channel: channel.Config{Access: channel.OMA, Repetition: 1, Power: 1, Gains: channel.LargeScale{OffsetDB: []float64{0, 3, 1}}}, Quantizer: TestChannel{}}, samples, "3 entries for K = 2"},
		{Link{Channel: channel.Config{Access: channel.OMA, Fading: channel.Rician, Complex: true, KFactor: 2, ExtraTx: 2, Repetition: 1, Power: 1}, Quantizer: TestChannel{}}, samples, "rician"},
		{Link{Channel: channel.Config{Access: channel.OMA, Fading: channel.Rayleigh, ExtraTx: 2, Repetition: 1, Power: 1, CSI: channel.CSI{ErrorVar: 0.1}}, Capacity: WaterFilling, Quantizer: TestChannel{}}, samples, "imperfect CSI"},
		{Link{Channel: channel.Config{Access: channel.OMA, Fading: channel.Rayleigh, ExtraTx: 2, Repetition: 1, Power: 1, Control: channel.PowerControl{PeakPower: 4}}, Quantizer: TestChannel{}}, samples, "power control"},
		{Link{Channel: channel.Config{Access: channel.OMA, Fading: channel.Rayleigh, Complex: true, ExtraTx: 1, Repetition: 1, Power: 1}, Capacity: Isotropic, Quantizer: TestChannel{}}, samples, "complex channel"},
	} {
		_, _, err := c.link.Send(rng, c.samples)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", c.link, err, c.want)
		}
	}
}

func TestWirelessCombinersOnAdditiveNoise(t *testing.T) {
	// AdditiveNoise streams are analog streams at a known noise: WGCMC on
	// them recovers the global covariance C = (Σ_k C_k^{-1})^{-1} as S
	// grows (it is exact for Gaussian subposteriors), while GCMC on the
	// same streams is over-dispersed, ≈ (Σ_k (C_k + N_k I)^{-1})^{-1}. Over
	// the trials the mean output covariance of WGCMC is C within 4 SE, and
	// that of GCMC is not.
	rng := rand.New(rand.NewPCG(15, 16))
	const k, s, d, trials = 3, 3000, 2, 20
	cfg := channel.Config{Access: channel.OMA, Repetition: 1, Power: 1, SNRdB: 3}
	prec := mat.NewSymDense(d, nil)
	for i := range k {
		var inv mat.SymDense
		var chol mat.Cholesky
		chol.Factorize(equicorrelated(d, float64(i)/float64(k)))
		if err := chol.InverseTo(&inv); err != nil {
			t.Fatal(err)
		}
		prec.AddSym(prec, &inv)
	}
	var chol mat.Cholesky
	chol.Factorize(prec)
	var global mat.SymDense
	if err := chol.InverseTo(&global); err != nil {
		t.Fatal(err)
	}
	entries := [][2]int{{0, 0}, {0, 1}, {1, 1}}
	wg := make([][]float64, len(entries))
	gc := make([][]float64, len(entries))
	for range trials {
		decoded, b, err := Link{Channel: cfg, Quantizer: AdditiveNoise{}}.Send(rng, workers(rng, k, s, d))
		if err != nil {
			t.Fatal(err)
		}
		rx, err := b.Received(decoded)
		if err != nil {
			t.Fatal(err)
		}
		if rx.N0 != 1 || rx.Pk[0] != 1/b.Workers[0].White {
			t.Fatalf("analog stream N0 = %v, P_1 = %v for N_1 = %v", rx.N0, rx.Pk[0], b.Workers[0].White)
		}
		for _, learn := range []struct {
			f   func(*channel.Received) (consensus.Map, error)
			out [][]float64
		}{{consensus.WGCMC, wg}, {consensus.GCMC, gc}} {
			m, err := learn.f(rx)
			if err != nil {
				t.Fatal(err)
			}
			cov := mat.NewSymDense(d, nil)
			stat.CovarianceMatrix(cov, m.Apply(rx), nil)
			for e, ij := range entries {
				learn.out[e] = append(learn.out[e], cov.At(ij[0], ij[1]))
			}
		}
	}
	gcmcOff := false
	for e, ij := range entries {
		want := global.At(ij[0], ij[1])
		mean, sd := stat.MeanStdDev(wg[e], nil)
		if se := sd / math.Sqrt(trials); math.Abs(mean-want) > 4*se {
			t.Errorf("WGCMC covariance (%d,%d): mean %v over %d trials, global %v (4 SE = %.2g)", ij[0], ij[1], mean, trials, want, 4*se)
		}
		mean, sd = stat.MeanStdDev(gc[e], nil)
		gcmcOff = gcmcOff || math.Abs(mean-want) > 4*sd/math.Sqrt(trials)
	}
	if !gcmcOff {
		t.Error("GCMC on the noisy digital streams matches the global covariance: the test cannot tell the combiners apart")
	}
}

func TestWVCMCAcceptsAdditiveNoise(t *testing.T) {
	// WVCMC needs channel noise (N0 > 0) and encoders E_k = √P_k I: the
	// AdditiveNoise stream provides both, and the optimiser lowers the
	// free-energy bound from the GCMC start.
	rng := rand.New(rand.NewPCG(17, 18))
	const k, s, d = 3, 300, 2
	decoded, b, err := Link{Channel: channel.Config{Access: channel.OMA, Repetition: 1, Power: 1, SNRdB: 5}, Quantizer: AdditiveNoise{}}.Send(rng, workers(rng, k, s, d))
	if err != nil {
		t.Fatal(err)
	}
	rx, err := b.Received(decoded)
	if err != nil {
		t.Fatal(err)
	}
	target, err := model.NewGaussian([]float64{0.3, 0.3}, equicorrelated(d, 0.3))
	if err != nil {
		t.Fatal(err)
	}
	init, _, err := consensus.InitialMap(rx)
	if err != nil {
		t.Fatal(err)
	}
	fit, err := consensus.WVCMC(context.Background(), rng, rx, target, init, consensus.Settings{Holdout: consensus.Off})
	if err != nil {
		t.Fatal(err)
	}
	v, err := consensus.NewVariational(rx, target)
	if err != nil {
		t.Fatal(err)
	}
	start, err := v.Value(init)
	if err != nil {
		t.Fatal(err)
	}
	end, err := v.Value(fit.Map)
	if err != nil {
		t.Fatal(err)
	}
	if !(end < start) {
		t.Errorf("WVCMC did not lower the objective: %v → %v", start, end)
	}
	// Noiseless-type streams have no noise: WVCMC refuses them.
	decoded, b, err = Link{Channel: channel.Config{Access: channel.OMA, Repetition: 1, Power: 1, SNRdB: 5}, Quantizer: TestChannel{}}.Send(rng, workers(rng, k, s, d))
	if err != nil {
		t.Fatal(err)
	}
	rx, err = b.Received(decoded)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := consensus.NewVariational(rx, target); err == nil {
		t.Error("WVCMC accepted a noiseless decoded stream")
	}
}
