package channel

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Received is what the server observes after one use of the uplink, plus the
// transmission settings it knows (E_k, P_k, N0, and the large-scale gains
// and outage marks when those models are on). Under imperfect CSI the server
// believes its channel knowledge is exact: it models y_k = E_k θ_k + n_k with
// these values, and the residual interference is not part of its model
// (docs/BEYOND.md note 12).
type Received struct {
	Access Access
	K      int // workers
	S      int // samples per worker (= received signals per stream)
	D      int // parameter dimension d
	Mr     int // received symbols per block, l·d
	L      int // repetition factor l of B = 1_l ⊗ I_d
	// Pk holds P_k for each worker (E_k = √P_k B). Under NOMA every entry is
	// min_k P_k, the common alignment. P_k includes the worker's large-scale
	// gain β_k (docs/BEYOND.md eq. (13.2)).
	Pk []float64
	// N0 is the noise variance per received symbol, the same for every
	// worker and stream: the receiver's noise.
	N0 float64
	// Y holds the received signals as rows: under OMA K matrices S×m_r
	// (one stream per worker), under NOMA a single S×m_r matrix.
	Y []*mat.Dense
	// TxPower is the measured mean of ‖x_k‖² over worker k's S blocks,
	// counting blocks not sent as 0 (nil when the simulation does not draw
	// the channel: perfect CSI without power control and not physical).
	TxPower []float64
	// Power is P, the transmit power budget (eq: power constraint).
	Power float64
	// Gain holds the large-scale power gain β_k of each worker, whose
	// received SNR is β_k·SNR(); nil when every β_k = 1 (docs/BEYOND.md
	// note 13).
	Gain []float64
	// Outage[k][s] reports that worker k did not send block s (truncated
	// inversion, docs/BEYOND.md note 15): under OMA row s of Y[k] is noise
	// only, under NOMA row s of Y[0] lacks worker k's signal. nil without
	// power control; Delivered removes the marked blocks.
	Outage [][]bool
	// Residual is the measured mean power per received symbol of worker k's
	// residual interference (H_k Ĥ_k^† − I) E_k θ_k over the blocks it sent;
	// nil under perfect CSI. For analysis: the server does not know it.
	Residual []float64

	// Mean-centred transmission (Config.Centre, docs/BEYOND.md note 17);
	// all nil (Budget 0) without. Y then carries E_k(θ_k − m_k) + n_k.
	//
	// Mean[k] is m̂_k, worker k's mean as the server decoded it: m_k plus an
	// error uniform on [−Δ_k/2, Δ_k/2] per coordinate, of variance
	// MeanVar[k] = Δ_k²/12.
	Mean    [][]float64
	MeanVar []float64
	// MeanBits[k] is the length of worker k's mean codeword and
	// MeanBlocks[k] the blocks that carried it (nil on a retransmission,
	// which reuses the means).
	MeanBits, MeanBlocks []int
	// Budget is the blocks the samples had before the means took theirs:
	// per worker under OMA, in all under NOMA (MeanUses).
	Budget int
	// Centre[k] is the m_k worker k subtracted, for simulation and
	// analysis: the server knows Mean.
	Centre [][]float64

	// Pilots is how the charged pilots split the budget (Config.Pilots,
	// docs/MATH.md note 20): S is then its Samples. nil without charged
	// pilots, on a retransmission and on the views Rows and Delivered.
	Pilots *PilotBudget
	// CSIGain and CSINoise are what the server knows of each worker's
	// channel-estimate error (docs/MATH.md eq. (20.4)): given the estimate,
	// y_k = a_k E_k θ_k + r_k + n_k with a_k = CSIGain[k] and r_k white of
	// variance CSINoise[k] = s_k² ε_k/κ per real symbol, ε_k the mean of
	// ‖Ĥ_k^† E_k θ_k‖² over the blocks sent (docs/BEYOND.md eq. (12.9)).
	// Exact for Rayleigh fading and for the MMSE estimate (a_k = 1); with
	// Rician fading and the additive-error model the line-of-sight term
	// (1 − a_k) μ 1 1ᵀ Ĥ_k^† t is left out. nil under perfect CSI.
	CSIGain, CSINoise []float64

	// The matched precoder (Config.Precoder, docs/MATH.md note 22); all nil
	// without. Worker k sent √P_k B F_k θ, F_k = diag(DirGain[k])
	// Rotation[k]ᵀ, with Rotation[k] (d×d, orthogonal) and DirGain[k] (d
	// gains ≥ 0) computed from the second moment the server decoded; under
	// NOMA every entry is the one shared precoder. MomentBits[k] and
	// MomentBlocks[k] are the length of worker k's moment code and the
	// blocks that carried it (nil on a retransmission); Budget is then the
	// blocks before the side information.
	Rotation                 []*mat.Dense
	DirGain                  [][]float64
	MomentBits, MomentBlocks []int
}

