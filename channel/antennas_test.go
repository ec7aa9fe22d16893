package channel

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// TestRxAntennasOneIsThePapersLink: one receive antenna per received
// dimension, set explicitly, gives the golden hashes of the paper's link,
// and on links with imperfect CSI, block fading or truncated inversion,
// simulated physically or by the equivalent law, N_r = 1 is bit for bit
// N_r = 0.
func TestRxAntennasOneIsThePapersLink(t *testing.T) {
	checkGolden(t, func(c Config) Config {
		c.RxAntennas = 1
		return c
	})
	for _, cfg := range []Config{
		{Access: OMA, Fading: Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: 5, Physical: true, CSI: CSI{ErrorVar: 0.1}},
		{Access: NOMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: 5, CSI: CSI{PilotLen: 4, PilotSNRdB: 3}},
		{Access: OMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: 5, Control: PowerControl{PeakPower: 200}},
		{Access: NOMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: 5, Coherence: 4, Pilots: Pilots{On: true}},
	} {
		send := func(n int) (*Received, *Received) {
			c := cfg
			c.RxAntennas = n
			return transmitTwice(t, c)
		}
		rx0, again0 := send(0)
		rx1, again1 := send(1)
		if hashRx(rx0) != hashRx(rx1) || hashRx(again0) != hashRx(again1) {
			t.Errorf("%+v: one receive antenna differs from the zero value", cfg)
		}
	}
}

// arrayBlocks sends the S rows of every worker's samples through the
// physical chain of a multi-antenna server (arrayLink), each worker alone
// in its blocks under OMA and all in one block under NOMA, with encoders
// √pk[k] B; it returns per worker and block the energy ‖x̃_k‖² and the
// residual power ‖F H_k x̃_k − t_k‖²/m_r, and the combined noise entries
// F n of every block at noise variance n0.
func arrayBlocks(rng *rand.Rand, cfg Config, thetas []*mat.Dense, pk []float64, links []workerLink, n0 float64) (energy, resid [][]float64, noise []float64) {
	k := len(thetas)
	s, d := thetas[0].Dims()
	mr := cfg.Repetition * d
	streams := 1
	if cfg.Access == OMA {
		streams = k
	}
	a := newArrayLink(cfg, mr, k, streams)
	energy, resid = make([][]float64, k), make([][]float64, k)
	all := make([]int, k)
	for i := range all {
		all[i] = i
	}
	var tx mat.VecDense
	dst := make([]float64, mr)
	coherence := cfg.coherence()
	for b := range s {
		for w := range k {
			stream := 0
			if cfg.Access == OMA {
				stream = w
			}
			if b%coherence == 0 && (cfg.Access == OMA || w == 0) {
				ws := all
				if cfg.Access == OMA {
					ws = []int{w}
				}
				if err := a.draw(rng, ws, links, stream); err != nil {
					panic(err) // a Rayleigh draw is singular with probability zero
				}
			}
			enc := basis(cfg.Repetition, d)
			enc.Scale(math.Sqrt(pk[w]), enc)
			tx.MulVec(enc, mat.NewVecDense(d, thetas[w].RawRowView(b)))
			clear(dst)
			e, r, _ := a.eff[w].apply(dst, tx.RawVector().Data, links[w])
			energy[w] = append(energy[w], e)
			resid[w] = append(resid[w], r)
			if cfg.Access == OMA || w == 0 {
				clear(dst)
				a.addNoise(rng, dst, stream, math.Sqrt(n0))
				noise = append(noise, dst...)
			}
		}
	}
	return energy, resid, noise
}

// unitLinks returns k worker links of unit gain of cfg with its combined
// channel's g for a block of w workers.
func unitLinks(cfg Config, k, w, d int) []workerLink {
	links := make([]workerLink, k)
	for i := range links {
		links[i] = cfg.workerLink(1)
		if cfg.rxAntennas() > 1 {
			links[i].rxGram = cfg.CombinedInvGram(d, w)
		}
	}
	return links
}

