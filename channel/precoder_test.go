package channel

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// TestIdentityPrecoderIsThePapersLink: the identity precoder, set
// explicitly, is the paper's link bit for bit (the recorded hashes of
// TestZeroValueGolden).
func TestIdentityPrecoderIsThePapersLink(t *testing.T) {
	checkGolden(t, func(c Config) Config {
		c.Precoder = Identity
		return c
	})
}

// The allocation of eq. (22.3) by hand: λ = (4, 1, 0.01), Π = 2, ν = 1.
// With all three directions the level κ = 5/3.1 leaves the third below ν;
// with two, κ = 4/3, q = (5/3, 1/3, 0), and the MSE (22.4) is
// 9/4 + 0.01 = 2.26, which is Σ_i λ_i ν/(q_i + ν).
func TestMatchedAllocationByHand(t *testing.T) {
	q, level := MatchedAllocation([]float64{4, 1, 0.01}, 2, 1)
	want := []float64{5.0 / 3, 1.0 / 3, 0}
	for i := range q {
		if math.Abs(q[i]-want[i]) > 1e-12 {
			t.Errorf("q = %v, want %v", q, want)
		}
	}
	if math.Abs(level-4.0/3) > 1e-12 {
		t.Errorf("level %v, want 4/3", level)
	}
	if got := MatchedMSE([]float64{4, 1, 0.01}, 2, 1); math.Abs(got-2.26) > 1e-12 {
		t.Errorf("MSE %v, want 2.26", got)
	}
	// Without noise every direction is active, q ∝ √λ.
	q, _ = MatchedAllocation([]float64{4, 1, 0}, 3, 0)
	if math.Abs(q[0]-2) > 1e-12 || math.Abs(q[1]-1) > 1e-12 || q[2] != 0 {
		t.Errorf("noiseless allocation %v, want (2, 1, 0)", q)
	}
}

// The allocation is the minimum of Σ_i λ_i ν/(q_i + ν) over q ≥ 0 with
// Σ q_i = Π: no random feasible allocation does better, and it spends
// exactly Π.
func TestMatchedAllocationIsOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	mse := func(lambda, q []float64, nu float64) float64 {
		var s float64
		for i, l := range lambda {
			s += l * nu / (q[i] + nu)
		}
		return s
	}
	for range 200 {
		d := 1 + rng.IntN(6)
		lambda := make([]float64, d)
		for i := range lambda {
			lambda[i] = math.Exp(3 * rng.NormFloat64())
		}
		budget, nu := math.Exp(2*rng.NormFloat64()), math.Exp(rng.NormFloat64())
		q, _ := MatchedAllocation(lambda, budget, nu)
		var sum float64
		for _, v := range q {
			sum += v
		}
		if math.Abs(sum-budget) > 1e-9*budget {
			t.Fatalf("λ %v: allocation %v spends %v, want %v", lambda, q, sum, budget)
		}
		best := mse(lambda, q, nu)
		if got := MatchedMSE(lambda, budget, nu); math.Abs(got-best) > 1e-9*best {
			t.Fatalf("λ %v: MatchedMSE %v, Σ λν/(q+ν) = %v", lambda, got, best)
		}
		for range 50 {
			other := make([]float64, d)
			var tot float64
			for i := range other {
				other[i] = rng.ExpFloat64()
				tot += other[i]
			}
			for i := range other {
				other[i] *= budget / tot
			}
			if m := mse(lambda, other, nu); m < best*(1-1e-12) {
				t.Fatalf("λ %v, Π %v, ν %v: allocation %v has MSE %v below the matched %v (%v)", lambda, budget, nu, other, m, best, q)
			}
		}
	}
}

// correlatedSamples draws s rows of N(0, C) with C = A Aᵀ for the given
// square root A.
func correlatedSamples(rng *rand.Rand, s int, a *mat.Dense) *mat.Dense {
	d, _ := a.Dims()
	z := mat.NewDense(s, d, nil)
	for i := range s {
		for j := range d {
			z.Set(i, j, rng.NormFloat64())
		}
	}
	var x mat.Dense
	x.Mul(z, a.T())
	return &x
}

