package channel

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Received is what the server observes after one use of the uplink, plus the
// transmission settings it knows (E_k, P_k, N0).
type Received struct {
	Access Access
	K      int // workers
	S      int // samples per worker (= received signals per stream)
	D      int // parameter dimension d
	Mr     int // received symbols per block, l·d
	L      int // repetition factor l of B = 1_l ⊗ I_d
	// Pk holds P_k for each worker (E_k = √P_k B). Under NOMA every entry is
	// min_k P_k, the common alignment.
	Pk []float64
	N0 float64
	// Y holds the received signals as rows: under OMA K matrices S×m_r
	// (one stream per worker), under NOMA a single S×m_r matrix.
	Y []*mat.Dense
	// TxPower is the measured mean of ‖x_k‖² over worker k's blocks
	// (physical simulation only; nil otherwise).
	TxPower []float64
	// Power is P, the transmit power budget (eq: power constraint).
	Power float64
}

// Streams is the number of received streams: K under OMA, 1 under NOMA.
func (r *Received) Streams() int { return len(r.Y) }

// Basis returns B = 1_l ⊗ I_d (m_r×d), which satisfies BᵀB = l·I.
func (r *Received) Basis() *mat.Dense { return basis(r.L, r.D) }

// Encoder returns E = √P_k B for stream k.
func (r *Received) Encoder(k int) *mat.Dense {
	e := basis(r.L, r.D)
	e.Scale(math.Sqrt(r.Pk[k]), e)
	return e
}

// Combine returns z = Bᵀ y / l for every signal of stream k (S×d): the
// repetitions averaged, z = √P_k θ_k + ñ with ñ ~ N(0, (N0/l) I) under OMA
// (docs/MATH.md note 4), and z = √P Σ_k θ_k + ñ under NOMA.
func (r *Received) Combine(k int) *mat.Dense {
	z := mat.NewDense(r.S, r.D, nil)
	y := r.Y[k]
	inv := 1 / float64(r.L)
	for s := 0; s < r.S; s++ {
		src := y.RawRowView(s)
		dst := z.RawRowView(s)
		for j := 0; j < r.L; j++ {
			for i, v := range src[j*r.D : (j+1)*r.D] {
				dst[i] += v
			}
		}
		for i := range dst {
			dst[i] *= inv
		}
	}
	return z
}

// CombinedNoise is the noise variance N0/l of Combine's output.
func (r *Received) CombinedNoise() float64 { return r.N0 / float64(r.L) }

func basis(l, d int) *mat.Dense {
	b := mat.NewDense(l*d, d, nil)
	for j := 0; j < l; j++ {
		for i := 0; i < d; i++ {
			b.Set(j*d+i, i, 1)
		}
	}
	return b
}

// Transmit sends every worker's samples (K matrices S×d, row s sent in
// block s) over the uplink described by cfg, drawing channels and noise
// from rng. The power scales P_k are computed from the samples
// (eq: approx pc), aligned on min_k P_k under NOMA.
func Transmit(rng *rand.Rand, cfg Config, samples []*mat.Dense) (*Received, error) {
	return transmit(rng, cfg, samples, nil)
}

// Retransmit sends new samples over a fresh realisation of the link that
// produced rx: same encoders E_k = √P_k B (P_k are not recomputed), same
// noise level, new channel matrices and noise. A map learned on rx applies
// unchanged to the result.
func Retransmit(rng *rand.Rand, cfg Config, rx *Received, samples []*mat.Dense) (*Received, error) {
	if len(samples) != rx.K {
		return nil, fmt.Errorf("retransmit: %d workers, the link had %d", len(samples), rx.K)
	}
	cfg.Access = rx.Access
	return transmit(rng, cfg, samples, rx.Pk)
}

