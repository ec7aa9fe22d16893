package experiment

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/internal/seed"
	"github.com/wcmc-project/wcmc/runner"
)

// linkConfig is the channel of a wireless experiment (linkParams, the
// digital baselines aside): the paper's link and the models beyond it,
// off at their defaults, and the SNR spread Δ that trialGains realises per
// trial.
type linkConfig struct {
	channel  channel.Config
	spreadDB float64 // snr_spread_db; 0 = equal SNR
}

// decodeLink reads the channel parameters; a configuration that cannot be
// simulated (channel.Config.Validate) or two sources of per-worker SNR is
// a problem of key "link".
func decodeLink(v runner.Values, p *problems) linkConfig {
	f, err := channel.ParseFading(v.String("fading"))
	p.add("fading", err)
	precoder, err := channel.ParsePrecoder(v.String("precoder"))
	p.add("precoder", err)
	offsets, err := parseOffsets(v.String("snr_offsets_db"))
	if err != nil {
		p.add("link", fmt.Errorf("channel: %w", err))
	}
	l := linkConfig{
		channel: channel.Config{
			Fading:     f,
			Repetition: v.Int("repetition"),
			ExtraTx:    v.Int("extra_tx"),
			Power:      v.Float("power"),
			SNRdB:      v.Float("snr_db"),
			Physical:   v.Bool("physical"),
			Complex:    v.Bool("complex"),
			KFactor:    v.Float("k_factor"),
			CSI:        channel.CSI{ErrorVar: v.Float("csi_error"), PilotLen: v.Int("pilot_len"), PilotSNRdB: v.Float("pilot_snr_db")},
			Gains:      channel.LargeScale{OffsetDB: offsets, DMin: v.Float("d_min"), DMax: v.Float("d_max"), Exponent: v.Float("path_exponent")},
			Control:    channel.PowerControl{PeakPower: v.Float("peak_power")},
			Centre:     v.Bool("centre"),
			Coherence:  v.Int("coherence"),
			RxAntennas: v.Int("rx_antennas"),
			Precoder:   precoder,
		},
		spreadDB: v.Float("snr_spread_db"),
	}
	// Charged pilots set the MMSE estimate themselves: pilot_len is their
	// length, and the free pilots' SNR is not theirs.
	switch {
	case v.Bool("pilots"):
		l.channel.Pilots = channel.Pilots{On: true, Len: v.Int("pilot_len"), BoostDB: v.Float("pilot_boost_db")}
		l.channel.CSI.PilotLen, l.channel.CSI.PilotSNRdB = 0, 0
		if v.Float("pilot_snr_db") != 0 {
			p.addf("pilot_snr_db", "pilot_snr_db = %v with pilots=true: the charged pilots are sent at the data SNR snr_db plus pilot_boost_db; set pilot_boost_db instead", v.Float("pilot_snr_db"))
		}
	case v.Float("pilot_boost_db") != 0:
		p.addf("pilot_boost_db", "pilot_boost_db = %v without pilots=true: it sets the charged pilots' SNR; the free pilots (pilot_len) take pilot_snr_db", v.Float("pilot_boost_db"))
	}
	if err := l.validate(); err != nil {
		p.add("link", fmt.Errorf("channel: %w", err))
	}
	return l
}

// validate checks the channel (channel.Config.Validate) and that at most
// one source of per-worker SNR is set.
func (l linkConfig) validate() error {
	if err := l.channel.Validate(); err != nil {
		return err
	}
	if l.spreadDB > 2*channel.MaxOffsetDB {
		return fmt.Errorf("snr_spread_db = %g dB: must be at most %g dB (offsets within ±%g dB, as snr_offsets_db; far outside them the power scale P_k overflows)", l.spreadDB, 2*channel.MaxOffsetDB, channel.MaxOffsetDB)
	}
	if l.spreadDB > 0 && l.channel.Gains.OffsetDB != nil {
		return fmt.Errorf("snr_spread_db and snr_offsets_db both set: choose one source of per-worker SNR")
	}
	if l.spreadDB > 0 && pathLoss(l.channel.Gains) {
		return fmt.Errorf("snr_spread_db and the path-loss model (d_min, d_max, path_exponent) both set: choose one source of per-worker SNR")
	}
	return nil
}