// TestArrayGainClosedForm: the array gain in closed form. On flat fading
// (each received dimension seen by N_r antennas at unit gain) the
// beamformer is maximum-ratio combining: g = 1/N_r exactly under OMA and
// NOMA, so P_k is N_r times the paper's, the energy is P to rounding and
// the combined noise is white of variance N0, i.e. N0/N_r at the paper's
// energy (Monte Carlo, 4 standard errors). On Rayleigh fading with m_r = 1,
// m_t = 3 and N_r = 2 the beamformer picks the largest eigenvalue λ of a
// 2×2 Wishart matrix with 3 degrees of freedom, g = E[1/λ] = 1 − ln 2
// (docs/MATH.md eq. (21.6)); the chain's measured energies and the table
// give it within 4 standard errors, as the chain with N_r = 1 gives the
// paper's 1/(m_t − m_r − 1).
func TestArrayGainClosedForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const s, d = 4000, 2
	samples := []*mat.Dense{gaussSamples(rng, s, d, 1), gaussSamples(rng, s, d, 2)}
	for _, access := range []Access{OMA, NOMA} {
		base := Config{Access: access, Fading: Flat, Repetition: 2, Power: 1.5, SNRdB: 3}
		paper, err := Transmit(rand.New(rand.NewPCG(1, 1)), base, samples)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{2, 4} {
			cfg := base
			cfg.RxAntennas, cfg.Physical = n, true
			for _, w := range []int{1, 2} {
				if g := cfg.CombinedInvGram(d, w); g != 1/float64(n) {
					t.Errorf("flat, N_r = %d, %d workers: g = %g, want 1/N_r", n, w, g)
				}
			}
			rx, err := Transmit(rng, cfg, samples)
			if err != nil {
				t.Fatal(err)
			}
			var noise []float64
			for k, y := range rx.Y {
				if math.Abs(rx.Pk[k]-float64(n)*paper.Pk[k]) > 1e-12*rx.Pk[k] {
					t.Errorf("flat %v, N_r = %d: P_k = %g, want N_r × the paper's %g", access, n, rx.Pk[k], paper.Pk[k])
				}
				want := cfg.Power
				if access == NOMA {
					want *= rx.Pk[k] / cfg.PowerScale(samples[k])
				}
				if math.Abs(rx.TxPower[k]-want) > 1e-9*want {
					t.Errorf("flat %v, N_r = %d, worker %d: energy %g, want %g", access, n, k+1, rx.TxPower[k], want)
				}
				for b := range rx.S {
					for i, v := range y.RawRowView(b) {
						sum := 0.0
						for _, w := range rxWorkers(rx, k) {
							sum += math.Sqrt(rx.Pk[w]) * samples[w].At(b, i%d)
						}
						noise = append(noise, v-sum)
					}
				}
			}
			checkWhiteNoise(t, noise, rx.Mr, rx.N0, "flat")
		}
	}

	// Rayleigh: E[1/λ_max] of a 2×2 Wishart matrix with 3 degrees of freedom.
	ray := Config{Access: OMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, RxAntennas: 2}
	ones := mat.NewDense(20000, 1, nil)
	for i := range 20000 {
		ones.Set(i, 0, 1)
	}
	e, _, _ := arrayBlocks(rng, ray, []*mat.Dense{ones}, []float64{1}, unitLinks(ray, 1, 1, 1), 1)
	m, se := meanSE(e[0])
	tab := rxTable(1, 3, 2, 1)
	want := 1 - math.Ln2
	t.Logf("N_r = 2, m_r = 1, m_t = 3: chain %.5f ± %.5f, table %.5f ± %.5f, closed form %.5f", m, se, tab[0], tab[1], want)
	if math.Abs(m-want) > 4*se || math.Abs(tab[0]-want) > 4*tab[1] {
		t.Errorf("g: chain %.5f ± %.5f, table %.5f ± %.5f, want 1 − ln 2 = %.5f", m, se, tab[0], tab[1], want)
	}
	// One antenna through the same chain: the paper's inverse-Wishart mean
	// (m_t − m_r = 8, whose energy has a finite variance).
	one := Config{Access: OMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 8, Power: 1}
	two := mat.NewDense(20000, 2, nil)
	for i := range 20000 {
		two.Set(i, 0, 1)
	}
	e, _, _ = arrayBlocks(rng, one, []*mat.Dense{two}, []float64{1}, unitLinks(one, 1, 1, 2), 1)
	if m, se := meanSE(e[0]); math.Abs(m-1.0/7) > 4*se {
		t.Errorf("N_r = 1 through the array chain: g = %.5f ± %.5f, want 1/(m_t − m_r − 1) = 1/7", m, se)
	}
}

// rxWorkers returns the workers whose signals stream k carries.
func rxWorkers(rx *Received, k int) []int {
	if rx.Access == OMA {
		return []int{k}
	}
	out := make([]int, rx.K)
	for i := range out {
		out[i] = i
	}
	return out
}

