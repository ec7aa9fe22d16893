package channel

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/gonum/mat"
)

// LinkFormat identifies a link.json file; LinkFileName is its name beside
// the received signals.
const (
	LinkFormat   = "wcmc-link/1"
	LinkFileName = "link.json"
)

// Link is the sidecar link.json of received signals written to files: what
// the server knows about the transmission (E_k = √P_k B, N0) and how it was
// simulated, with the names of the signal files.
type Link struct {
	Format     string  `json:"format"`
	Access     string  `json:"access"`
	Fading     string  `json:"fading"`
	Repetition int     `json:"repetition"` // l in B = 1_l ⊗ I_d
	ExtraTx    int     `json:"extra_tx"`   // m_t − m_r (Rayleigh)
	Physical   bool    `json:"physical"`
	Power      float64 `json:"P"`      // transmit power budget
	SNRdB      float64 `json:"snr_db"` // 10 log10(P/(m_r N0))
	N0         float64 `json:"N0"`     // noise variance per received symbol
	// Pk holds P_k of each worker (E_k = √P_k B); under NOMA all equal
	// min_k P_k.
	Pk []float64 `json:"P_k"`
	D  int       `json:"d"`
	K  int       `json:"K"`
	S  int       `json:"S"`
	Mr int       `json:"m_r"`
	// Signals are the received-signal files relative to the link file: K
	// files (S×m_r) under OMA, one under NOMA.
	Signals []string `json:"signals"`
	Seed    uint64   `json:"seed"`
	// Samples are the workers' sample files that were sent (provenance).
	Samples []string `json:"samples"`
	// TxPower is the measured mean ‖x_k‖² per worker (physical simulation).
	TxPower []float64 `json:"tx_power,omitempty"`
	// The models beyond the paper (docs/BEYOND.md), omitted when off.
	Complex    bool    `json:"complex,omitempty"`
	KFactor    float64 `json:"k_factor,omitempty"`     // Rician K
	CSIError   float64 `json:"csi_error,omitempty"`    // σ_e² of Ĥ = H + E
	PilotLen   int     `json:"pilot_len,omitempty"`    // L_p (MMSE estimate)
	PilotSNRdB float64 `json:"pilot_snr_db,omitempty"` // ρ_p in dB
	PeakPower  float64 `json:"peak_power,omitempty"`   // P_peak (truncated inversion)
	// Gain holds the large-scale power gain β_k of each worker.
	Gain []float64 `json:"gain,omitempty"`
	// Outage lists, per worker, the blocks it did not send (0-based).
	Outage [][]int `json:"outage,omitempty"`
	// Residual is the measured residual-interference power per symbol
	// per worker (imperfect CSI).
	Residual []float64 `json:"residual,omitempty"`
	// Mean-centred transmission (docs/BEYOND.md note 17): the signals
	// carry E_k(θ_k − m_k) + n_k and Mean holds the m̂_k the server decoded
	// (K×d), with their error variance per coordinate, codeword bits and
	// blocks; Budget is the blocks the samples had before the means'.
	Centre     bool        `json:"centre,omitempty"`
	Mean       [][]float64 `json:"mean,omitempty"`
	MeanVar    []float64   `json:"mean_var,omitempty"`
	MeanBits   []int       `json:"mean_bits,omitempty"`
	MeanBlocks []int       `json:"mean_blocks,omitempty"`
	Budget     int         `json:"budget,omitempty"`
	// Block fading and charged pilots (docs/MATH.md note 20): the sample
	// blocks per channel realisation (omitted for 1), how the pilots split
	// the budget, the pilots' SNR over the data SNR in dB, and what the
	// server knows of each worker's estimate error (Received.CSIGain,
	// CSINoise).
	Coherence    int          `json:"coherence,omitempty"`
	Pilots       *PilotBudget `json:"pilots,omitempty"`
	PilotBoostDB float64      `json:"pilot_boost_db,omitempty"`
	CSIGain      []float64    `json:"csi_gain,omitempty"`
	CSINoise     []float64    `json:"csi_noise,omitempty"`
	// RxAntennas is N_r, the server's receive antennas per received
	// dimension, omitted for 1 (docs/MATH.md note 21): the signals are
	// the beamformer's outputs, of noise N0 per symbol as with one.
	RxAntennas int `json:"rx_antennas,omitempty"`
	// The matched precoder (docs/MATH.md note 22): "whiten", each worker's
	// rotation U_k (K×d×d) and gains f (K×d), so that stream k carries
	// √P_k B diag(f) U_kᵀ θ_k + n_k, and the bits and blocks of the
	// moments' code; Budget is then the blocks before the side information.
	Precoder     string        `json:"precoder,omitempty"`
	Rotation     [][][]float64 `json:"rotation,omitempty"`
	DirGain      [][]float64   `json:"dir_gain,omitempty"`
	MomentBits   []int         `json:"moment_bits,omitempty"`
	MomentBlocks []int         `json:"moment_blocks,omitempty"`
}