// check reports the values that the link's parameters declare without a
// range but that do not fail cleanly downstream: snr_db in [MinSNRdB,
// MaxSNRdB] and power in [MinPower, MaxPower] (an SNR of −3100 dB
// overflows N0 = P/(m_r 10^{SNR/10}) and the eigendecomposition of the GCMC
// map panics; a power of 1e-320 underflows the same way), the received
// dimension m_r = l·d ≤ MaxMr (repetition = 100000 would allocate m_r × m_r
// matrices; from says how d follows from the parameters, "" when it is
// the parameter d), and one SNR offset per worker for k workers.
func (l linkConfig) check(d int, from string, k int, p *problems) {
	c := l.channel
	if s := c.SNRdB; s < MinSNRdB || s > MaxSNRdB {
		p.addf("snr_db", "snr_db = %g dB: must be in [%g, %g] dB (the noise power N0 = P/(m_r·10^(SNR/10)) leaves floating point far outside it)", s, MinSNRdB, MaxSNRdB)
	}
	if pw := c.Power; pw < MinPower || pw > MaxPower {
		p.addf("power", "power = %g: the transmit power P must be in [%g, %g] (only its ratio to N0, the SNR, matters to the schemes)", pw, MinPower, MaxPower)
	}
	if rep := c.Repetition; d > 0 && rep > MaxMr/d {
		p.addf("repetition", "repetition = %d with d = %d%s: m_r = l·d = %d received dimensions, more than %d (memory grows as m_r²)", rep, d, from, rep*d, MaxMr)
	} else if n := c.RxAntennas; d > 0 && n > 1 && rep*d > MaxMr/n {
		p.addf("rx_antennas", "rx_antennas = %d with m_r = l·d = %d%s: %d receive antennas, more than %d (the beamformer's design grows as their square)", n, rep*d, from, n*rep*d, MaxMr)
	}
	if n := len(c.Gains.OffsetDB); n > 0 && n != k {
		p.addf("link", "snr_offsets_db lists %d offsets for K = %d workers: give one per worker", n, k)
	}
}

// parseOffsets reads the snr_offsets_db list: nil when empty.
func parseOffsets(s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, fmt.Errorf("snr_offsets_db: %q is not a number of dB", f)
		}
		out = append(out, x)
	}
	return out, nil
}

// pathLoss reports whether the path-loss model of g is set.
func pathLoss(g channel.LargeScale) bool { return g.DMin != 0 || g.DMax != 0 || g.Exponent != 0 }

// trialGains returns link with the large-scale gains of one trial's k
// workers fixed as an explicit list, so that the OMA, NOMA and digital
// links of the trial share one geometry: under the path-loss model the
// distances drawn once (channel.LargeScale.Realize), and with an SNR
// spread Δ > 0 the offsets Δ(i/(k−1) − ½) dB, i = 0…k−1, assigned to the
// workers in a random order (k = 1: 0 dB), whose mean is 0 dB. Either
// draws from its own stream split off rng; with neither, rng is not used
// and link is returned unchanged.
func trialGains(rng *rand.Rand, link channel.Config, spreadDB float64, k int) (channel.Config, error) {
	switch {
	case spreadDB > 0:
		perm := seed.Split(rng).Perm(k)
		offsets := make([]float64, k)
		for i, w := range perm {
			if k > 1 {
				offsets[w] = spreadDB * (float64(i)/float64(k-1) - 0.5)
			}
		}
		link.Gains = channel.LargeScale{OffsetDB: offsets}
	case pathLoss(link.Gains):
		g, err := link.Gains.Realize(seed.Split(rng), k)
		if err != nil {
			return link, err
		}
		link.Gains = g
	}
	return link, nil
}
