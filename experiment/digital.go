package experiment

import (
	"fmt"
	"maps"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/consensus"
	"github.com/wcmc-project/wcmc/digital"
	"github.com/wcmc-project/wcmc/internal/seed"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

// The ideal digital baselines (docs/BEYOND.md note 16) as schemes of the
// wireless experiments, run when the parameter digital is true:
//
//   - digital-gcmc: every worker codes its S = ⌊T/K⌋ OMA samples at the
//     rate of its OMA blocks (quantiser digital_quantizer) and the server
//     applies Scott's weights to the decoded samples;
//   - digital-wgcmc-oma: the same budget with the additive-noise quantiser
//     (x̂ = x + N(0, N_k I)), whose decoded streams are analog streams of
//     known noise, combined by WGCMC;
//   - digital-wgcmc-noma: as digital-wgcmc-oma on the NOMA budget, each
//     worker sending its S = T samples at the common rate of the
//     multiple-access channel (16.2).

// Quantiser names of the digital_quantizer parameter.
const (
	digitalTestChannel = "testchannel"
	digitalPosterior   = "posterior"
	digitalAdditive    = "additive"
	digitalUniform     = "uniform"
	digitalDither      = "uniform-dither"
)

// digitalConfig is the setting of the digital baselines.
type digitalConfig struct {
	capacity  digital.Capacity
	quantizer string // digital-gcmc's quantiser, a digital_quantizer name
	sideBits  float64
	// The practical options: SNR gap (dB), codeword length (0: ∞) and its
	// error probability (0 without a length).
	gapDB    float64
	blockLen int
	errProb  float64
}

// decodeDigital reads the digital parameters (digitalParams): nil when
// digital is false.
func decodeDigital(v runner.Values, p *problems) *digitalConfig {
	if !v.Bool("digital") {
		return nil
	}
	c, err := digital.ParseCapacity(v.String("digital_capacity"))
	p.add("digital_capacity", err)
	d := &digitalConfig{capacity: c, quantizer: v.String("digital_quantizer"), sideBits: v.Float("side_info_bits"),
		gapDB: v.Float("gap_db"), blockLen: v.Int("blocklength")}
	if d.blockLen > 0 {
		d.errProb = v.Float("error_prob")
	}
	return d
}

// quantizer returns the quantiser named q.
func quantizer(q string) digital.Quantizer {
	switch q {
	case digitalPosterior:
		return digital.TestChannel{PosteriorDraw: true}
	case digitalAdditive:
		return digital.AdditiveNoise{}
	case digitalUniform:
		return digital.Uniform{}
	case digitalDither:
		return digital.Uniform{Dither: true}
	}
	return digital.TestChannel{}
}

// link returns the digital link of a baseline over the analog link l.
func (c *digitalConfig) link(l channel.Config, access channel.Access, quant string) digital.Link {
	l.Access = access
	return digital.Link{Channel: l, Capacity: c.capacity, Quantizer: quantizer(quant), SideInfoBits: c.sideBits,
		GapDB: c.gapDB, BlockLength: c.blockLen, ErrorProb: c.errProb}
}

// digitalBaselines lists, in scheme.Digital order, each baseline's access,
// quantiser and combiner.
func (c *digitalConfig) baselines() []digitalBaseline {
	return []digitalBaseline{
		{scheme.DigitalGCMC, channel.OMA, c.quantizer, consensus.GCMC},
		{scheme.DigitalWGCMCOMA, channel.OMA, digitalAdditive, consensus.WGCMC},
		{scheme.DigitalWGCMCNOMA, channel.NOMA, digitalAdditive, consensus.WGCMC},
		// Last, so that adding them left the other baselines' streams as
		// they were.
		{name: scheme.DigitalWVCMCOMA, access: channel.OMA, quant: digitalAdditive},
		{name: scheme.DigitalWVCMCNOMA, access: channel.NOMA, quant: digitalAdditive},
	}
}

// digitalBaseline is one baseline: its access budget, quantiser and
// combiner; a nil learn is WVCMC under the default protocol (learned on
// the decoded stream with the experiment's optimiser settings).
type digitalBaseline struct {
	name   string
	access channel.Access
	quant  string
	learn  func(*channel.Received) (consensus.Map, error)
}

// digitalStream is what one digital baseline sent: its budget, the code
// of every worker (mean, principal directions and variances of the block
// it coded) and the decoded samples as the scheme received them.
type digitalStream struct {
	name   string
	access channel.Access
	quant  string
	budget digital.Budget
	codes  []*digital.Source
	rx     *channel.Received
}

// runDigital runs the enabled digital baselines on the OMA and NOMA
// samples, each from its own stream split off rng (one per baseline,
// whether it runs or not, after every other use of rng; none when digital
// is off). A link that cannot carry the block (side information costing
// more than its rate, a rate of 0 for the additive-noise quantiser) is a
// skip, with the reason.
func (o *cmcOutput) runDigital(rng *rand.Rand, cfg cmcConfig, omaSamples, nomaSamples []*mat.Dense) error {
	if cfg.digital == nil {
		return nil
	}
	for _, b := range cfg.digital.baselines() {
		r := seed.Split(rng)
		if !cfg.enabled[b.name] {
			continue
		}
		samples := omaSamples
		if b.access == channel.NOMA {
			samples = nomaSamples
		}
		if s, _ := samples[0].Dims(); s < 2 {
			o.skip(b.name, "%v delivers S = %d < 2 samples per worker", b.access, s)
			continue
		}
		decoded, budget, err := cfg.digital.link(cfg.link, b.access, b.quant).Send(r, samples)
		if err != nil {
			o.skip(b.name, "%v", err)
			continue
		}
		rx, err := budget.Received(decoded)
		if err != nil {
			return fmt.Errorf("%s: %w", b.name, err)
		}
		ds := &digitalStream{name: b.name, access: b.access, quant: b.quant, budget: budget, rx: rx, codes: make([]*digital.Source, len(samples))}
		for k, x := range samples {
			// The code Send used: NewSource is deterministic.
			if ds.codes[k], err = digital.NewSource(x); err != nil {
				return fmt.Errorf("%s: worker %d: %w", b.name, k+1, err)
			}
		}
		if b.learn == nil {
			opt, ok := cfg.defaultSettings(b.access)
			if !ok {
				o.skip(b.name, "runs under the default protocol, which this run does not evaluate")
				continue
			}
			// The baseline's stream continues: Send drew from r before.
			if err := o.variational(r, b.name, cfg, rx, opt); err != nil {
				return err
			}
		} else if err := o.gaussianScheme(b.name, cfg, rx, b.learn); err != nil {
			return err
		}
		if _, ok := o.schemes[b.name]; ok {
			o.digital = append(o.digital, ds)
			info := budgetInfo(budget)
			maps.Copy(info, o.info[b.name]) // WVCMC's fit record, if any
			o.info[b.name] = info
		}
	}
	return nil
}

// resend codes fresh samples (one matrix per worker) with the stream's
// codes and rates, as the server would receive a second block coded with
// the first block's side information.
func (ds *digitalStream) resend(rng *rand.Rand, fresh []*mat.Dense) (*channel.Received, error) {
	q := quantizer(ds.quant)
	decoded := make([]*mat.Dense, len(fresh))
	for k, x := range fresh {
		code := *ds.codes[k]
		code.X = x
		out, err := q.Quantize(rng, &code, ds.budget.Workers[k].Rate)
		if err != nil {
			return nil, fmt.Errorf("worker %d: %w", k+1, err)
		}
		decoded[k] = out.X
	}
	return ds.budget.Received(decoded)
}

// budgetInfo records a digital link's accounting per worker: the bits per
// sample it carries, those left for the samples after side information,
// the rate–distortion bound at that rate and the distortion achieved.
func budgetInfo(b digital.Budget) map[string]any {
	n := len(b.Workers)
	capacity, rate, bound, dist := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for k, w := range b.Workers {
		capacity[k], rate[k], bound[k], dist[k] = w.Capacity, w.Rate, w.Bound, w.Distortion
	}
	info := map[string]any{"capacity": b.Capacity.String(), "channel_uses_per_sample": b.Uses,
		"bits_per_sample": capacity, "rate": rate, "distortion_bound": bound, "distortion": dist}
	if p := b.Pilots; p != nil {
		info["pilots"] = map[string]any{"budget_blocks": p.Budget, "samples_blocks": p.Samples, "pilot_uses": p.Uses(), "idle_uses": p.Idle}
	}
	return info
}

// withDigital returns schemes followed by the digital baselines: the
// names a wireless experiment may report.
func withDigital(schemes []string) []string {
	return append(append([]string(nil), schemes...), scheme.Digital...)
}
