package channel

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// TestCoherenceOneIsThePapersLink: coherence 1 (a new channel every block)
// and pilots set but off give the golden hashes of the paper's link, and on
// links with imperfect CSI or truncated inversion, simulated physically or
// by the equivalent law, coherence 1 is bit for bit coherence 0.
func TestCoherenceOneIsThePapersLink(t *testing.T) {
	checkGolden(t, func(c Config) Config {
		c.Coherence = 1
		c.Pilots = Pilots{}
		return c
	})
	for _, cfg := range []Config{
		{Access: OMA, Fading: Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: 5, Physical: true, CSI: CSI{ErrorVar: 0.1}},
		{Access: NOMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: 5, CSI: CSI{PilotLen: 4, PilotSNRdB: 3}},
		{Access: OMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: 5, Control: PowerControl{PeakPower: 200}},
	} {
		send := func(coherence int) (*Received, *Received) {
			c := cfg
			c.Coherence = coherence
			return transmitTwice(t, c)
		}
		rx0, again0 := send(0)
		rx1, again1 := send(1)
		if hashRx(rx0) != hashRx(rx1) || hashRx(again0) != hashRx(again1) {
			t.Errorf("%+v: coherence 1 differs from coherence 0", cfg)
		}
	}
}

// TestSplitBudget: the charged pilots leave the largest S' with
// S'·n_u + ⌈S'/T_c⌉·L ≤ S·n_u (found by search), the uses add up to the
// budget, L_p defaults to m_t (complex uses on the complex channel), NOMA
// charges K·L_p per interval, and a budget too small wraps ErrPilotBudget.
func TestSplitBudget(t *testing.T) {
	for _, c := range []struct {
		cfg        Config
		d, k, s    int
		lp, blockU int
	}{
		{Config{Access: OMA, Fading: Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: 10}, 5, 20, 50, 12, 10},
		{Config{Access: NOMA, Fading: Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: 10}, 5, 20, 1000, 12, 10},
		{Config{Access: OMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 3, Power: 1, SNRdB: 0, Complex: true}, 5, 4, 30, 6, 3},
		{Config{Access: NOMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: 0, Pilots: Pilots{Len: 9}}, 3, 3, 40, 9, 3},
	} {
		for _, tc := range []int{1, 2, 3, 5, 10, 50, 1000} {
			cfg := c.cfg
			cfg.Coherence = tc
			cfg.Pilots.On = true
			b, err := cfg.SplitBudget(c.k, c.s, c.d)
			if err != nil {
				t.Fatalf("%+v: %v", cfg, err)
			}
			perInterval := c.lp
			if cfg.Access == NOMA {
				perInterval *= c.k
			}
			if b.Len != c.lp || b.BlockUses != c.blockU || b.IntervalUses != perInterval || b.Coherence != tc || b.Budget != c.s {
				t.Errorf("%+v: budget %+v, want L_p = %d, n_u = %d, %d uses per interval", cfg, b, c.lp, c.blockU, perInterval)
			}
			uses := func(n int) int { return n*c.blockU + (n+tc-1)/tc*perInterval }
			want := 0
			for uses(want+1) <= c.s*c.blockU {
				want++
			}
			if b.Samples != want || b.Intervals != (want+tc-1)/tc {
				t.Errorf("T_c = %d, %+v: S' = %d in %d intervals, want %d in %d", tc, cfg, b.Samples, b.Intervals, want, (want+tc-1)/tc)
			}
			if b.Samples*b.BlockUses+b.Uses()+b.Idle != b.Budget*b.BlockUses || b.Idle < 0 {
				t.Errorf("T_c = %d, %+v: %d samples of %d uses, %d pilot uses and %d idle do not add up to %d blocks", tc, cfg, b.Samples, b.BlockUses, b.Uses(), b.Idle, b.Budget)
			}
		}
	}
	cfg := Config{Access: NOMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: 0, Pilots: Pilots{On: true}}
	if _, err := cfg.SplitBudget(20, 10, 5); !errors.Is(err, ErrPilotBudget) {
		t.Errorf("20 workers' pilots in 10 blocks of 5 uses: error %v, want ErrPilotBudget", err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	samples := make([]*mat.Dense, 20)
	for i := range samples {
		samples[i] = gaussSamples(rng, 10, 5, 1)
	}
	if _, err := Transmit(rng, cfg, samples); !errors.Is(err, ErrPilotBudget) {
		t.Errorf("Transmit: error %v, want ErrPilotBudget", err)
	}
}

// TestPilotsChargedOnTransmit: Transmit with pilots sends the first S'
// rows of the split budget, records it, sends every row again on a
// retransmission, and draws the MMSE estimate of L_p = m_t pilots at the
// data SNR plus the boost.
func TestPilotsChargedOnTransmit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const k, s, d = 3, 60, 2
	samples := make([]*mat.Dense, k)
	for i := range samples {
		samples[i] = gaussSamples(rng, s, d, 1)
	}
	for _, access := range []Access{OMA, NOMA} {
		cfg := Config{Access: access, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: 10, Coherence: 4, Pilots: Pilots{On: true, BoostDB: 3}}
		want, err := cfg.SplitBudget(k, s, d)
		if err != nil {
			t.Fatal(err)
		}
		rx, err := Transmit(rng, cfg, samples)
		if err != nil {
			t.Fatal(err)
		}
		if rx.Pilots == nil || *rx.Pilots != want || rx.S != want.Samples || rx.Y[0].RawMatrix().Rows != want.Samples {
			t.Errorf("%v: S = %d, pilots %+v, want %+v", access, rx.S, rx.Pilots, want)
		}
		again, err := Retransmit(rng, cfg, rx, samples)
		if err != nil {
			t.Fatal(err)
		}
		if again.S != s || again.Pilots != nil {
			t.Errorf("%v: retransmission sends %d of %d rows, pilots %+v", access, again.S, s, again.Pilots)
		}
		r := cfg.ResolvePilots(d)
		if r.CSI != (CSI{PilotLen: d + 2, PilotSNRdB: 13}) || r.Pilots.On {
			t.Errorf("resolved pilots: CSI %+v, pilots %+v, want L_p = m_t = %d at 13 dB", r.CSI, r.Pilots, d+2)
		}
	}
}

// pilotEstimate estimates an m×mt channel H of large-scale gain β as a
// worker's pilots do, from first principles: L_p pilot uses Φ (mt×L_p,
// ΦΦᵀ = L_p ρ_p I, rows orthogonal), received Y = √β H Φ + N with N i.i.d.
// N(0, 1), the least-squares estimate Y Φᵀ(ΦΦᵀ)^{-1}/√β, shrunk to the
// MMSE estimate v/(v + σ²) times it (μ = 0, v = 1), σ² = 1/(β L_p ρ_p).
// It returns H − Ĥ and Ĥ entry by entry.
func pilotEstimate(rng *rand.Rand, m, mt, lp int, beta, rho float64) (errs, hat []float64) {
	g := mat.NewDense(lp, mt, nil)
	for i := range lp {
		for j := range mt {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	phi := mat.NewDense(mt, lp, nil)
	phi.Scale(math.Sqrt(float64(lp)*rho), q.Slice(0, lp, 0, mt).T())
	h := mat.NewDense(m, mt, nil)
	for i := range m {
		for j := range mt {
			h.Set(i, j, rng.NormFloat64())
		}
	}
	var y mat.Dense
	y.Mul(h, phi)
	y.Scale(math.Sqrt(beta), &y)
	for i := range m {
		for j := range lp {
			y.Set(i, j, y.At(i, j)+rng.NormFloat64())
		}
	}
	var ls mat.Dense
	ls.Mul(&y, phi.T())
	s2 := 1 / (beta * float64(lp) * rho)
	ls.Scale(1/(float64(lp)*rho*math.Sqrt(beta)), &ls)
	shrink := 1 / (1 + s2)
	for i := range m {
		for j := range mt {
			e := shrink * ls.At(i, j)
			hat = append(hat, e)
			errs = append(errs, h.At(i, j)-e)
		}
	}
	return errs, hat
}

// TestPilotEstimateError: the charged pilots' CSI statistics are those of
// estimating the channel from orthogonal pilots through noise. Over 4000
// channels (4×7 entries each), the error variance of pilotEstimate's MMSE
// estimate, and that of the estimates the physical chain draws, equal
// s² = vσ²/(v + σ²), σ² = 1/(β L_p ρ_p), of Config.CSILaw on the resolved
// link within 4 standard errors, and the error is uncorrelated with the
// estimate (the MMSE orthogonality), for β = 1 and β = 0.3.
func TestPilotEstimateError(t *testing.T) {
	const draws, d = 4000, 4
	rng := rand.New(rand.NewPCG(9, 10))
	cfg := Config{Access: OMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 3, Power: 1, SNRdB: 2, Pilots: Pilots{On: true, BoostDB: -2}}
	r := cfg.ResolvePilots(d)
	lp, rho := r.CSI.PilotLen, math.Pow(10, r.CSI.PilotSNRdB/10)
	if lp != d+3 || rho != 1 {
		t.Fatalf("resolved pilots L_p = %d at ρ_p = %g, want %d at 1", lp, rho, d+3)
	}
	for _, beta := range []float64{1, 0.3} {
		_, s2, _ := r.CSILaw(beta)
		if want := (1 / (beta * float64(lp) * rho)) / (1 + 1/(beta*float64(lp)*rho)); math.Abs(s2-want) > 1e-15 {
			t.Fatalf("β = %g: CSILaw s² = %g, want %g", beta, s2, want)
		}
		var indep, chain, indepHat, chainHat []float64
		z := newZFLink(r, d)
		w := r.workerLink(beta)
		for range draws {
			e, h := pilotEstimate(rng, d, d+3, lp, beta, rho)
			indep, indepHat = append(indep, e...), append(indepHat, h...)
			if err := z.draw(rng, w); err != nil {
				t.Fatal(err)
			}
			hv, hh := z.h.RawMatrix().Data, z.hhat.RawMatrix().Data
			for i := range hv {
				chain = append(chain, hv[i]-hh[i])
				chainHat = append(chainHat, hh[i])
			}
		}
		for name, pair := range map[string][2][]float64{"pilots": {indep, indepHat}, "chain": {chain, chainHat}} {
			sq := make([]float64, len(pair[0]))
			cross := make([]float64, len(pair[0]))
			for i, e := range pair[0] {
				sq[i] = e * e
				cross[i] = e * pair[1][i]
			}
			m, se := meanSE(sq)
			t.Logf("β = %g, %s: error variance %.5f ± %.5f, s² = %.5f", beta, name, m, se, s2)
			if math.Abs(m-s2) > 4*se {
				t.Errorf("β = %g, %s: error variance %.5f, want s² = %.5f ± %.5f", beta, name, m, s2, 4*se)
			}
			if m, se := meanSE(cross); math.Abs(m) > 4*se {
				t.Errorf("β = %g, %s: E[(H − Ĥ)Ĥ] = %.5f, want 0 ± %.5f", beta, name, m, 4*se)
			}
		}
	}
}

// TestBlockFading: with coherence T_c, each worker's channel (and its
// estimate) holds over the T_c blocks of an interval and is drawn anew at
// the next: noiseless received blocks of equal symbols are equal within an
// interval and differ across; the residual interference of successive
// intervals, and of two workers, is uncorrelated (|ρ| within 4/√n over
// n = 1500 intervals), under OMA and NOMA.
func TestBlockFading(t *testing.T) {
	const tc, n, d = 4, 1500, 2
	rng := rand.New(rand.NewPCG(11, 12))
	theta := mat.NewDense(tc*n, d, nil)
	for i := range tc * n {
		theta.SetRow(i, []float64{0.7, -1.1})
	}
	for _, access := range []Access{OMA, NOMA} {
		cfg := Config{Access: access, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: 300, Physical: true, Coherence: tc, CSI: CSI{ErrorVar: 0.2}}
		rx, err := Transmit(rng, cfg, []*mat.Dense{theta, theta})
		if err != nil {
			t.Fatal(err)
		}
		// resid[k][j]: the first residual entry of stream k in interval j.
		resid := make([][]float64, len(rx.Y))
		for k, y := range rx.Y {
			want := math.Sqrt(rx.Pk[k]) * 0.7
			if access == NOMA {
				want *= 2
			}
			for j := range n {
				first := y.RawRowView(j * tc)
				resid[k] = append(resid[k], first[0]-want)
				for b := 1; b < tc; b++ {
					row := y.RawRowView(j*tc + b)
					for i := range row {
						if math.Abs(row[i]-first[i]) > 1e-9 {
							t.Fatalf("%v, stream %d, interval %d: block %d differs from the first by %g", access, k, j, b, row[i]-first[i])
						}
					}
				}
			}
			var same int
			for j := 1; j < n; j++ {
				if resid[k][j] == resid[k][j-1] {
					same++
				}
			}
			if same > 0 {
				t.Errorf("%v, stream %d: %d successive intervals with the same channel", access, k, same)
			}
			if r := stat.Correlation(resid[k][1:], resid[k][:n-1], nil); math.Abs(r) > 4/math.Sqrt(n) {
				t.Errorf("%v, stream %d: correlation %.3f between successive intervals", access, k, r)
			}
		}
		if access == OMA {
			if r := stat.Correlation(resid[0], resid[1], nil); math.Abs(r) > 4/math.Sqrt(n) {
				t.Errorf("OMA: correlation %.3f between the two workers' channels", r)
			}
		}
	}
}

// TestCSINoisePredictsResidual: Received.CSINoise, the residual
// interference power per real symbol the estimate-error statistics predict
// (a = 1 for pilots), is the mean of the measured ‖y_k − E_k θ_k‖²/m_r − N0
// within 4 standard errors (of interval means: blocks of one interval share
// their channel), for charged pilots with per-block and block fading,
// truncated inversion and Rician fading, and equals s² β P/κ under OMA
// without truncation (the power rule, docs/BEYOND.md eq. (12.8)).
func TestCSINoisePredictsResidual(t *testing.T) {
	const s, d = 6000, 2
	rng := rand.New(rand.NewPCG(13, 14))
	samples := []*mat.Dense{gaussSamples(rng, s, d, 1), gaussSamples(rng, s, d, 2)}
	for _, cfg := range []Config{
		{Fading: Rayleigh, Repetition: 1, ExtraTx: 6},
		{Fading: Rayleigh, Repetition: 2, ExtraTx: 6, Coherence: 5},
		{Fading: Rayleigh, Repetition: 1, ExtraTx: 6, Control: PowerControl{PeakPower: 40}},
		{Fading: Rician, KFactor: 3, Complex: true, Repetition: 1, ExtraTx: 4},
	} {
		cfg.Access, cfg.Power, cfg.SNRdB, cfg.Physical = OMA, 1.5, 40, true
		cfg.Pilots = Pilots{On: true, BoostDB: -40}
		tc := cfg.coherence()
		rx, err := Transmit(rng, cfg, samples)
		if err != nil {
			t.Fatal(err)
		}
		kappa := 1.0
		if cfg.Complex {
			kappa = 2
		}
		r := cfg.ResolvePilots(d)
		for k, y := range rx.Y {
			if rx.CSIGain[k] != 1 {
				t.Errorf("%+v: CSI gain %g under pilots, want 1", cfg, rx.CSIGain[k])
			}
			var means []float64
			var sum float64
			var count int
			for b := range rx.S {
				if rx.Outage != nil && rx.Outage[k][b] {
					continue
				}
				row := y.RawRowView(b)
				var p float64
				for i, v := range row {
					u := v - math.Sqrt(rx.Pk[k])*samples[k].At(b, i%d)
					p += u * u
				}
				sum += p/float64(rx.Mr) - rx.N0
				count++
				if b%tc == tc-1 && count > 0 {
					means = append(means, sum/float64(count))
					sum, count = 0, 0
				}
			}
			m, se := meanSE(means)
			t.Logf("%v, T_c = %d, peak %g, worker %d: residual power %.4g ± %.2g, CSINoise %.4g", cfg.Fading, tc, cfg.Control.PeakPower, k+1, m, se, rx.CSINoise[k])
			if math.Abs(m-rx.CSINoise[k]) > 4*se {
				t.Errorf("%+v, worker %d: residual power %.4g, CSINoise %.4g ± %.2g", cfg, k+1, m, rx.CSINoise[k], 4*se)
			}
			if cfg.Control.PeakPower == 0 && cfg.Fading == Rayleigh {
				_, s2, _ := r.CSILaw(1)
				if want := s2 * cfg.Power / kappa; math.Abs(rx.CSINoise[k]-want) > 1e-12*want {
					t.Errorf("%+v, worker %d: CSINoise %g, want s²P/κ = %g", cfg, k+1, rx.CSINoise[k], want)
				}
			}
		}
	}
}

// TestPilotsRefused: the settings that cannot be simulated are refused
// with a message that names them.
func TestPilotsRefused(t *testing.T) {
	base := Config{Access: OMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: 10}
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Coherence = -1 }, "coherence"},
		{func(c *Config) { c.Fading, c.ExtraTx, c.Coherence = Flat, 0, 3 }, "flat fading"},
		{func(c *Config) { c.Fading, c.ExtraTx, c.Pilots.On = Flat, 0, true }, "flat fading"},
		{func(c *Config) { c.Pilots = Pilots{On: true}; c.CSI.ErrorVar = 0.1 }, "choose one"},
		{func(c *Config) { c.Pilots = Pilots{On: true}; c.Centre = true }, "centring"},
		{func(c *Config) { c.Pilots = Pilots{On: true, BoostDB: 95} }, "pilot SNR"},
		{func(c *Config) { c.Pilots = Pilots{On: true, BoostDB: math.NaN()} }, "pilot SNR"},
		{func(c *Config) { c.Pilots = Pilots{On: true, Len: -2} }, "pilot length"},
		{func(c *Config) { c.Pilots = Pilots{Len: 8} }, "pilots off"},
	} {
		cfg := base
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one about %q", cfg, err, c.want)
		}
	}
	cfg := base
	cfg.Pilots = Pilots{On: true, Len: 2}
	rng := rand.New(rand.NewPCG(1, 1))
	if _, err := Transmit(rng, cfg, []*mat.Dense{gaussSamples(rng, 20, 2, 1)}); err == nil || !strings.Contains(err.Error(), "L_p ≥ m_t") {
		t.Errorf("pilots shorter than m_t: error %v", err)
	}
}