func transmit(rng *rand.Rand, cfg Config, samples []*mat.Dense, pk []float64) (*Received, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	k := len(samples)
	if k == 0 {
		return nil, fmt.Errorf("no workers")
	}
	s, d := samples[0].Dims()
	for i, m := range samples {
		r, c := m.Dims()
		if r != s || c != d {
			return nil, fmt.Errorf("worker %d sent %d×%d samples, worker 1 sent %d×%d", i+1, r, c, s, d)
		}
		if !allFinite(m) {
			return nil, fmt.Errorf("worker %d: samples contain NaN or Inf", i+1)
		}
	}
	if s < 1 {
		return nil, fmt.Errorf("no samples to send")
	}
	mr, mt := cfg.Dims(d)
	rx := &Received{Access: cfg.Access, K: k, S: s, D: d, Mr: mr, L: cfg.Repetition, N0: cfg.N0(d), Power: cfg.Power}
	if math.IsInf(rx.N0, 0) || !(rx.N0 > 0) {
		return nil, fmt.Errorf("SNR = %v dB with P = %v and m_r = %d gives the noise variance N0 = P/(m_r·10^(SNR/10)) = %v, outside floating point: choose an SNR nearer 0 dB", cfg.SNRdB, cfg.Power, mr, rx.N0)
	}
	rx.Pk = make([]float64, k)
	if pk != nil {
		copy(rx.Pk, pk)
	} else {
		for i, m := range samples {
			p := cfg.PowerScale(m)
			if math.IsInf(p, 0) || !(p > 0) {
				return nil, fmt.Errorf("worker %d: %s", i+1, powerScaleProblem(m))
			}
			rx.Pk[i] = p
		}
	}
	if cfg.Access == NOMA {
		pmin := rx.Pk[0]
		for _, p := range rx.Pk {
			pmin = math.Min(pmin, p)
		}
		for i := range rx.Pk {
			rx.Pk[i] = pmin
		}
	}
	physical := cfg.Physical && cfg.Fading == Rayleigh
	var link *zfLink
	if physical {
		link = newZFLink(mr, mt)
		rx.TxPower = make([]float64, k)
	}
	enc := make([]*mat.Dense, k)
	for i := range enc {
		enc[i] = rx.Encoder(i)
	}
	sigma := math.Sqrt(rx.N0)
	tx := mat.NewVecDense(mr, nil) // E_k θ_k: the symbols the receiver should see
	send := func(dst []float64, worker int, theta []float64) {
		tx.MulVec(enc[worker], mat.NewVecDense(d, theta))
		if physical {
			rx.TxPower[worker] += link.send(rng, dst, tx.RawVector().Data)
			return
		}
		for i, v := range tx.RawVector().Data {
			dst[i] += v
		}
	}
	switch cfg.Access {
	case OMA:
		rx.Y = make([]*mat.Dense, k)
		for w := range k {
			y := mat.NewDense(s, mr, nil)
			for b := range s {
				row := y.RawRowView(b)
				send(row, w, samples[w].RawRowView(b))
				addNoise(rng, row, sigma)
			}
			rx.Y[w] = y
		}
	case NOMA:
		y := mat.NewDense(s, mr, nil)
		for b := range s {
			row := y.RawRowView(b)
			for w := range k {
				send(row, w, samples[w].RawRowView(b))
			}
			addNoise(rng, row, sigma)
		}
		rx.Y = []*mat.Dense{y}
	}
	for i := range rx.TxPower {
		rx.TxPower[i] /= float64(s)
	}
	return rx, nil
}

// Ideal returns the noiseless, uncoded reception of the samples themselves
// (OMA, E_k = I, N0 = 0): the setting of classical CMC.
func Ideal(samples []*mat.Dense) *Received {
	s, d := samples[0].Dims()
	rx := &Received{Access: OMA, K: len(samples), S: s, D: d, Mr: d, L: 1}
	rx.Pk = make([]float64, len(samples))
	rx.Y = make([]*mat.Dense, len(samples))
	for i, m := range samples {
		rx.Pk[i] = 1
		rx.Y[i] = mat.DenseCopyOf(m)
	}
	return rx
}