// TestMatchedMSEMonteCarlo: an independent simulation of the matched
// link. Workers with known Gaussian sources N(0, C_k) send S samples with
// the whiten precoder; the linear MMSE estimate of θ from the combined
// signal z = √P_k F_k θ + ñ, computed from the true C_k and the precoder
// the link reports, has the mean squared error of eq. (22.4) for the
// eigenvalues of C_k, Π = β_k P/(g l) and ν = N0/l, within 4 Monte Carlo
// standard errors; the identity precoder's measured the same way has its
// closed form Σ_i λ_i ν/(Π λ_i/tr C_k + ν), which (22.4) does not exceed. Flat OMA at l = 1 and physical Rayleigh fading with unequal
// gains at l = 2 (m_t − m_r = 4).
func TestMatchedMSEMonteCarlo(t *testing.T) {
	const s = 20000
	roots := []*mat.Dense{
		mat.NewDense(3, 3, []float64{2, 0, 0, 0.5, 1, 0, 0.1, -0.3, 0.3}),
		mat.NewDense(3, 3, []float64{1, 0.8, 0, 0, 0.4, 0, 0.2, 0, 1.5}),
	}
	for _, cfg := range []Config{
		{Access: OMA, Repetition: 1, Power: 1, SNRdB: 0},
		{Access: OMA, Fading: Rayleigh, ExtraTx: 4, Repetition: 2, Power: 2, SNRdB: 3, Physical: true, Gains: LargeScale{OffsetDB: []float64{0, -4}}},
	} {
		rng := rand.New(rand.NewPCG(7, 8))
		samples := make([]*mat.Dense, len(roots))
		covs := make([]*mat.SymDense, len(roots))
		for k, a := range roots {
			samples[k] = correlatedSamples(rng, s, a)
			covs[k] = mat.NewSymDense(3, nil)
			covs[k].SymOuterK(1, a)
		}
		measure := func(p Precoder) ([]float64, []float64, *Received) {
			c := cfg
			c.Precoder = p
			rx, err := Transmit(rand.New(rand.NewPCG(9, 10)), c, samples)
			if err != nil {
				t.Fatal(err)
			}
			mse, se := make([]float64, rx.K), make([]float64, rx.K)
			for k := range rx.K {
				var a mat.Dense // z = A θ + ñ
				a.Scale(math.Sqrt(rx.Pk[k]), rx.Precoder(k))
				var sz mat.Dense
				sz.Product(&a, covs[k], a.T())
				for i := range rx.D {
					sz.Set(i, i, sz.At(i, i)+rx.CombinedNoise())
				}
				var gain, inv mat.Dense
				if err := inv.Inverse(&sz); err != nil {
					t.Fatal(err)
				}
				gain.Product(covs[k], a.T(), &inv)
				var est mat.Dense
				est.Mul(rx.Combine(k), gain.T())
				errs := make([]float64, rx.S)
				for i := range rx.S {
					for j := range rx.D {
						e := samples[k].At(i, j) - est.At(i, j)
						errs[i] += e * e
					}
				}
				m, sd := stat.MeanStdDev(errs, nil)
				mse[k], se[k] = m, sd/math.Sqrt(float64(rx.S))
			}
			return mse, se, rx
		}
		matched, se, rx := measure(Whiten)
		plain, plainSE, _ := measure(Identity)
		if !rx.FullRank() {
			t.Logf("%v: some directions sent without power (gains %v)", cfg.Fading, rx.DirGain)
		}
		for k := range rx.K {
			var eig mat.EigenSym
			eig.Factorize(covs[k], false)
			beta := 1.0
			if rx.Gain != nil {
				beta = rx.Gain[k]
			}
			l := float64(cfg.Repetition)
			want := MatchedMSE(eig.Values(nil), beta*cfg.Power/(cfg.InvGramMean()*l), rx.N0/l)
			// The identity precoder: q_i = Π λ_i/Σ_j λ_j on the same eigenvalues.
			vals := eig.Values(nil)
			var tr, identity float64
			for _, v := range vals {
				tr += v
			}
			budget := beta * cfg.Power / (cfg.InvGramMean() * l)
			for _, v := range vals {
				identity += v * (rx.N0 / l) / (budget*v/tr + rx.N0/l)
			}
			t.Logf("%v worker %d: matched MSE %.5f ± %.5f, (22.4) %.5f; identity %.5f ± %.5f, closed form %.5f", cfg.Fading, k+1, matched[k], se[k], want, plain[k], plainSE[k], identity)
			if math.Abs(matched[k]-want) > 4*se[k] {
				t.Errorf("%v worker %d: measured MSE %v ± %v, eq. (22.4) gives %v", cfg.Fading, k+1, matched[k], se[k], want)
			}
			if math.Abs(plain[k]-identity) > 4*plainSE[k] {
				t.Errorf("%v worker %d: identity precoder's measured MSE %v ± %v, closed form %v", cfg.Fading, k+1, plain[k], plainSE[k], identity)
			}
			if want > identity {
				t.Errorf("%v worker %d: eq. (22.4) %v above the identity precoder's %v", cfg.Fading, k+1, want, identity)
			}
		}
	}
}