// NewLink describes rx, sent over cfg with the given seed, its signal
// files named by SignalNames.
func NewLink(cfg Config, rx *Received, seed uint64) Link {
	l := Link{
		Format: LinkFormat, Access: rx.Access.String(), Fading: cfg.Fading.String(),
		Repetition: cfg.Repetition, ExtraTx: cfg.ExtraTx, Physical: cfg.Physical, Power: cfg.Power, SNRdB: cfg.SNRdB,
		N0: rx.N0, Pk: rx.Pk, D: rx.D, K: rx.K, S: rx.S, Mr: rx.Mr, Seed: seed, TxPower: rx.TxPower,
		Signals: SignalNames(rx.Access, rx.Streams()),
		Complex: cfg.Complex, KFactor: cfg.KFactor, CSIError: cfg.CSI.ErrorVar, PilotLen: cfg.CSI.PilotLen,
		PilotSNRdB: cfg.CSI.PilotSNRdB, PeakPower: cfg.Control.PeakPower, Gain: rx.Gain,
		Outage: outageBlocks(rx.Outage), Residual: rx.Residual,
		Centre: rx.Mean != nil, Mean: rx.Mean, MeanVar: rx.MeanVar, MeanBits: rx.MeanBits, MeanBlocks: rx.MeanBlocks, Budget: rx.Budget,
		Pilots: rx.Pilots, PilotBoostDB: cfg.Pilots.BoostDB, CSIGain: rx.CSIGain, CSINoise: rx.CSINoise,
	}
	if cfg.Coherence > 1 {
		l.Coherence = cfg.Coherence
	}
	if cfg.RxAntennas > 1 {
		l.RxAntennas = cfg.RxAntennas
	}
	if rx.Rotation != nil {
		l.Precoder, l.DirGain, l.MomentBits, l.MomentBlocks = Whiten.String(), rx.DirGain, rx.MomentBits, rx.MomentBlocks
		for _, u := range rx.Rotation {
			rows := make([][]float64, rx.D)
			for i := range rows {
				rows[i] = mat.Row(nil, i, u)
			}
			l.Rotation = append(l.Rotation, rows)
		}
	}
	return l
}

// outageBlocks lists, per worker, the indices of the blocks marked in
// outage; nil when there is no outage mask.
func outageBlocks(o [][]bool) [][]int {
	if o == nil {
		return nil
	}
	out := make([][]int, len(o))
	for k, marks := range o {
		out[k] = []int{}
		for s, lost := range marks {
			if lost {
				out[k] = append(out[k], s)
			}
		}
	}
	return out
}

// SignalNames are the file names of the received streams: received-k.npy
// (k = 1…K) under OMA, received.npy under NOMA.
func SignalNames(a Access, streams int) []string {
	if a == NOMA {
		return []string{"received.npy"}
	}
	names := make([]string, streams)
	for i := range names {
		names[i] = fmt.Sprintf("received-%d.npy", i+1)
	}
	return names
}