// Streams is the number of received streams: K under OMA, 1 under NOMA.
func (r *Received) Streams() int { return len(r.Y) }

// Basis returns B = 1_l ⊗ I_d (m_r×d), which satisfies BᵀB = l·I.
func (r *Received) Basis() *mat.Dense { return basis(r.L, r.D) }

// Encoder returns E = √P_k B for stream k, or √P_k B F_k with the matched
// precoder (Precoder).
func (r *Received) Encoder(k int) *mat.Dense {
	e := r.basisEncoder(k)
	if r.Rotation == nil {
		return e
	}
	var out mat.Dense
	out.Mul(e, r.Precoder(k))
	return &out
}

// basisEncoder returns √P_k B, the encoder of stream k's symbols (the
// samples, or their precoded coordinates).
func (r *Received) basisEncoder(k int) *mat.Dense {
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
// (and, under the path-loss model, the worker distances) from rng. The
// power scales P_k are computed from the samples (eq: approx pc, or
// docs/BEYOND.md eq. (15.5) under truncated inversion), aligned on min_k P_k
// under NOMA.
//
// With cfg.Centre the samples' rows are the worker's budget of blocks: it
// sends its mean first and then as many of its first rows, minus the mean,
// as the blocks left allow (centre.go); Received.S counts those. The whiten
// precoder sends each worker's second moment the same way before its
// precoded rows (precoder.go).
func Transmit(rng *rand.Rand, cfg Config, samples []*mat.Dense) (*Received, error) {
	return transmit(rng, cfg, samples, nil)
}

// Retransmit sends new samples over a fresh realisation of the link that
// produced rx: same encoders E_k = √P_k B (P_k are not recomputed), same
// noise level and large-scale gains, new channel matrices and noise (and,
// under truncated inversion, cutoffs that keep the new samples within the
// peak power). A map learned on rx applies unchanged to the result. On a
// centred link every row is sent minus the worker's centre m_k of rx, and
// the means are not sent again; with the matched precoder every row is
// precoded with rx's F_k, the moments not sent again.
func Retransmit(rng *rand.Rand, cfg Config, rx *Received, samples []*mat.Dense) (*Received, error) {
	if rx == nil {
		return nil, fmt.Errorf("retransmit: nil link (rx)")
	}
	if len(samples) != rx.K {
		return nil, fmt.Errorf("retransmit: %d workers, the link had %d", len(samples), rx.K)
	}
	if cfg.Centre != (rx.Centre != nil) {
		return nil, fmt.Errorf("retransmit: centre = %v, but the link was sent with centre = %v", cfg.Centre, rx.Centre != nil)
	}
	if (cfg.Precoder == Whiten) != (rx.Rotation != nil) {
		return nil, fmt.Errorf("retransmit: precoder %v, but the link was sent with the whiten precoder %v", cfg.Precoder, map[bool]string{true: "on", false: "off"}[rx.Rotation != nil])
	}
	cfg.Access = rx.Access
	return transmit(rng, cfg, samples, rx)
}

// transmit sends samples; prev, when not nil, is the link to send them
// over again: its encoders, large-scale gains (nil: all 1) and centres are
// reused rather than computed or drawn.
func transmit(rng *rand.Rand, cfg Config, samples []*mat.Dense, prev *Received) (*Received, error) {
	var pk, gains []float64
	sameLink := prev != nil
	if sameLink {
		pk, gains = prev.Pk, prev.Gain
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	k := len(samples)
	if k == 0 {
		return nil, fmt.Errorf("no workers")
	}
	for i, m := range samples {
		if m == nil {
			return nil, fmt.Errorf("worker %d: nil sample matrix", i+1)
		}
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
	var budget *PilotBudget
	if cfg.Pilots.On && !sameLink {
		b, err := cfg.SplitBudget(k, s, d)
		if err != nil {
			return nil, err
		}
		budget = &b
	}
	cfg = cfg.ResolvePilots(d)
	if err := cfg.checkPilots(d); err != nil {
		return nil, err
	}
	mr, _ := cfg.Dims(d)
	rx := &Received{Access: cfg.Access, K: k, S: s, D: d, Mr: mr, L: cfg.Repetition, N0: cfg.N0(d), Power: cfg.Power}
	if math.IsInf(rx.N0, 0) || !(rx.N0 > 0) {
		return nil, fmt.Errorf("SNR = %v dB with P = %v and m_r = %d gives the noise variance N0 = P/(m_r·10^(SNR/10)) = %v, outside floating point: choose an SNR nearer 0 dB", cfg.SNRdB, cfg.Power, mr, rx.N0)
	}
	if !sameLink {
		var err error
		if gains, err = cfg.Gains.gains(rng, k); err != nil {
			return nil, err
		}
	} else if gains != nil && len(gains) != k {
		return nil, fmt.Errorf("retransmit: %d large-scale gains for %d workers", len(gains), k)
	}
	links := make([]workerLink, k)
	for i := range links {
		b := 1.0
		if gains != nil {
			b = gains[i]
		}
		links[i] = cfg.workerLink(b)
	}
	if gains != nil {
		rx.Gain = append([]float64(nil), gains...)
	}
	if cfg.rxAntennas() > 1 {
		// The workers of a block share the beamformer: one under OMA, all
		// k under NOMA (docs/MATH.md (21.3)–(21.4)).
		workers := 1
		if cfg.Access == NOMA {
			workers = k
		}
		g := cfg.CombinedInvGram(d, workers)
		for i := range links {
			links[i].rxGram = g
		}
	}
	whiten := cfg.Precoder == Whiten
	switch {
	case cfg.Centre && sameLink:
		if len(prev.Centre) != k {
			return nil, fmt.Errorf("retransmit: %d centres for %d workers", len(prev.Centre), k)
		}
		samples = fluctuations(samples, prev.Centre, s)
		rx.Mean, rx.MeanVar, rx.Centre = prev.Mean, prev.MeanVar, prev.Centre
	case cfg.Centre:
		c, err := cfg.centre(rng, samples, gains)
		if err != nil {
			return nil, err
		}
		rows := c.sent
		if whiten {
			rows = c.budget // the moments are of the fluctuations of every row
		}
		s = c.sent
		samples = fluctuations(samples, c.centre, rows)
		rx.S = s
		rx.Mean, rx.MeanVar, rx.MeanBits, rx.MeanBlocks = c.mean, c.meanVar, c.bits, c.blocks
		rx.Budget, rx.Centre = c.budget, c.centre
	}
	switch {
	case whiten && sameLink:
		if len(prev.Rotation) != k || len(prev.DirGain) != k {
			return nil, fmt.Errorf("retransmit: %d precoders for %d workers", len(prev.Rotation), k)
		}
		rx.Rotation, rx.DirGain = prev.Rotation, prev.DirGain
		samples = precode(samples, rx.Rotation, rx.DirGain, s)
	case whiten:
		rows, _ := samples[0].Dims()
		m, err := cfg.matchedPrecoders(rng, samples, gains, rx.MeanBlocks)
		if err != nil {
			return nil, err
		}
		s = m.sent
		samples = precode(samples, m.rot, m.gain, s)
		rx.S, rx.Budget = s, rows
		rx.Rotation, rx.DirGain, rx.MomentBits, rx.MomentBlocks = m.rot, m.gain, m.bits, m.blocks
	}
	if budget != nil {
		s = budget.Samples
		cut := make([]*mat.Dense, k)
		for i, m := range samples {
			cut[i] = m.Slice(0, s, 0, d).(*mat.Dense)
		}
		samples = cut
		rx.S, rx.Pilots = s, budget
	}
	truncated := cfg.Control.PeakPower > 0
	rx.Pk = make([]float64, k)
	if pk != nil {
		copy(rx.Pk, pk)
	} else {
		for i, m := range samples {
			var p float64
			if truncated {
				var err error
				if p, err = cfg.truncatedScale(m, links[i]); err != nil {
					return nil, fmt.Errorf("worker %d: %w", i+1, err)
				}
			} else {
				p = cfg.powerScale(m, links[i])
			}
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
	if truncated {
		rx.Outage = make([][]bool, k)
		for i, m := range samples {
			_, mx := sampleNorms(m, cfg.Repetition)
			links[i].cutoff = cfg.cutoffFor(rx.Pk[i], mx, links[i])
			rx.Outage[i] = make([]bool, s)
		}
	}
	imperfect := cfg.CSI.imperfect()
	coherence := cfg.coherence()
	// Rician fading with imperfect CSI has no equivalent form, nor has
	// block fading with imperfect CSI or truncation, nor imperfect CSI
	// with several receive antennas: simulate them.
	array := cfg.rxAntennas() > 1 && (cfg.Physical || imperfect)
	physical := !array && cfg.Fading != Flat && (cfg.Physical || (imperfect && cfg.Fading == Rician) || (coherence > 1 && (imperfect || truncated)))
	equivalent := !array && !physical && (imperfect || truncated)
	var zf *zfLink
	var held []*zfLink // block fading: each worker's channel, held over an interval
	var eq *equivLink
	var arr *arrayLink
	switch {
	case array:
		streams := 1
		if cfg.Access == OMA {
			streams = k
		}
		arr = newArrayLink(cfg, mr, k, streams)
	case physical && coherence > 1:
		held = make([]*zfLink, k)
		for i := range held {
			held[i] = newZFLink(cfg, mr)
		}
	case physical:
		zf = newZFLink(cfg, mr)
	case equivalent:
		eq = newEquivLink(cfg, rng)
	}
	if physical || equivalent || array {
		rx.TxPower = make([]float64, k)
	}
	if imperfect {
		rx.Residual = make([]float64, k)
		rx.CSIGain = make([]float64, k)
		rx.CSINoise = make([]float64, k)
		kappa := 1.0
		if cfg.Complex {
			kappa = 2
		}
		for i, m := range samples {
			rx.CSIGain[i] = links[i].a
			rx.CSINoise[i] = links[i].s2 * cfg.blockEnergy(m, rx.Pk[i], links[i]) / kappa
		}
	}
	sent := make([]int, k)
	enc := make([]*mat.Dense, k)
	for i := range enc {
		enc[i] = rx.basisEncoder(i) // the samples are the precoded symbols
	}
	sigma := math.Sqrt(rx.N0)
	everyWorker := make([]int, k)
	for i := range everyWorker {
		everyWorker[i] = i
	}
	// noise adds the receiver's noise to a block of the given stream:
	// combined by the stream's beamformer with several receive antennas.
	noise := func(row []float64, stream int) {
		if arr != nil {
			arr.addNoise(rng, row, stream, sigma)
			return
		}
		addNoise(rng, row, sigma)
	}
	tx := mat.NewVecDense(mr, nil) // E_k θ_k: the symbols the receiver should see
	var sendErr error              // the first error of a physical draw; the blocks after it are not sent
	send := func(dst []float64, worker, block int, theta []float64) {
		if sendErr != nil {
			return
		}
		tx.MulVec(enc[worker], mat.NewVecDense(d, theta))
		t := tx.RawVector().Data
		var energy, resid float64
		ok := true
		switch {
		case array:
			if block%coherence == 0 && (cfg.Access == OMA || worker == 0) {
				ws, stream := everyWorker, 0
				if cfg.Access == OMA {
					ws, stream = []int{worker}, worker
				}
				if err := arr.draw(rng, ws, links, stream); err != nil {
					sendErr = fmt.Errorf("worker %d, block %d: %w", worker+1, block+1, err)
					return
				}
			}
			energy, resid, ok = arr.eff[worker].apply(dst, t, links[worker])
		case physical:
			z := zf
			if held != nil {
				z = held[worker]
			}
			if block%coherence == 0 {
				if err := z.draw(rng, links[worker]); err != nil {
					sendErr = fmt.Errorf("worker %d, block %d: %w", worker+1, block+1, err)
					return
				}
			}
			energy, resid, ok = z.apply(dst, t, links[worker])
		case equivalent:
			energy, resid, ok = eq.send(dst, t, links[worker])
		default:
			for i, v := range t {
				dst[i] += v
			}
			return
		}
		rx.TxPower[worker] += energy
		if !ok {
			rx.Outage[worker][block] = true
			return
		}
		sent[worker]++
		if rx.Residual != nil {
			rx.Residual[worker] += resid
		}
	}
	switch cfg.Access {
	case OMA:
		rx.Y = make([]*mat.Dense, k)
		for w := range k {
			y := mat.NewDense(s, mr, nil)
			for b := range s {
				row := y.RawRowView(b)
				send(row, w, b, samples[w].RawRowView(b))
				noise(row, w)
			}
			rx.Y[w] = y
		}
	case NOMA:
		y := mat.NewDense(s, mr, nil)
		for b := range s {
			row := y.RawRowView(b)
			for w := range k {
				send(row, w, b, samples[w].RawRowView(b))
			}
			noise(row, 0)
		}
		rx.Y = []*mat.Dense{y}
	}
	if sendErr != nil {
		return nil, sendErr
	}
	for i := range rx.TxPower {
		rx.TxPower[i] /= float64(s)
	}
	for i := range rx.Residual {
		if sent[i] > 0 {
			rx.Residual[i] /= float64(sent[i])
		}
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
	out.Residual = nil
	out.Pilots = nil
	if r.Outage != nil {
		out.Outage = make([][]bool, len(r.Outage))
		for k, o := range r.Outage {
			out.Outage[k] = o[i:j]
		}
	}
	out.Y = make([]*mat.Dense, len(r.Y))
	for k, y := range r.Y {
		out.Y[k] = y.Slice(i, j, 0, r.Mr).(*mat.Dense)
	}
	return &out
}

// WorkerSNR returns the received SNR of worker k, β_k P/(m_r N0): SNR()
// scaled by its large-scale gain.
func (r *Received) WorkerSNR(k int) float64 {
	if r.Gain == nil {
		return r.SNR()
	}
	return r.Gain[k] * r.SNR()
}

// Delivered returns the signals without the blocks marked in Outage, for
// the schemes, which take every row as a sample: under OMA each worker's
// stream keeps the blocks it sent, cut to the smallest count over the
// workers (re-pairing blocks across workers is harmless: their samples are
// independent, and the outage does not depend on them, docs/BEYOND.md
// note 15); under NOMA only the blocks that every worker sent are kept. It
// returns r itself when nothing is marked, and an error when no block is
// left.
func (r *Received) Delivered() (*Received, error) {
	if r.Outage == nil {
		return r, nil
	}
	keep := make([][]int, len(r.Y))
	n := r.S
	for k := range r.Y {
		for s := range r.S {
			lost := false
			if r.Access == OMA {
				lost = r.Outage[k][s]
			} else {
				for _, o := range r.Outage {
					lost = lost || o[s]
				}
			}
			if !lost {
				keep[k] = append(keep[k], s)
			}
		}
		n = min(n, len(keep[k]))
	}
	if n == 0 {
		return nil, fmt.Errorf("every block of some stream was lost to outage: nothing delivered")
	}
	out := *r
	out.S = n
	out.Outage = nil
	out.Pilots = nil
	out.Y = make([]*mat.Dense, len(r.Y))
	for k, y := range r.Y {
		out.Y[k] = mat.NewDense(n, r.Mr, nil)
		for i, s := range keep[k][:n] {
			out.Y[k].SetRow(i, y.RawRowView(s))
		}
	}
	return &out, nil
}