// TestWhitenSideInformation: the moments' blocks come out of the budget as
// centring's means do (OMA: K·Budget = K·S' + used + idle, 0 ≤ idle < K;
// NOMA: Budget = S' + used), each of ⌈bits/c_k⌉ blocks; the precoder is a
// rotation with gains whose received powers follow eq. (22.3) on the
// samples' eigenvalues; NOMA shares one precoder; Decoder is the
// pseudo-inverse of Encoder and DecodedNoise its noise; a retransmission
// reuses the precoders and sends no moments; with centring the means'
// blocks are counted too.
func TestWhitenSideInformation(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const k, s, d = 3, 300, 3
	samples := make([]*mat.Dense, k)
	for w := range samples {
		samples[w] = gaussSamples(rng, s, d, float64(w+1))
	}
	for _, cfg := range []Config{
		{Access: OMA, Repetition: 1, Power: 1, SNRdB: 10, Precoder: Whiten},
		{Access: NOMA, Repetition: 2, Power: 1, SNRdB: 5, Precoder: Whiten},
		{Access: OMA, Fading: Rayleigh, ExtraTx: 2, Repetition: 1, Power: 1, SNRdB: 10, Precoder: Whiten, Centre: true, Complex: true},
		{Access: NOMA, Fading: Rayleigh, ExtraTx: 3, Repetition: 1, Power: 1, SNRdB: 0, Precoder: Whiten, Gains: LargeScale{OffsetDB: []float64{0, -3, 2}}},
	} {
		rx, err := Transmit(rng, cfg, samples)
		if err != nil {
			t.Fatal(err)
		}
		used, idle := rx.SideUses()
		var moments, means int
		for w := range k {
			gain := 1.0
			if rx.Gain != nil {
				gain = rx.Gain[w]
			}
			if want := int(math.Ceil(float64(rx.MomentBits[w]) / cfg.BlockBits(d, gain))); rx.MomentBlocks[w] != want {
				t.Errorf("%+v: worker %d's moment (%d bits) in %d blocks, want %d", cfg, w+1, rx.MomentBits[w], rx.MomentBlocks[w], want)
			}
			if rx.MomentBits[w] < d*(d+1)/2 {
				t.Errorf("%+v: worker %d's moment in %d bits, fewer than its %d entries", cfg, w+1, rx.MomentBits[w], d*(d+1)/2)
			}
			moments += rx.MomentBlocks[w]
			if rx.MeanBlocks != nil {
				means += rx.MeanBlocks[w]
			}
		}
		if used != moments+means || rx.Budget != s {
			t.Errorf("%+v: side uses %d, want %d + %d; budget %d, want %d", cfg, used, moments, means, rx.Budget, s)
		}
		switch cfg.Access {
		case OMA:
			if k*rx.Budget != k*rx.S+used+idle || idle < 0 || idle >= k {
				t.Errorf("OMA: K·Budget = %d, K·S + used + idle = %d·%d + %d + %d", k*rx.Budget, k, rx.S, used, idle)
			}
		case NOMA:
			if rx.Budget != rx.S+used || idle != 0 {
				t.Errorf("NOMA: Budget = %d, S + used = %d + %d, idle %d", rx.Budget, rx.S, used, idle)
			}
			for w := 1; w < k; w++ {
				if !mat.Equal(rx.Precoder(w), rx.Precoder(0)) {
					t.Errorf("NOMA: worker %d's precoder differs from worker 1's", w+1)
				}
			}
		}
		for w := range rx.Streams() {
			var gram mat.Dense
			gram.Mul(rx.Rotation[w].T(), rx.Rotation[w])
			if !mat.EqualApprox(&gram, eye(d), 1e-12) {
				t.Errorf("%+v: stream %d's rotation is not orthogonal", cfg, w+1)
			}
			var de mat.Dense
			de.Mul(rx.Decoder(w), rx.Encoder(w))
			if rx.FullRank() && !mat.EqualApprox(&de, eye(d), 1e-10) {
				t.Errorf("%+v: stream %d: Decoder·Encoder = %v, want I", cfg, w+1, mat.Formatted(&de))
			}
			var dd mat.Dense
			dec := rx.Decoder(w)
			dd.Mul(dec, dec.T())
			dd.Scale(rx.N0, &dd)
			if !mat.EqualApprox(&dd, rx.DecodedNoise(w), 1e-12*mat.Norm(&dd, 1)) {
				t.Errorf("%+v: stream %d: DecodedNoise differs from N0 E^†E^{†ᵀ}", cfg, w+1)
			}
		}
		if cfg.Access == OMA && !cfg.Centre {
			// Received power per direction, P_k f_i² λ_i on the sent rows'
			// second moment in the rotated basis, against eq. (22.3) on the
			// eigenvalues of the budget's rows (the moment's code perturbs
			// it by ≈ √ε of the smallest eigenvalue).
			for w := range k {
				var u mat.Dense
				u.Mul(samples[w].Slice(0, rx.S, 0, d), rx.Rotation[w])
				lambda := make([]float64, d)
				for i := range d {
					col := mat.Col(nil, i, &u)
					lambda[i] = stat.Moment(2, col, nil) + math.Pow(stat.Mean(col, nil), 2)
				}
				want, _ := MatchedAllocation(lambda, cfg.Power, rx.N0)
				for i := range d {
					got := rx.Pk[w] * rx.DirGain[w][i] * rx.DirGain[w][i] * lambda[i]
					if math.Abs(got-want[i]) > 0.05*cfg.Power {
						t.Errorf("worker %d direction %d: received power %v, eq. (22.3) %v (all: %v)", w+1, i+1, got, want[i], want)
					}
				}
			}
		}
		fresh := make([]*mat.Dense, k)
		for w := range fresh {
			fresh[w] = gaussSamples(rng, 50, d, float64(w+1))
		}
		again, err := Retransmit(rng, cfg, rx, fresh)
		if err != nil {
			t.Fatal(err)
		}
		if again.S != 50 || again.MomentBlocks != nil || !mat.Equal(again.Encoder(0), rx.Encoder(0)) {
			t.Errorf("%+v: retransmission sent %d rows, moment blocks %v, same encoder %v", cfg, again.S, again.MomentBlocks, mat.Equal(again.Encoder(0), rx.Encoder(0)))
		}
	}
}