// Encode writes l as indented JSON with a final newline.
func (l Link) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Link powers and noise variances outside [linkMin, linkMax] are refused:
// beyond them the decoding 1/√P_k and the covariance arithmetic leave
// float64 for signals of any ordinary size.
const (
	linkMin = 1e-150
	linkMax = 1e150
)

// ParseLink decodes a link.json and checks that it describes signals the
// server can use: the format, K, S, d, l ≥ 1, m_r = l·d, one P_k per worker,
// P, P_k and N0 in [1e-150, 1e150], and one signal file per stream. Unknown
// fields are ignored.
func ParseLink(data []byte) (Link, error) {
	var l Link
	if err := json.Unmarshal(data, &l); err != nil {
		return Link{}, err
	}
	if l.Format != LinkFormat {
		return Link{}, fmt.Errorf("format %q, want %q (not written by wcmc transmit?)", l.Format, LinkFormat)
	}
	acc, err := ParseAccess(l.Access)
	if err != nil {
		return Link{}, err
	}
	positive := func(x float64) bool { return x > 0 && !math.IsInf(x, 0) }
	sane := func(x float64) bool { return x >= linkMin && x <= linkMax }
	switch {
	case l.K < 1 || l.S < 1 || l.D < 1 || l.Repetition < 1:
		return Link{}, fmt.Errorf("K = %d, S = %d, d = %d, repetition = %d: all must be ≥ 1", l.K, l.S, l.D, l.Repetition)
	case l.Mr != l.Repetition*l.D || l.Mr/l.Repetition != l.D:
		return Link{}, fmt.Errorf("m_r = %d, want repetition·d = %d·%d", l.Mr, l.Repetition, l.D)
	case len(l.Pk) != l.K:
		return Link{}, fmt.Errorf("P_k has %d entries for K = %d workers", len(l.Pk), l.K)
	case !sane(l.N0):
		return Link{}, fmt.Errorf("N0 = %v, want a positive finite noise variance in [%g, %g]", l.N0, linkMin, linkMax)
	case !sane(l.Power):
		return Link{}, fmt.Errorf("P = %v, want a positive power in [%g, %g]", l.Power, linkMin, linkMax)
	}
	for k, p := range l.Pk {
		if !sane(p) {
			return Link{}, fmt.Errorf("P_k of worker %d = %v, want a positive power scale in [%g, %g]", k+1, p, linkMin, linkMax)
		}
	}
	if l.Gain != nil && len(l.Gain) != l.K {
		return Link{}, fmt.Errorf("gain has %d entries for K = %d workers", len(l.Gain), l.K)
	}
	for k, g := range l.Gain {
		if !positive(g) {
			return Link{}, fmt.Errorf("large-scale gain of worker %d = %v, want a positive finite number", k+1, g)
		}
	}
	if l.Outage != nil && len(l.Outage) != l.K {
		return Link{}, fmt.Errorf("outage has %d entries for K = %d workers", len(l.Outage), l.K)
	}
	for k, blocks := range l.Outage {
		for _, s := range blocks {
			if s < 0 || s >= l.S {
				return Link{}, fmt.Errorf("outage of worker %d lists block %d, outside 0…S−1 = %d", k+1, s, l.S-1)
			}
		}
	}
	if err := l.checkCentre(); err != nil {
		return Link{}, err
	}
	if err := l.checkCSI(); err != nil {
		return Link{}, err
	}
	if err := l.checkPrecoder(); err != nil {
		return Link{}, err
	}
	streams := 1
	if acc == OMA {
		streams = l.K
	}
	if len(l.Signals) != streams {
		return Link{}, fmt.Errorf("%d signal files listed, want %d under %s", len(l.Signals), streams, acc)
	}
	return l, nil
}