// TestLinkRoundTripPilots: link.json keeps the coherence, the pilot
// budget and the CSI statistics, and refuses inconsistent ones.
func TestLinkRoundTripPilots(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	cfg := Config{Access: OMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: 10, Coherence: 3, Pilots: Pilots{On: true}}
	rx, err := Transmit(rng, cfg, []*mat.Dense{gaussSamples(rng, 30, 2, 1), gaussSamples(rng, 30, 2, 1)})
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
	back, err := l.Received(rx.Y, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Coherence != 3 || *back.Pilots != *rx.Pilots || !slices.Equal(back.CSINoise, rx.CSINoise) || !slices.Equal(back.CSIGain, rx.CSIGain) {
		t.Errorf("round trip: coherence %d, pilots %+v, CSI %v %v; sent %+v, %v %v", l.Coherence, back.Pilots, back.CSIGain, back.CSINoise, rx.Pilots, rx.CSIGain, rx.CSINoise)
	}
	for _, bad := range []func(*Link){
		func(l *Link) { l.CSINoise = nil },
		func(l *Link) { l.CSIGain = []float64{1} },
		func(l *Link) { l.CSINoise[0] = -1 },
		func(l *Link) { l.Pilots.Samples++ },
		func(l *Link) { l.Pilots, l.PilotBoostDB = nil, 3 },
	} {
		l, _ := ParseLink(b)
		bad(&l)
		data, _ := l.Encode()
		if _, err := ParseLink(data); err == nil {
			t.Errorf("ParseLink accepted %s", data)
		}
	}
}

// transmitTwice sends three workers' fixed samples over c and retransmits
// them (the same generator, seeded alike every call): the two received
// sets that the zero-value tests compare by hash.
func transmitTwice(t *testing.T, c Config) (*Received, *Received) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	samples := make([]*mat.Dense, 3)
	for k := range samples {
		samples[k] = gaussSamples(rng, 40, 2, float64(k+1))
	}
	rx, err := Transmit(rng, c, samples)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Retransmit(rng, c, rx, samples)
	if err != nil {
		t.Fatal(err)
	}
	return rx, again
}
