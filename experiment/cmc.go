package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/consensus"
	"github.com/wcmc-project/wcmc/internal/seed"
	"github.com/wcmc-project/wcmc/model"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

// Scheme names, as they appear in results files (package scheme).
const (
	SchemeGCMC      = scheme.GCMC
	SchemeWGCMCOMA  = scheme.WGCMCOMA
	SchemeWGCMCNOMA = scheme.WGCMCNOMA
	SchemeWVCMCOMA  = scheme.WVCMCOMA
	SchemeWVCMCNOMA = scheme.WVCMCNOMA
	SchemeNoiseless = scheme.Noiseless
)

// wirelessSchemes are the schemes every wireless experiment runs.
var wirelessSchemes = []string{SchemeGCMC, SchemeWGCMCOMA, SchemeWGCMCNOMA, SchemeWVCMCOMA, SchemeWVCMCNOMA, SchemeNoiseless}

// cmcConfig is what one trial of wireless CMC needs besides the samples.
type cmcConfig struct {
	link      channel.Config // Access is set per scheme
	target    model.Target   // global posterior for WVCMC
	protocols []protocolRun  // the WVCMC optimiser settings, one entry per protocol evaluated
	enabled   map[string]bool
	omaPerWkr int // S under OMA
	nomaPerWk int // S under NOMA
	// ctx is the task's context (taskContext), passed to the WVCMC
	// optimisers.
	ctx context.Context
	// spreadDB is Δ of the snr_spread_db parameter (0: off), realised per
	// trial by trialGains.
	spreadDB float64
	// digital configures the digital baselines (nil: not run).
	digital *digitalConfig
}

// schemeOutput is what one scheme produced: the learned map, the link it
// was learned on, and the map applied to that link's signals.
type schemeOutput struct {
	theta *mat.Dense
	m     consensus.Map
	rx    *channel.Received
}

// cmcOutput collects, per scheme, what it produced.
type cmcOutput struct {
	schemes map[string]*schemeOutput
	skipped []runner.Skip
	info    map[string]map[string]any
	// The links the schemes were learned on (nil when not used).
	omaLink, nomaLink, idealLink *channel.Received
	// digital holds the digital baselines' streams, in scheme.Digital
	// order.
	digital []*digitalStream
}

func (o *cmcOutput) skip(scheme, format string, args ...any) {
	o.skipped = append(o.skipped, runner.Skip{Scheme: scheme, Reason: fmt.Sprintf(format, args...)})
}