// checkWhiteNoise checks that noise, rows of m entries, has variance n0
// within 4 standard errors and uncorrelated entries within a row.
func checkWhiteNoise(t *testing.T, noise []float64, m int, n0 float64, what string) {
	t.Helper()
	sq := make([]float64, len(noise))
	for i, v := range noise {
		sq[i] = v * v
	}
	v, se := meanSE(sq)
	if math.Abs(v-n0) > 4*se {
		t.Errorf("%s: combined noise variance %.5g ± %.2g, want N0 = %.5g", what, v, se, n0)
	}
	rows := len(noise) / m
	for i := range m {
		for j := range i {
			a, b := make([]float64, rows), make([]float64, rows)
			for r := range rows {
				a[r], b[r] = noise[r*m+i], noise[r*m+j]
			}
			if c := stat.Correlation(a, b, nil); math.Abs(c) > 4/math.Sqrt(float64(rows)) {
				t.Errorf("%s: combined noise entries %d and %d correlated (%.3f)", what, i, j, c)
			}
		}
	}
}

// TestArrayEquivalentMatchesPhysical: under perfect CSI the equivalent
// model y = E θ + n with P_k from the combined channel's g has the law of
// the physical chain of a multi-antenna server (draw H_k, design the
// beamformer, zero-force F Ĥ_k, add noise on the N_r·m_r antennas,
// combine): the same P_k, two-sample KS tests on an entry of the combined
// noise and on ‖y‖² per block at level 10⁻³, white combined noise of
// variance N0; and the tabulated g is the chain's measured mean energy
// over P_k ‖Bθ‖² within 4 standard errors (the table's and the
// measurement's), under OMA and NOMA.
func TestArrayEquivalentMatchesPhysical(t *testing.T) {
	const s, d = 2000, 2
	rng := rand.New(rand.NewPCG(43, 44))
	samples := []*mat.Dense{gaussSamples(rng, s, d, 1), gaussSamples(rng, s, d, 1.5), gaussSamples(rng, s, d, 0.7)}
	for _, cfg := range []Config{
		{Access: OMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: 0, RxAntennas: 2},
		{Access: OMA, Fading: Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: 0, RxAntennas: 4},
		{Access: NOMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: 0, RxAntennas: 3},
		{Access: NOMA, Fading: Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: 0, RxAntennas: 2, Coherence: 3},
	} {
		phys := cfg
		phys.Physical = true
		rxP, err := Transmit(rng, phys, samples)
		if err != nil {
			t.Fatal(err)
		}
		rxE, err := Transmit(rng, cfg, samples)
		if err != nil {
			t.Fatal(err)
		}
		if rxE.TxPower != nil || rxP.TxPower == nil {
			t.Fatalf("%+v: the equivalent model measured energy, or the chain did not", cfg)
		}
		laws := [2]struct{ entry, norm, noise []float64 }{}
		for i, rx := range []*Received{rxP, rxE} {
			for k, y := range rx.Y {
				if rx.Pk[k] != rxP.Pk[k] {
					t.Fatalf("%+v: P_k %v (physical) and %v (equivalent) differ", cfg, rxP.Pk, rxE.Pk)
				}
				for b := range rx.S {
					row := y.RawRowView(b)
					var n2 float64
					for j, v := range row {
						n2 += v * v
						sum := 0.0
						for _, w := range rxWorkers(rx, k) {
							sum += math.Sqrt(rx.Pk[w]) * samples[w].At(b, j%d)
						}
						laws[i].noise = append(laws[i].noise, v-sum)
						if j == 0 {
							laws[i].entry = append(laws[i].entry, v-sum)
						}
					}
					laws[i].norm = append(laws[i].norm, n2)
				}
			}
		}
		for name, pair := range map[string][2][]float64{"noise entry": {laws[0].entry, laws[1].entry}, "‖y‖²": {laws[0].norm, laws[1].norm}} {
			if dist, crit := ks(pair[0], pair[1]), ksCritical(len(pair[0]), len(pair[1])); dist > crit {
				t.Errorf("%+v: %s: KS distance %.4f between physical and equivalent, critical %.4f", cfg, name, dist, crit)
			}
		}
		checkWhiteNoise(t, laws[0].noise, rxP.Mr, rxP.N0, "physical")

		// The table against the chain's energies (independent draws).
		w := 1
		if cfg.Access == NOMA {
			w = len(samples)
		}
		links := unitLinks(cfg, len(samples), w, d)
		energy, _, _ := arrayBlocks(rng, cfg, samples, rxP.Pk, links, rxP.N0)
		// One ratio per channel draw: the workers of a NOMA block share F,
		// and the blocks of an interval share the channels.
		m2 := make([]float64, len(samples))
		for k, x := range samples {
			m2[k], _ = sampleNorms(x, cfg.Repetition)
		}
		var ratios []float64
		for b := 0; b < s; b += cfg.coherence() {
			var r float64
			for k, e := range energy {
				r += e[b] / (rxP.Pk[k] * m2[k]) / float64(len(energy))
			}
			ratios = append(ratios, r)
		}
		m, se := meanSE(ratios)
		tab := rxTable(rxP.Mr, rxP.Mr+cfg.ExtraTx, cfg.RxAntennas*rxP.Mr, w)
		t.Logf("%v, N_r = %d, m_r = %d: g measured %.5f ± %.5f, table %.5f ± %.5f", cfg.Access, cfg.RxAntennas, rxP.Mr, m, se, tab[0], tab[1])
		if math.Abs(m-tab[0]) > 4*math.Hypot(se, tab[1]) {
			t.Errorf("%+v: measured g %.5f ± %.5f, table %.5f ± %.5f", cfg, m, se, tab[0], tab[1])
		}
	}
}