// The whiten precoder's refusals: centring's limits (imperfect CSI,
// pilots, truncated inversion, Rician fading), several receive antennas, a
// retransmission that
// switches it, a budget its side information exhausts, and samples whose
// second moment is singular.
func TestWhitenRefusals(t *testing.T) {
	base := Config{Access: OMA, Fading: Rayleigh, ExtraTx: 2, Repetition: 1, Power: 1, SNRdB: 10, Precoder: Whiten}
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.CSI.ErrorVar = 0.1 }, "imperfect CSI"},
		{func(c *Config) { c.Pilots.On = true }, "imperfect CSI"},
		{func(c *Config) { c.Control.PeakPower = 10 }, "truncated inversion"},
		{func(c *Config) { c.Fading, c.Complex, c.KFactor = Rician, true, 3 }, "rician"},
		{func(c *Config) { c.Precoder = 7 }, "unknown precoder"},
		{func(c *Config) { c.RxAntennas = 2 }, "receive antennas"},
	} {
		cfg := base
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error mentioning %q", cfg, err, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(13, 14))
	samples := []*mat.Dense{gaussSamples(rng, 40, 3, 1), gaussSamples(rng, 40, 3, 2)}
	rx, err := Transmit(rng, base, samples)
	if err != nil {
		t.Fatal(err)
	}
	plain := base
	plain.Precoder = Identity
	if _, err := Retransmit(rng, plain, rx, samples); err == nil || !strings.Contains(err.Error(), "precoder") {
		t.Errorf("retransmit without the precoder over a whitened link: %v", err)
	}
	low := base
	low.SNRdB = -15
	if _, err := Transmit(rng, low, samples); !errors.Is(err, ErrMomentBudget) {
		t.Errorf("at −15 dB with 40 blocks: %v, want ErrMomentBudget", err)
	}
	flat := mat.NewDense(40, 3, nil) // rank one: every row (1, 1, 1)
	for i := range 40 {
		flat.SetRow(i, []float64{1, 1, 1})
	}
	if _, err := Transmit(rng, base, []*mat.Dense{samples[0], flat}); err == nil || !strings.Contains(err.Error(), "singular") {
		t.Errorf("rank-one samples: %v, want a singular second moment", err)
	}
}

