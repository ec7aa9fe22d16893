package experiment

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/consensus"
	"github.com/wcmc-project/wcmc/model"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

// wirelessConfig is what every wireless experiment reads besides its data
// and samplers: the link, the digital baselines, the schemes to run and
// how WVCMC is optimised.
type wirelessConfig struct {
	link    linkConfig
	digital *digitalConfig // nil: off, or the experiment has no digital parameters
	enabled map[string]bool
	opt     optimizerConfig
}

// decodeWireless reads the wireless settings. known lists the schemes the
// experiment runs; hasDigital says whether it has the digital baselines'
// parameters (digitalParams).
func decodeWireless(v runner.Values, known []string, hasDigital bool, p *problems) wirelessConfig {
	w := wirelessConfig{link: decodeLink(v, p), opt: decodeOptimizer(v, p)}
	if hasDigital {
		w.digital = decodeDigital(v, p)
	}
	// Where WGCMC runs, the CSI-aware schemes may always be named; "all"
	// runs them where the workers' CSI is imperfect (elsewhere they are
	// their unaware counterparts).
	if slices.Contains(known, SchemeWGCMCOMA) {
		known = append(slices.Clone(known), scheme.CSIAware...)
	}
	w.enabled = decodeSchemes(v.String("schemes"), known, hasDigital, w.digital != nil, p)
	if c := w.link.channel; c.CSI == (channel.CSI{}) && !c.Pilots.On && strings.TrimSpace(v.String("schemes")) == "all" {
		for _, s := range scheme.CSIAware {
			delete(w.enabled, s)
		}
	}
	return w
}

// check reports the link's limits (linkConfig.check: d parameters, from
// saying how d follows from the parameters, and k workers) and, with the
// digital baselines on, a link they do not model (digital.Link.Validate).
func (w wirelessConfig) check(d int, from string, k int, p *problems) {
	w.link.check(d, from, k, p)
	if w.digital == nil || p.seen["link"] {
		return
	}
	if n := w.link.channel.RxAntennas; n > 1 {
		p.addf("rx_antennas", "rx_antennas = %d with digital=true: the digital baselines' rates assume one receive antenna per received dimension; set rx_antennas=1 or digital=false", n)
		return
	}
	for _, b := range w.digital.baselines() {
		if err := w.digital.link(w.link.channel, b.access, b.quant).Validate(); err != nil {
			p.add("link", fmt.Errorf("digital=true: %w", err))
			return
		}
	}
}

// checkPilots reports charged pilots that leave no sample block (or a
// pilot length below m_t) for an access whose schemes are enabled: k
// workers of parameter dimension d with budgets of omaS blocks per worker
// under OMA and nomaS shared blocks under NOMA (channel.Config.SplitBudget).
func (w wirelessConfig) checkPilots(d, k, omaS, nomaS int, p *problems) {
	c := w.link.channel
	if !c.Pilots.On || p.seen["link"] || d < 1 || k < 1 {
		return
	}
	on := func(names ...string) bool {
		return slices.ContainsFunc(names, func(s string) bool { return w.enabled[s] })
	}
	for _, a := range []struct {
		access  channel.Access
		s       int
		schemes []string
	}{
		{channel.OMA, omaS, []string{SchemeGCMC, SchemeWGCMCOMA, SchemeWVCMCOMA, SchemeBestSingle, scheme.WGCMCOMACSI}},
		{channel.NOMA, nomaS, []string{SchemeWGCMCNOMA, SchemeWVCMCNOMA, scheme.WGCMCNOMACSI}},
	} {
		if !on(a.schemes...) || a.s < 1 {
			continue
		}
		c.Access = a.access
		if l, mt := c.Pilots.Len, pilotTxDims(c, d); l > 0 && l < mt {
			p.addf("pilot_len", "pilot_len = %d with pilots=true: orthogonal pilots need L_p ≥ m_t = %d transmit dimensions (0 = m_t)", l, mt)
			return
		}
		if _, err := c.SplitBudget(k, a.s, d); err != nil {
			p.addf("pilots", "%v: %v; raise T or coherence, or run only the other access's schemes", a.access, err)
		}
	}
}

// pilotTxDims is the m_t of the pilot rule L_p ≥ m_t: real transmit
// dimensions, or complex ones on the complex channel.
func pilotTxDims(c channel.Config, d int) int {
	c.Pilots.Len = 0
	return c.ResolvePilots(d).CSI.PilotLen
}