// TestBeamformer: the designed beamformer has orthonormal rows; for one
// worker its inversion cost is Σ_i 1/σ_i² over the m_r largest singular
// values of Z (the minimum by Cauchy's interlacing theorem); for several,
// the descent lowers the summed cost from its start and ends below every
// one of 20 random beamformers. More antennas lower g, and a beamformer
// shared by two workers costs each more than one's own.
func TestBeamformer(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	const mr, mt, nr = 3, 5, 9
	draw := func(w int) []*mat.Dense {
		z := make([]*mat.Dense, w)
		for k := range z {
			z[k] = mat.NewDense(nr, mt, nil)
			for i := range nr * mt {
				z[k].RawMatrix().Data[i] = rng.NormFloat64()
			}
		}
		return z
	}
	orthonormal := func(f *mat.Dense) bool {
		var g mat.Dense
		g.Mul(f, f.T())
		return mat.EqualApprox(&g, eye(mr), 1e-12)
	}
	for range 10 {
		bf := newBeamformer(mr, nr, mt)
		z := draw(1)
		f, ok := bf.design(z)
		if !ok || !orthonormal(f) {
			t.Fatalf("one worker: design failed or rows not orthonormal")
		}
		var svd mat.SVD
		svd.Factorize(z[0], mat.SVDNone)
		var want float64
		for _, v := range svd.Values(nil)[:mr] {
			want += 1 / (v * v)
		}
		if j := bf.cost(f, z); math.Abs(j-want) > 1e-9*want {
			t.Errorf("one worker: cost %g, want Σ 1/σ_i² = %g", j, want)
		}

		z = draw(4)
		start, _ := bf.start(z)
		j0 := bf.cost(start, z)
		f, ok = bf.design(z)
		if !ok || !orthonormal(f) {
			t.Fatalf("four workers: design failed or rows not orthonormal")
		}
		j := bf.cost(f, z)
		if !(j < j0) {
			t.Errorf("four workers: descent ended at %g, not below its start %g", j, j0)
		}
		for range 20 {
			r := mat.NewDense(mr, nr, nil)
			for i := range mr * nr {
				r.RawMatrix().Data[i] = rng.NormFloat64()
			}
			q, _ := bf.retract(r, mat.NewDense(mr, nr, nil), 0)
			if jr := bf.cost(q, z); jr < j {
				t.Errorf("four workers: a random beamformer costs %g, below the design's %g", jr, j)
			}
		}
	}
	prev := math.Inf(1)
	for _, n := range []int{2, 3, 5} {
		g := rxTable(mr, mt, n*mr, 1)[0]
		if !(g < prev) {
			t.Errorf("g = %g at N_r = %d, not below %g with fewer antennas", g, n, prev)
		}
		prev = g
	}
	if oma, noma := rxTable(mr, mt, 3*mr, 1)[0], rxTable(mr, mt, 3*mr, 2)[0]; !(oma < noma) {
		t.Errorf("N_r = 3: OMA's g %g not below NOMA's %g", oma, noma)
	}
}