// runCMC transmits the workers' samples over OMA (the first omaPerWkr rows
// of each) and NOMA (the first nomaPerWk rows), and runs every enabled
// scheme on what the server receives. The channel draws of the two links
// come from independent streams split off rng, so enabling or disabling a
// scheme does not change any other scheme's numbers. Both links (and the
// digital ones) share the trial's large-scale gains (trialGains), and
// under truncated inversion the schemes see only the delivered blocks
// (channel.Received.Delivered).
func runCMC(rng *rand.Rand, samples []*mat.Dense, cfg cmcConfig) (*cmcOutput, error) {
	out := &cmcOutput{schemes: map[string]*schemeOutput{}, info: map[string]map[string]any{}}
	omaRng := seed.Split(rng)
	nomaRng := seed.Split(rng)
	wvOMASeed, wvNOMASeed := splitSeeds(rng), splitSeeds(rng)
	var err error
	if cfg.link, err = trialGains(rng, cfg.link, cfg.spreadDB, len(samples)); err != nil {
		return nil, err
	}

	on := func(names ...string) bool {
		for _, n := range names {
			if cfg.enabled[n] {
				return true
			}
		}
		return false
	}
	rows := func(m *mat.Dense, n int) *mat.Dense {
		r, c := m.Dims()
		if n > r {
			n = r
		}
		return m.Slice(0, n, 0, c).(*mat.Dense)
	}
	omaSamples := make([]*mat.Dense, len(samples))
	nomaSamples := make([]*mat.Dense, len(samples))
	for k, s := range samples {
		omaSamples[k] = rows(s, cfg.omaPerWkr)
		nomaSamples[k] = rows(s, cfg.nomaPerWk)
	}

	if on(SchemeNoiseless) {
		if cfg.omaPerWkr < 2 {
			out.skip(SchemeNoiseless, "S = %d < 2 samples per worker", cfg.omaPerWkr)
		} else if err := consensus.Varying(omaSamples); err != nil {
			out.skip(SchemeNoiseless, "%v", err)
		} else {
			rx := channel.Ideal(omaSamples)
			out.idealLink = rx
			if err := out.gaussianScheme(SchemeNoiseless, cfg, rx, consensus.GCMC); err != nil {
				return nil, err
			}
		}
	}

	omaSchemes := []string{SchemeGCMC, SchemeWGCMCOMA, SchemeWVCMCOMA, SchemeBestSingle, scheme.WGCMCOMACSI}
	if on(omaSchemes...) {
		if cfg.omaPerWkr < 2 {
			for _, s := range omaSchemes {
				if cfg.enabled[s] {
					out.skip(s, "OMA delivers S = %d < 2 samples per worker", cfg.omaPerWkr)
				}
			}
		} else if rx, err := out.transmit(omaRng, cfg, channel.OMA, omaSamples, omaSchemes...); err != nil {
			return nil, err
		} else if rx != nil {
			out.omaLink = rx
			if err := out.gaussianScheme(SchemeGCMC, cfg, rx, consensus.GCMC); err != nil {
				return nil, err
			}
			if err := out.gaussianScheme(SchemeWGCMCOMA, cfg, rx, consensus.WGCMC); err != nil {
				return nil, err
			}
			if err := out.gaussianScheme(scheme.WGCMCOMACSI, cfg, rx, consensus.WGCMCAware); err != nil {
				return nil, err
			}
			if cfg.enabled[SchemeWVCMCOMA] {
				for _, pr := range cfg.protocols {
					if err := out.variational(wvOMASeed.forProtocol(pr.protocol), scheme.Under(SchemeWVCMCOMA, pr.protocol), cfg, rx, pr.oma); err != nil {
						return nil, err
					}
				}
			}
		}
	}

	if on(SchemeWGCMCNOMA, SchemeWVCMCNOMA, scheme.WGCMCNOMACSI) {
		rx, err := out.transmit(nomaRng, cfg, channel.NOMA, nomaSamples, SchemeWGCMCNOMA, SchemeWVCMCNOMA, scheme.WGCMCNOMACSI)
		if err != nil {
			return nil, err
		}
		if rx != nil {
			out.nomaLink = rx
			for _, g := range []struct {
				name  string
				learn func(*channel.Received) (consensus.Map, error)
			}{{SchemeWGCMCNOMA, consensus.WGCMC}, {scheme.WGCMCNOMACSI, consensus.WGCMCAware}} {
				if cfg.nomaPerWk < 2 && cfg.enabled[g.name] {
					out.skip(g.name, "NOMA delivers S = %d < 2 samples", cfg.nomaPerWk)
				} else if err := out.gaussianScheme(g.name, cfg, rx, g.learn); err != nil {
					return nil, err
				}
			}
			if cfg.enabled[SchemeWVCMCNOMA] {
				for _, pr := range cfg.protocols {
					if err := out.variational(wvNOMASeed.forProtocol(pr.protocol), scheme.Under(SchemeWVCMCNOMA, pr.protocol), cfg, rx, pr.noma); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	if err := out.runDigital(rng, cfg, omaSamples, nomaSamples); err != nil {
		return nil, err
	}
	return out, nil
}

// transmit sends samples over cfg.link with the given access and returns
// the blocks delivered (all of them unless the link truncates its
// inversion). Where the samples cannot be sent under the peak power, or
// outage leaves no block, it marks the schemes (those enabled) skipped and
// returns nil; other failures are errors.
func (o *cmcOutput) transmit(rng *rand.Rand, cfg cmcConfig, access channel.Access, samples []*mat.Dense, schemes ...string) (*channel.Received, error) {
	skip := func(format string, args ...any) (*channel.Received, error) {
		for _, s := range schemes {
			if cfg.enabled[s] {
				o.skip(s, format, args...)
			}
		}
		return nil, nil
	}
	link := cfg.link
	link.Access = access
	if peak := link.Control.PeakPower; peak > 0 {
		for k, m := range samples {
			if need := link.MinPeakPower(m); peak < need {
				return skip("%v: worker %d's samples need a peak power of at least %.4g for truncated inversion at mean power %g, peak_power is %g", access, k+1, need, link.Power, peak)
			}
		}
	}
	rx, err := channel.Transmit(rng, link, samples)
	if errors.Is(err, channel.ErrMeanBudget) || errors.Is(err, channel.ErrPilotBudget) || errors.Is(err, channel.ErrMomentBudget) {
		return skip("%v: %v", access, err)
	}
	if rx.Pilots != nil && rx.S < 2 {
		return skip("%v: the pilots leave S = %d < 2 samples per stream", access, rx.S)
	}
	if err != nil {
		return nil, fmt.Errorf("%v transmission: %w", strings.ToUpper(access.String()), err)
	}
	sent := rx
	if rx, err = rx.Delivered(); err != nil {
		return skip("%v: %v", access, err)
	}
	o.linkInfo(access.String(), sent, rx)
	return rx, nil
}

// linkInfo records a link in the results JSON: N0, P_k, the signals per
// stream the schemes get, and where measured the transmit power, the
// fraction of blocks lost to outage per worker and the residual
// interference power per symbol.
func (o *cmcOutput) linkInfo(name string, sent, rx *channel.Received) {
	info := map[string]any{"N0": rx.N0, "Pk": rx.Pk, "samples_per_stream": rx.S}
	if sent.TxPower != nil {
		info["measured_tx_power"] = sent.TxPower
	}
	if sent.Gain != nil {
		info["gain"] = sent.Gain
	}
	if sent.Outage != nil {
		lost := make([]float64, len(sent.Outage))
		for k, marks := range sent.Outage {
			for _, l := range marks {
				if l {
					lost[k]++
				}
			}
			lost[k] /= float64(len(marks))
		}
		info["outage"] = lost
	}
	if sent.Residual != nil {
		info["residual"] = sent.Residual
	}
	if b := sent.Pilots; b != nil {
		info["pilots"] = map[string]any{"budget_blocks": b.Budget, "block_uses": b.BlockUses, "pilot_len": b.Len,
			"interval_uses": b.IntervalUses, "coherence": b.Coherence, "intervals": b.Intervals, "pilot_uses": b.Uses(), "idle_uses": b.Idle}
	}
	if sent.CSINoise != nil {
		info["csi_gain"], info["csi_noise"] = sent.CSIGain, sent.CSINoise
	}
	if sent.Mean != nil {
		used, idle := sent.MeanUses()
		info["centred"] = map[string]any{"budget_blocks": sent.Budget, "mean_blocks": sent.MeanBlocks,
			"mean_bits": sent.MeanBits, "mean_var": sent.MeanVar, "mean_blocks_total": used, "idle_blocks": idle}
	}
	if sent.Rotation != nil {
		used, idle := sent.SideUses()
		powered := make([]int, len(sent.DirGain))
		for k, f := range sent.DirGain {
			for _, v := range f {
				if v > 0 {
					powered[k]++
				}
			}
		}
		info["matched"] = map[string]any{"budget_blocks": sent.Budget, "moment_blocks": sent.MomentBlocks,
			"moment_bits": sent.MomentBits, "side_blocks_total": used, "idle_blocks": idle, "directions_sent": powered}
	}
	o.info["link-"+name] = info
}

func (o *cmcOutput) gaussianScheme(name string, cfg cmcConfig, rx *channel.Received, learn func(*channel.Received) (consensus.Map, error)) error {
	if !cfg.enabled[name] {
		return nil
	}
	m, err := learn(rx)
	if err != nil {
		if errors.Is(err, consensus.ErrTooFewSamples) {
			o.skip(name, "%v", err)
			return nil
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	o.schemes[name] = &schemeOutput{theta: m.Apply(rx), m: m, rx: rx}
	return nil
}

// variational runs WVCMC from the paper's start point. A run that diverges
// is reported as a skip with the optimiser's message — never as a number;
// a cancelled run is an error (the task is abandoned, not recorded).
func (o *cmcOutput) variational(rng *rand.Rand, name string, cfg cmcConfig, rx *channel.Received, opt consensus.Settings) error {
	fit, _, fallback, err := consensus.FitFromStart(cfg.ctx, rng, rx, cfg.target, opt)
	if errors.Is(err, consensus.ErrCancelled) {
		return err
	}
	if err != nil {
		o.skip(name, "%v", err)
		return nil
	}
	o.schemes[name] = &schemeOutput{theta: fit.Map.Apply(rx), m: fit.Map, rx: rx}
	info := fitInfo(fit)
	info["start"] = startName(rx, fallback)
	o.info[name] = info
	return nil
}

func startName(rx *channel.Received, fallback bool) string {
	switch {
	case fallback:
		return "decoded average E_k^†/K (GCMC map singular: S ≤ d)"
	case rx.Access == channel.OMA:
		return "gcmc"
	}
	return "decoded average E^†/K"
}

// fitInfo is the results-JSON record of a WVCMC optimisation: the
// optimiser, why it stopped (a consensus.Status name), its iterations and
// gradient evaluations, the objective and the full-batch gradient norm at
// the start and at the end, and their ratio.
func fitInfo(fit *consensus.Fit) map[string]any {
	info := map[string]any{
		"optimizer":       fit.Method.Name(),
		"iterations":      fit.Iters,
		"evaluations":     fit.Evaluations,
		"objective_start": fit.Objective[0],
		"objective_end":   fit.Objective[len(fit.Objective)-1],
		"grad_norm":       fit.GradNorm,
		"grad_norm_start": fit.StartGradNorm,
		"status":          fit.Status.String(),
		"guard_shrinks":   fit.Shrinks,
	}
	if r := fit.RelGradNorm(); !math.IsNaN(r) && !math.IsInf(r, 0) {
		info["rel_grad_norm"] = r
	}
	if fit.Message != "" {
		info["status_detail"] = fit.Message
	}
	if fit.Unspanned > 0 {
		info["unspanned_dims"] = fit.Unspanned
	}
	if fit.Hessians > 0 {
		info["hessians"] = fit.Hessians
	}
	if fit.Holdout > 0 {
		info["holdout"] = fit.Holdout
		info["kept_iteration"] = fit.BestIter
		info["heldout_objective"] = fit.HeldOut
	}
	switch m := fit.Method.(type) {
	case consensus.SGD:
		info["step"], info["step_final"] = m.Step, fit.FinalStep
	case consensus.Adam:
		info["step"], info["step_final"] = m.Step, fit.FinalStep
	case consensus.LBFGS:
		if m.Whiten {
			info["whitened"] = true
		}
	}
	return info
}

// taskContext is the task's context (context.Background without one).
func taskContext(t runner.Task) context.Context {
	if t.Ctx == nil {
		return context.Background()
	}
	return t.Ctx
}

// applyFresh sends fresh worker samples (the first nOMA rows of each
// matrix over OMA, nNOMA over NOMA) through new realisations of the links
// the schemes were learned on — same encoders and noise level, the blocks
// delivered under truncated inversion; the digital baselines' samples
// coded with the same codes — and applies every scheme's map to them.
func (o *cmcOutput) applyFresh(rng *rand.Rand, link channel.Config, fresh []*mat.Dense, nOMA, nNOMA int) (map[string]*mat.Dense, error) {
	rows := func(n int) []*mat.Dense {
		out := make([]*mat.Dense, len(fresh))
		for k, f := range fresh {
			_, c := f.Dims()
			out[k] = f.Slice(0, n, 0, c).(*mat.Dense)
		}
		return out
	}
	again := map[*channel.Received]*channel.Received{}
	for _, l := range []struct {
		rx *channel.Received
		n  int
	}{{o.omaLink, nOMA}, {o.nomaLink, nNOMA}} {
		if l.rx == nil {
			continue
		}
		rx, err := channel.Retransmit(seed.Split(rng), link, l.rx, rows(l.n))
		if err == nil {
			rx, err = rx.Delivered()
		}
		if err != nil {
			return nil, fmt.Errorf("fresh %s signals: %w", strings.ToUpper(l.rx.Access.String()), err)
		}
		again[l.rx] = rx
	}
	if o.idealLink != nil {
		again[o.idealLink] = channel.Ideal(rows(nOMA))
	}
	// The digital streams: the same codes on the fresh samples, each from
	// its own stream split off rng after the analog ones.
	for _, ds := range o.digital {
		n := nOMA
		if ds.access == channel.NOMA {
			n = nNOMA
		}
		rx, err := ds.resend(seed.Split(rng), rows(n))
		if err != nil {
			return nil, fmt.Errorf("fresh %s signals: %w", ds.name, err)
		}
		again[ds.rx] = rx
	}
	out := map[string]*mat.Dense{}
	for name, so := range o.schemes {
		rx, ok := again[so.rx]
		if !ok {
			return nil, fmt.Errorf("%s: learned on an unknown link", name)
		}
		out[name] = so.m.Apply(rx)
	}
	return out, nil
}

// defaultSettings returns the default protocol's WVCMC settings for
// access, and whether the run evaluates that protocol.
func (cfg cmcConfig) defaultSettings(access channel.Access) (consensus.Settings, bool) {
	for _, r := range cfg.protocols {
		if r.protocol == scheme.Default {
			return r.forAccess(access), true
		}
	}
	return consensus.Settings{}, false
}