// Received assembles the signals y (one matrix per stream, in the order of
// l.Signals) into what the server received, checking their shapes; where
// names the signal files in errors.
func (l Link) Received(y []*mat.Dense, where []string) (*Received, error) {
	acc, err := ParseAccess(l.Access)
	if err != nil {
		return nil, err
	}
	if len(y) != len(l.Signals) {
		return nil, fmt.Errorf("%d signal matrices for %d files", len(y), len(l.Signals))
	}
	for i, m := range y {
		if r, c := m.Dims(); r != l.S || c != l.Mr {
			return nil, fmt.Errorf("received-signal file %s is %d×%d, but the link says S×m_r = %d×%d", where[i], r, c, l.S, l.Mr)
		}
	}
	rx := &Received{Access: acc, K: l.K, S: l.S, D: l.D, Mr: l.Mr, L: l.Repetition, Pk: l.Pk, N0: l.N0, Power: l.Power, Y: y, Gain: l.Gain, Residual: l.Residual,
		Mean: l.Mean, MeanVar: l.MeanVar, MeanBits: l.MeanBits, MeanBlocks: l.MeanBlocks, Budget: l.Budget,
		Pilots: l.Pilots, CSIGain: l.CSIGain, CSINoise: l.CSINoise,
		DirGain: l.DirGain, MomentBits: l.MomentBits, MomentBlocks: l.MomentBlocks}
	for _, u := range l.Rotation {
		m := mat.NewDense(l.D, l.D, nil)
		for i, row := range u {
			m.SetRow(i, row)
		}
		rx.Rotation = append(rx.Rotation, m)
	}
	if l.Outage != nil {
		rx.Outage = make([][]bool, l.K)
		for k, blocks := range l.Outage {
			rx.Outage[k] = make([]bool, l.S)
			for _, s := range blocks {
				rx.Outage[k][s] = true
			}
		}
	}
	return rx, nil
}

// LinkPath returns the link file of path: path itself, or the link.json in
// it when it is a directory (as wcmc transmit writes it).
func LinkPath(path string) (string, error) {
	if fi, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("received signals %s do not exist", path)
	} else if fi.IsDir() {
		path = filepath.Join(path, LinkFileName)
	}
	if filepath.Ext(path) == ".npy" {
		return "", fmt.Errorf("%s is a signal file: give the directory wcmc transmit wrote (or its %s), which says how the signals were sent", path, LinkFileName)
	}
	return path, nil
}

// LoadReceived reads received signals written to files: the link file of
// path (see LinkPath) and the signal files it lists (see SignalFiles), read
// by read, which checks their content, and checked against the link
// (checkSignals).
func LoadReceived(path string, read func(path string) (*mat.Dense, error)) (*Received, Link, error) {
	path, err := LinkPath(path)
	if err != nil {
		return nil, Link{}, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Link{}, fmt.Errorf("missing sidecar %s: wcmc transmit writes it next to the received signals (give --rx the directory it wrote)", path)
	} else if err != nil {
		return nil, Link{}, fmt.Errorf("sidecar %w", err)
	}
	l, err := ParseLink(data)
	if err != nil {
		return nil, Link{}, fmt.Errorf("sidecar %s: %w", path, err)
	}
	files := l.SignalFiles(path)
	y := make([]*mat.Dense, len(files))
	for i, f := range files {
		if y[i], err = read(f); err != nil {
			return nil, Link{}, err
		}
	}
	rx, err := l.Received(y, files)
	if err == nil {
		err = l.checkSignals(rx.Access, y, files)
	}
	if err != nil {
		return nil, Link{}, fmt.Errorf("%w (%s)", err, path)
	}
	return rx, l, nil
}

