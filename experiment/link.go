package experiment

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/internal/seed"
	"github.com/wcmc-project/wcmc/runner"
)

// linkConfig reads the channel parameters (linkParams): the paper's link
// and the models beyond it, which are off at their defaults.
func linkConfig(v runner.Values) (channel.Config, error) {
	f, err := channel.ParseFading(v.String("fading"))
	if err != nil {
		return channel.Config{}, err
	}
	offsets, err := parseOffsets(v.String("snr_offsets_db"))
	if err != nil {
		return channel.Config{}, err
	}
	c := channel.Config{
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
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	if v.Float("snr_spread_db") > 0 && c.Gains.OffsetDB != nil {
		return c, fmt.Errorf("snr_spread_db and snr_offsets_db both set: choose one source of per-worker SNR")
	}
	if v.Float("snr_spread_db") > 0 && pathLoss(c.Gains) {
		return c, fmt.Errorf("snr_spread_db and the path-loss model (d_min, d_max, path_exponent) both set: choose one source of per-worker SNR")
	}
	return c, nil
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

// hasParam reports whether the experiment of v has the parameter name.
func hasParam(v runner.Values, name string) bool { return slices.Contains(v.Names(), name) }

// beyondCaption lists, for a figure's caption, the channel models and
// digital settings beyond the paper that v turns on ("" for the paper's
// link).
func beyondCaption(v runner.Values) string {
	if !hasParam(v, "csi_error") {
		return ""
	}
	var parts []string
	for _, name := range []string{"csi_error", "pilot_len", "pilot_snr_db", "snr_offsets_db", "snr_spread_db", "d_min", "d_max", "path_exponent", "k_factor", "peak_power"} {
		if r := v.Raw(name); r != "" && r != "0" && v.XName() != name {
			parts = append(parts, name+" = "+r)
		}
	}
	if v.Bool("complex") {
		parts = append(parts, "complex baseband")
	}
	if hasParam(v, "digital") && v.Bool("digital") {
		parts = append(parts, fmt.Sprintf("digital: %s capacity, %s quantiser (digital-gcmc), side information %s bits per real",
			v.Raw("digital_capacity"), v.Raw("digital_quantizer"), v.Raw("side_info_bits")))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, ", ")
}