// decodeSchemes reads the "schemes" parameter: "all" or a comma list of
// known. With digital on, the digital baselines (scheme.Digital) are known
// too and "all" includes them; without it, naming one is an error that
// says so where the experiment has them (hasDigital).
func decodeSchemes(raw string, known []string, hasDigital, digitalOn bool, p *problems) map[string]bool {
	if digitalOn {
		known = withDigital(known)
	}
	raw = strings.TrimSpace(raw)
	out := map[string]bool{}
	if raw == "all" {
		for _, s := range known {
			out[s] = true
		}
		return out
	}
	for _, s := range strings.Split(raw, ",") {
		s = strings.TrimSpace(s)
		switch {
		case slices.Contains(known, s):
			out[s] = true
		case scheme.IsDigital(s) && hasDigital:
			p.addf("schemes", "schemes: %s is a digital baseline: set digital=true to run it", s)
		default:
			p.addf("schemes", "schemes: unknown scheme %q (known: %s)", s, strings.Join(known, ", "))
		}
	}
	return out
}

// cmc returns the settings of one trial of wireless CMC: the task's
// context, the target of WVCMC, its protocols' optimiser settings and
// the samples per worker sent over OMA and NOMA.
func (w wirelessConfig) cmc(ctx context.Context, target model.Target, runs []protocolRun, omaS, nomaS int) cmcConfig {
	return cmcConfig{
		link:      w.link.channel,
		target:    target,
		protocols: runs,
		enabled:   w.enabled,
		omaPerWkr: omaS,
		nomaPerWk: nomaS,
		ctx:       ctx,
		spreadDB:  w.link.spreadDB,
		digital:   w.digital,
	}
}

// caption is the line under every figure: how WVCMC was optimised and the
// link, so that a figure says which procedure produced it. Numbers are
// printed as written in v.
func (w wirelessConfig) caption(v runner.Values) string {
	var opt string
	switch w.opt.method {
	case consensus.NameSGD:
		opt = fmt.Sprintf("WVCMC: paper's SGD, η = %s (OMA) / %s (NOMA), t_m = %s / %s",
			v.Raw("eta_oma"), v.Raw("eta_noma"), v.Raw("iters_oma"), v.Raw("iters_noma"))
	case consensus.NameAdam:
		opt = fmt.Sprintf("WVCMC: Adam, relative step %s, held out %s", v.Raw("adam_step"), v.Raw("holdout"))
	default:
		opt = fmt.Sprintf("WVCMC: L-BFGS, held out %s", v.Raw("holdout"))
	}
	// Other protocols' curves carry their names (.paper, .converged).
	if ps := w.opt.protocols; len(ps) > 1 || (len(ps) == 1 && ps[0] != scheme.Default) {
		opt = "protocols " + scheme.Join(ps, ", ") + " (default = " + strings.TrimPrefix(opt, "WVCMC: ") + ")"
	}
	return fmt.Sprintf("%s; %s fading, l = %s, P = %s%s", opt, v.Raw("fading"), v.Raw("repetition"), v.Raw("power"), w.beyondCaption(v))
}

// beyondCaption lists, for a figure's caption, the channel models and
// digital settings beyond the paper that are on ("" for the paper's
// link), except the swept parameter.
func (w wirelessConfig) beyondCaption(v runner.Values) string {
	c := w.link.channel
	var parts []string
	for _, f := range []struct {
		name string
		on   bool
	}{
		{"csi_error", c.CSI.ErrorVar != 0}, {"pilot_len", c.CSI.PilotLen != 0 || c.Pilots.Len != 0}, {"pilot_snr_db", c.CSI.PilotSNRdB != 0},
		{"snr_offsets_db", c.Gains.OffsetDB != nil}, {"snr_spread_db", w.link.spreadDB != 0},
		{"d_min", c.Gains.DMin != 0}, {"d_max", c.Gains.DMax != 0}, {"path_exponent", c.Gains.Exponent != 0},
		{"k_factor", c.KFactor != 0}, {"peak_power", c.Control.PeakPower != 0},
		{"coherence", c.Coherence > 1}, {"pilot_boost_db", c.Pilots.BoostDB != 0},
		{"rx_antennas", c.RxAntennas > 1},
	} {
		if f.on && v.XName() != f.name {
			parts = append(parts, f.name+" = "+v.Raw(f.name))
		}
	}
	if c.Complex {
		parts = append(parts, "complex baseband")
	}
	if c.Centre {
		parts = append(parts, "mean-centred transmission")
	}
	if c.Pilots.On {
		parts = append(parts, "pilots charged")
	}
	if c.Precoder != channel.Identity {
		parts = append(parts, c.Precoder.String()+" precoder")
	}
	if d := w.digital; d != nil {
		parts = append(parts, fmt.Sprintf("digital: %s capacity, %s quantiser (digital-gcmc), side information %s bits per real",
			v.Raw("digital_capacity"), d.quantizer, v.Raw("side_info_bits")))
		if d.gapDB > 0 {
			parts = append(parts, fmt.Sprintf("SNR gap %s dB", v.Raw("gap_db")))
		}
		if d.blockLen > 0 {
			parts = append(parts, fmt.Sprintf("codewords of %d uses at error probability %s", d.blockLen, v.Raw("error_prob")))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, ", ")
}