// SignalFiles returns the paths of the signal files listed by the link file
// at path (names relative to its directory).
func (l Link) SignalFiles(path string) []string {
	out := make([]string, len(l.Signals))
	for i, name := range l.Signals {
		out[i] = name
		if !filepath.IsAbs(name) {
			out[i] = filepath.Join(filepath.Dir(path), name)
		}
	}
	return out
}

// checkCentre checks the means of a centred link: one finite m̂_k of d
// entries per worker with a positive error variance, and bits and blocks
// per worker if given; none of them without centre.
func (l Link) checkCentre() error {
	if !l.Centre {
		if l.Mean != nil || l.MeanVar != nil || l.MeanBits != nil || l.MeanBlocks != nil || (l.Budget != 0 && l.Precoder == "") {
			return fmt.Errorf("means given for a link without centre: set \"centre\": true or remove them")
		}
		return nil
	}
	switch {
	case len(l.Mean) != l.K:
		return fmt.Errorf("centre: mean has %d entries for K = %d workers", len(l.Mean), l.K)
	case len(l.MeanVar) != l.K:
		return fmt.Errorf("centre: mean_var has %d entries for K = %d workers", len(l.MeanVar), l.K)
	case l.MeanBits != nil && len(l.MeanBits) != l.K, l.MeanBlocks != nil && len(l.MeanBlocks) != l.K:
		return fmt.Errorf("centre: mean_bits and mean_blocks need one entry per worker (K = %d)", l.K)
	}
	for k, m := range l.Mean {
		if len(m) != l.D {
			return fmt.Errorf("centre: the mean of worker %d has %d entries, want d = %d", k+1, len(m), l.D)
		}
		for _, x := range m {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("centre: the mean of worker %d is not finite", k+1)
			}
		}
		if v := l.MeanVar[k]; !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("centre: mean_var of worker %d = %v, want a positive finite variance", k+1, v)
		}
	}
	return nil
}

// checkPrecoder checks the matched precoder's records: with precoder
// "whiten", one d×d rotation with orthonormal columns (within 1e-8) and d
// finite non-negative gains, not all zero, per worker, and bits and blocks
// per worker if given; none of them without.
func (l Link) checkPrecoder() error {
	switch l.Precoder {
	case "":
		if l.Rotation != nil || l.DirGain != nil || l.MomentBits != nil || l.MomentBlocks != nil {
			return fmt.Errorf("precoder rotations or gains given for a link without a precoder: set \"precoder\": \"whiten\" or remove them")
		}
		return nil
	case Whiten.String():
	default:
		return fmt.Errorf("precoder %q, want \"whiten\" (or omitted: the identity)", l.Precoder)
	}
	switch {
	case len(l.Rotation) != l.K || len(l.DirGain) != l.K:
		return fmt.Errorf("precoder: %d rotations and %d gain vectors for K = %d workers", len(l.Rotation), len(l.DirGain), l.K)
	case l.MomentBits != nil && len(l.MomentBits) != l.K, l.MomentBlocks != nil && len(l.MomentBlocks) != l.K:
		return fmt.Errorf("precoder: moment_bits and moment_blocks need one entry per worker (K = %d)", l.K)
	}
	for k, u := range l.Rotation {
		if len(u) != l.D || len(l.DirGain[k]) != l.D {
			return fmt.Errorf("precoder: worker %d's rotation or gains are not of dimension d = %d", k+1, l.D)
		}
		m := mat.NewDense(l.D, l.D, nil)
		for i, row := range u {
			if len(row) != l.D {
				return fmt.Errorf("precoder: worker %d's rotation is not d×d (d = %d)", k+1, l.D)
			}
			m.SetRow(i, row)
		}
		var gram mat.Dense
		gram.Mul(m.T(), m)
		if !mat.EqualApprox(&gram, eye(l.D), 1e-8) {
			return fmt.Errorf("precoder: worker %d's rotation does not have orthonormal columns", k+1)
		}
		var sum float64
		for _, f := range l.DirGain[k] {
			if !(f >= 0) || math.IsInf(f, 0) {
				return fmt.Errorf("precoder: worker %d's gains must be finite and ≥ 0, got %v", k+1, l.DirGain[k])
			}
			sum += f
		}
		if sum == 0 {
			return fmt.Errorf("precoder: worker %d's gains are all zero", k+1)
		}
	}
	return nil
}