// TestArrayCSINoise: with N_r > 1 receive antennas and pilots (simulated
// physically), Received.CSINoise, which uses the combined channel's g, is
// the mean of the measured residual power per real symbol within 4
// standard errors (of interval means) under OMA and NOMA, with per-block
// and block fading, and equals s²βP under OMA (the power rule with the
// same g).
func TestArrayCSINoise(t *testing.T) {
	const s, d = 4000, 2
	rng := rand.New(rand.NewPCG(47, 48))
	samples := []*mat.Dense{gaussSamples(rng, s, d, 1), gaussSamples(rng, s, d, 2)}
	for _, cfg := range []Config{
		{Access: OMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, RxAntennas: 2},
		{Access: OMA, Fading: Rayleigh, Repetition: 2, ExtraTx: 2, RxAntennas: 3, Coherence: 4},
		{Access: NOMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, RxAntennas: 2},
	} {
		cfg.Power, cfg.SNRdB = 1.5, 40
		cfg.Pilots = Pilots{On: true, BoostDB: -40}
		tc := cfg.coherence()
		rx, err := Transmit(rng, cfg, samples)
		if err != nil {
			t.Fatal(err)
		}
		if rx.TxPower == nil {
			t.Fatalf("%+v: imperfect CSI with N_r > 1 was not simulated physically", cfg)
		}
		r := cfg.ResolvePilots(d)
		for k, y := range rx.Y {
			predicted := 0.0
			for _, w := range rxWorkers(rx, k) {
				predicted += rx.CSINoise[w]
			}
			var means []float64
			var sum float64
			for b := range rx.S {
				var p float64
				for i, v := range y.RawRowView(b) {
					u := v
					for _, w := range rxWorkers(rx, k) {
						u -= math.Sqrt(rx.Pk[w]) * samples[w].At(b, i%d)
					}
					p += u * u
				}
				sum += p/float64(rx.Mr) - rx.N0
				if b%tc == tc-1 {
					means = append(means, sum/float64(tc))
					sum = 0
				}
			}
			m, se := meanSE(means)
			t.Logf("%v, N_r = %d, T_c = %d, stream %d: residual power %.4g ± %.2g, CSINoise %.4g", cfg.Access, cfg.RxAntennas, tc, k+1, m, se, predicted)
			if math.Abs(m-predicted) > 4*se {
				t.Errorf("%+v, stream %d: residual power %.4g, CSINoise %.4g ± %.2g", cfg, k+1, m, predicted, 4*se)
			}
			if cfg.Access == OMA {
				_, s2, _ := r.CSILaw(1)
				if want := s2 * cfg.Power; math.Abs(rx.CSINoise[k]-want) > 1e-12*want {
					t.Errorf("%+v, worker %d: CSINoise %g, want s²P = %g", cfg, k+1, rx.CSINoise[k], want)
				}
			}
		}
	}
}

// TestRxAntennasRefused: the settings the multi-antenna server does not
// model are refused with a message that names them.
func TestRxAntennasRefused(t *testing.T) {
	base := Config{Access: OMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: 10}
	for want, edit := range map[string]func(*Config){
		"N_r = -1":               func(c *Config) { c.RxAntennas = -1 },
		"at most 64":             func(c *Config) { c.RxAntennas = 65 },
		"on the complex channel": func(c *Config) { c.RxAntennas, c.Complex = 2, true },
		"truncated inversion":    func(c *Config) { c.RxAntennas, c.Control.PeakPower = 2, 40 },
	} {
		c := base
		edit(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: error %v, want one mentioning %q", c, err, want)
		}
	}
	for _, n := range []int{0, 1, 2, MaxRxAntennas} {
		c := base
		c.RxAntennas = n
		if err := c.Validate(); err != nil {
			t.Errorf("N_r = %d: %v", n, err)
		}
	}
}

// TestLinkRoundTripAntennas: link.json records N_r > 1 (and omits 1), and
// a negative count is refused when read.
func TestLinkRoundTripAntennas(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 50))
	samples := []*mat.Dense{gaussSamples(rng, 20, 2, 1), gaussSamples(rng, 20, 2, 1)}
	for _, n := range []int{1, 3} {
		cfg := Config{Access: NOMA, Fading: Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: 10, RxAntennas: n}
		rx, err := Transmit(rng, cfg, samples)
		if err != nil {
			t.Fatal(err)
		}
		b, err := NewLink(cfg, rx, 1).Encode()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(b), "rx_antennas"); got != (n > 1) {
			t.Errorf("N_r = %d: rx_antennas recorded %v", n, got)
		}
		l, err := ParseLink(b)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: n, false: 0}[n > 1]; l.RxAntennas != want {
			t.Errorf("N_r = %d: read back %d", n, l.RxAntennas)
		}
		bad := strings.Replace(string(b), `"format"`, `"rx_antennas": -2, "format"`, 1)
		if n > 1 {
			bad = strings.Replace(string(b), `"rx_antennas": 3`, `"rx_antennas": -2`, 1)
		}
		if _, err := ParseLink([]byte(bad)); err == nil || !strings.Contains(err.Error(), "rx_antennas = -2") {
			t.Errorf("N_r = %d: a negative rx_antennas read with error %v", n, err)
		}
	}
}