// powerScaleProblem says why P_k = P S / (g l Σ_s ‖θ_s‖²) is not a positive
// finite number for samples theta: all zero, or Σ‖θ_s‖² beyond floating
// point (samples too large or too small, not zero).
func powerScaleProblem(theta *mat.Dense) string {
	var largest float64
	r, _ := theta.Dims()
	for i := range r {
		for _, v := range theta.RawRowView(i) {
			largest = math.Max(largest, math.Abs(v))
		}
	}
	switch {
	case largest == 0:
		return "samples are all zero, power scale P_k undefined"
	case largest > 1:
		return fmt.Sprintf("samples too large (largest |θ| = %g): Σ_s ‖θ_s‖² overflows floating point, so the power scale P_k cannot be computed; rescale the samples", largest)
	default:
		return fmt.Sprintf("samples too small (largest |θ| = %g, not zero): Σ_s ‖θ_s‖² underflows floating point, so the power scale P_k cannot be computed; rescale the samples", largest)
	}
}

func addNoise(rng *rand.Rand, row []float64, sigma float64) {
	if sigma == 0 {
		return
	}
	for i := range row {
		row[i] += sigma * rng.NormFloat64()
	}
}

func allFinite(m *mat.Dense) bool {
	r, _ := m.Dims()
	for i := 0; i < r; i++ {
		for _, v := range m.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
	}
	return true
}

// zfLink simulates one block over a fresh Rayleigh channel with
// zero-forcing precoding, reusing its buffers.
type zfLink struct {
	mr, mt int
	h      *mat.Dense
	gram   mat.SymDense
	chol   mat.Cholesky
	a, x   *mat.VecDense
	hx     *mat.VecDense
}

func newZFLink(mr, mt int) *zfLink {
	return &zfLink{
		mr: mr, mt: mt,
		h:  mat.NewDense(mr, mt, nil),
		a:  mat.NewVecDense(mr, nil),
		x:  mat.NewVecDense(mt, nil),
		hx: mat.NewVecDense(mr, nil),
	}
}

// send draws H (i.i.d. N(0,1)), precodes x = H^†t = Hᵀ(HHᵀ)^{-1}t, adds
// H x to dst, and returns the transmit energy ‖x‖².
func (z *zfLink) send(rng *rand.Rand, dst, t []float64) float64 {
	for {
		raw := z.h.RawMatrix().Data
		for i := range raw {
			raw[i] = rng.NormFloat64()
		}
		z.gram.SymOuterK(1, z.h)
		if z.chol.Factorize(&z.gram) {
			break
		}
		// A singular draw has probability zero; draw again.
	}
	if err := z.chol.SolveVecTo(z.a, mat.NewVecDense(z.mr, t)); err != nil {
		// Only a condition warning is possible after a successful
		// factorisation: an ill-conditioned H needs a large x, which is
		// the physics of zero-forcing, so the solution is kept.
		if _, ok := err.(mat.Condition); !ok {
			panic(err)
		}
	}
	z.x.MulVec(z.h.T(), z.a)
	z.hx.MulVec(z.h, z.x)
	for i, v := range z.hx.RawVector().Data {
		dst[i] += v
	}
	return mat.Dot(z.x, z.x)
}

// SNR is P/(m_r N0), the convention of docs/MATH.md note 3.
func (r *Received) SNR() float64 { return r.Power / (float64(r.Mr) * r.N0) }

// Rows returns the signals i, …, j−1 of every stream as a Received that
// shares r's storage (for holding part of the signals out).
func (r *Received) Rows(i, j int) *Received {
	if i < 0 || j > r.S || i >= j {
		panic(fmt.Sprintf("channel: rows [%d, %d) of %d signals", i, j, r.S))
	}
	out := *r
	out.S = j - i
	out.TxPower = nil
	out.Y = make([]*mat.Dense, len(r.Y))
	for k, y := range r.Y {
		out.Y[k] = y.Slice(i, j, 0, r.Mr).(*mat.Dense)
	}
	return &out
}