// checkCSI checks the block fading, receive-antenna and estimate-error
// records: coherence ≥ 0, rx_antennas in [0, MaxRxAntennas], one CSI gain
// in (0, 1] and one finite non-negative CSI noise per worker, both or
// neither, a pilot budget whose samples are S, and a pilot boost only with
// the pilots.
func (l Link) checkCSI() error {
	switch {
	case l.Coherence < 0:
		return fmt.Errorf("coherence = %d: must be ≥ 1 (or omitted)", l.Coherence)
	case l.RxAntennas < 0 || l.RxAntennas > MaxRxAntennas:
		return fmt.Errorf("rx_antennas = %d: must be in [1, %d] (or omitted)", l.RxAntennas, MaxRxAntennas)
	case (l.CSIGain == nil) != (l.CSINoise == nil):
		return fmt.Errorf("csi_gain and csi_noise: give both or neither")
	case l.CSIGain != nil && (len(l.CSIGain) != l.K || len(l.CSINoise) != l.K):
		return fmt.Errorf("csi_gain and csi_noise have %d and %d entries for K = %d workers", len(l.CSIGain), len(l.CSINoise), l.K)
	case l.Pilots != nil && l.Pilots.Samples != l.S:
		return fmt.Errorf("pilots: %d samples, but S = %d", l.Pilots.Samples, l.S)
	case l.PilotBoostDB != 0 && l.Pilots == nil:
		return fmt.Errorf("pilot_boost_db = %v without pilots: it is the charged pilots' SNR over the data SNR", l.PilotBoostDB)
	}
	for k := range l.CSIGain {
		if a, v := l.CSIGain[k], l.CSINoise[k]; !(a > 0 && a <= 1) || !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("worker %d: csi_gain %v must be in (0, 1] and csi_noise %v finite and ≥ 0", k+1, a, v)
		}
	}
	return nil
}

// noiseFloor is the fraction of N0 below which the mean square of received
// signals contradicts the link: they carry noise of variance N0 per
// symbol, so their mean square is at least about N0.
const noiseFloor = 1e-6

// checkSignals checks the signals y (in the order of l.Signals, named by
// where) against the link: their entries, and the decoded ones y/√P_k,
// small enough that the sample covariances Σ_s y yᵀ stay finite
// (|y| ≤ √(MaxFloat64/(S·m_r))), and their mean square not below
// noiseFloor·N0.
func (l Link) checkSignals(acc Access, y []*mat.Dense, where []string) error {
	limit := math.Sqrt(math.MaxFloat64 / (float64(l.S) * float64(l.Mr)))
	var sq float64
	for i, m := range y {
		pk := l.Pk[0]
		if acc == OMA {
			pk = l.Pk[i]
		}
		for _, v := range m.RawMatrix().Data {
			if a := math.Abs(v); a > limit || a/math.Sqrt(pk) > limit {
				return fmt.Errorf("received-signal file %s: entry %g (decoded %g with P_k = %g) is beyond ±%.3g = √(MaxFloat64/(S·m_r)), where the sample covariances overflow: rescale the samples before wcmc transmit (standardise the covariates, say)",
					where[i], v, v/math.Sqrt(pk), pk, limit)
			}
			sq += v * v / float64(len(y)*l.S*l.Mr)
		}
	}
	if sq < noiseFloor*l.N0 {
		return fmt.Errorf("N0 = %g, but the signals' mean square is %g: signals with noise of that variance have a mean square of at least about N0; the link file does not describe these signals (N0 edited, or signal files from another transmission?)", l.N0, sq)
	}
	return nil
}