// link.json carries the precoder: written, parsed and assembled again, the
// encoders are those of the link sent; a rotation that is not orthogonal,
// gains of the wrong length or precoder records without the precoder are
// refused.
func TestLinkPrecoderRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	samples := []*mat.Dense{gaussSamples(rng, 60, 2, 1), gaussSamples(rng, 60, 2, 3)}
	cfg := Config{Access: OMA, Repetition: 2, Power: 1, SNRdB: 8, Precoder: Whiten}
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
	back, err := l.Received(rx.Y, l.Signals)
	if err != nil {
		t.Fatal(err)
	}
	for k := range rx.K {
		if !mat.Equal(back.Encoder(k), rx.Encoder(k)) {
			t.Errorf("worker %d: encoder changed through link.json", k+1)
		}
	}
	if used, _ := back.SideUses(); back.Budget != rx.Budget || used == 0 {
		t.Errorf("budget %d and side uses %d after link.json, want %d and the moments' blocks", back.Budget, used, rx.Budget)
	}
	for _, c := range []struct {
		edit func(*Link)
		want string
	}{
		{func(l *Link) { l.Rotation[0][0][0] += 0.1 }, "orthonormal"},
		{func(l *Link) { l.DirGain[1] = l.DirGain[1][:1] }, "dimension"},
		{func(l *Link) { l.DirGain[0][0] = -1 }, "≥ 0"},
		{func(l *Link) { l.Precoder = "" }, "remove them"},
		{func(l *Link) { l.Precoder = "zf" }, "want \"whiten\""},
	} {
		bad, err := ParseLink(b)
		if err != nil {
			t.Fatal(err)
		}
		c.edit(&bad)
		enc, err := bad.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseLink(enc); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.want, err)
		}
	}
}
