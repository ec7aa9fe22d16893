package experiment

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/wcmc-project/wcmc/dataset"
	"github.com/wcmc-project/wcmc/internal/memlimit"
	"github.com/wcmc-project/wcmc/runner"
)

// Checks that every experiment's parameters must pass before any work
// starts, beyond what runner.Resolve checks (kinds, declared ranges,
// finiteness) and what each spec's own Validate checks (schemes, K ≤ N,
// ζ ≥ 0, the MNIST files). Values far outside these limits do not fail
// cleanly downstream: an SNR of −3100 dB overflows N0 = P/(m_r 10^{SNR/10})
// and the eigendecomposition of the GCMC map panics; a transmit power of
// 1e-320 underflows the same way; prior_var = 1e-300 stalls the samplers;
// repetition = 100000 allocates m_r × m_r matrices with m_r = l·d = 500000.

// Limits of the parameters checked by ValidateParams.
const (
	MinSNRdB    = -100.0 // dB; the paper's figures span 0–35 dB
	MaxSNRdB    = 100.0
	MinPower    = 1e-12 // transmit power budget P
	MaxPower    = 1e12
	MinPriorVar = 1e-6 // probit prior variance σ²
	MaxPriorVar = 1e6
	MaxMr       = 4096 // received dimensions m_r = l·d
	MNISTPixels = 28 * 28
)

// Validated returns s with ValidateParams added to its Validate and
// CheckSetup to its Setup, so that a run fails before its first task, with
// a message naming the parameter, rather than midway or with a panic.
// Hook: in registry.go, register(s) stores Validated(s).
func Validated(s runner.Spec) runner.Spec {
	validate := s.Validate
	s.Validate = func(v runner.Values) error {
		if validate != nil {
			if err := validate(v); err != nil {
				return err
			}
		}
		return ValidateParams(v)
	}
	if setup := s.Setup; setup != nil {
		s.Setup = func(v runner.Values, rng *rand.Rand) (any, error) {
			shared, err := setup(v, rng)
			if err != nil {
				return nil, err
			}
			if err := CheckSetup(v, shared); err != nil {
				return nil, err
			}
			return shared, nil
		}
	}
	return s
}

// ValidateParams checks, at every sweep point, the parameters that the
// experiments declare without a range: snr_db in [MinSNRdB, MaxSNRdB],
// power in [MinPower, MaxPower], prior_var in [MinPriorVar, MaxPriorVar],
// the received dimension m_r = repetition·d ≤ MaxMr (d = pca_dim, +1 with
// bias, for MNIST), and pca_dim ≤ MNISTPixels. Parameters an experiment
// does not have are not checked. Every error names the parameter.
func ValidateParams(v runner.Values) error {
	has := func(name string) bool { return slices.Contains(v.Names(), name) }
	var errs []error
	seen := map[string]bool{}
	report := func(key string, err error) {
		if !seen[key] { // once per parameter, not once per sweep point
			seen[key] = true
			errs = append(errs, err)
		}
	}
	for _, x := range v.XList() {
		p := v.With(v.XName(), runner.FormatX(x))
		if has("snr_db") {
			if s := p.Float("snr_db"); s < MinSNRdB || s > MaxSNRdB {
				report("snr_db", fmt.Errorf("snr_db = %g dB: must be in [%g, %g] dB (the noise power N0 = P/(m_r·10^(SNR/10)) leaves floating point far outside it)", s, MinSNRdB, MaxSNRdB))
			}
		}
		if has("power") {
			if pw := p.Float("power"); pw < MinPower || pw > MaxPower {
				report("power", fmt.Errorf("power = %g: the transmit power P must be in [%g, %g] (only its ratio to N0, the SNR, matters to the schemes)", pw, MinPower, MaxPower))
			}
		}
		if has("prior_var") {
			if pv := p.Float("prior_var"); pv < MinPriorVar || pv > MaxPriorVar {
				report("prior_var", fmt.Errorf("prior_var = %g: the prior variance σ² must be in [%g, %g]", pv, MinPriorVar, MaxPriorVar))
			}
		}
		if has("pca_dim") {
			if k := p.Int("pca_dim"); k > MNISTPixels {
				report("pca_dim", fmt.Errorf("pca_dim = %d: an MNIST image has %d pixels, so at most %d components", k, MNISTPixels, MNISTPixels))
			}
		}
		if has("repetition") {
			d, from := 0, ""
			switch {
			case has("d"):
				d = p.Int("d")
			case has("pca_dim"):
				d, from = p.Int("pca_dim"), " (pca_dim)"
				if has("bias") && p.Bool("bias") {
					d, from = d+1, " (pca_dim + bias)"
				}
			}
			if l := p.Int("repetition"); d > 0 && l > MaxMr/d {
				report("repetition", fmt.Errorf("repetition = %d with d = %d%s: m_r = l·d = %d received dimensions, more than %d (memory grows as m_r²)", l, d, from, l*d, MaxMr))
			}
		}
		if err := checkMemory(p, has); err != nil {
			report("memory", err)
		}
		if has("csi_error") {
			if err := checkLink(p, has); err != nil {
				report("link", err)
			}
		}
	}
	return errors.Join(errs...)
}

// checkLink checks the channel parameters of the models beyond the paper
// at one sweep point (linkConfig: channel.Config.Validate and the sources
// of per-worker SNR), one SNR offset per worker, and, with digital=true, a
// link the digital baselines model (digital.Link.Validate).
func checkLink(p runner.Values, has func(string) bool) error {
	link, err := linkConfig(p)
	if err != nil {
		return fmt.Errorf("channel: %w", err)
	}
	if n := len(link.Gains.OffsetDB); n > 0 && has("K") && n != p.Int("K") {
		return fmt.Errorf("snr_offsets_db lists %d offsets for K = %d workers: give one per worker", n, p.Int("K"))
	}
	dc, err := digitalSettings(p)
	if err != nil || dc == nil {
		return err
	}
	for _, b := range dc.baselines() {
		if err := dc.link(link, b.access, b.quant).Validate(); err != nil {
			return fmt.Errorf("digital=true: %w", err)
		}
	}
	return nil
}

// checkMemory refuses sizes whose arrays cannot fit in memory (see package
// memlimit): the data sets, N×d training, n_test×d test and ref_samples×d
// reference points, and per task the workers' samples and received
// signals, K·T·d and K·T·m_r at most (NOMA: S = T per worker; S per
// worker without T), each also fresh_factor times again for the fresh
// signals.
func checkMemory(p runner.Values, has func(string) bool) error {
	size := func(name string, def int) int {
		if has(name) {
			return p.Int(name)
		}
		return def
	}
	d := size("d", 0)
	if has("pca_dim") {
		d = p.Int("pca_dim") + boolInt(has("bias") && p.Bool("bias"))
	}
	d = max(d, 1)
	// T blocks, or S samples per worker where there are no blocks.
	k, t, l, fresh := size("K", 1), size("T", 0)+size("S", 0), size("repetition", 1), size("fresh_factor", 0)
	points := memlimit.Floats(size("N", 0), d) + memlimit.Floats(size("n_test", 0), d) + memlimit.Floats(size("ref_samples", 0), d)
	task := (memlimit.Floats(k, t, d) + memlimit.Floats(k, t, l, d)) * float64(1+fresh)
	var named []string
	for _, name := range []string{"N", "n_test", "ref_samples", "T", "S", "K", "d", "pca_dim", "repetition", "fresh_factor"} {
		if has(name) {
			named = append(named, name+" = "+p.Raw(name))
		}
	}
	return memlimit.Check(strings.Join(named, ", "), points+task)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// CheckSetup checks, once Setup has built the data, what depends on it:
// with partition=heterogeneous, that the class-skewed split gives every
// worker data at every sweep point (ζ and K), so that a large ζ fails
// before the first task rather than at its own sweep point.
func CheckSetup(v runner.Values, shared any) error {
	p, ok := shared.(*probitProblem)
	if !ok || !slices.Contains(v.Names(), "partition") {
		return nil
	}
	for _, x := range v.XList() {
		pt := v.With(v.XName(), runner.FormatX(x))
		if pt.String("partition") != "heterogeneous" {
			continue
		}
		// The split's sizes depend only on the labels, ζ and K; the rng
		// only decides which points go where.
		rng := rand.New(rand.NewPCG(1, 2))
		if _, err := dataset.PartitionHeterogeneous(rng, p.train.V, pt.Int("K"), pt.Float("zeta")); err != nil {
			return fmt.Errorf("zeta = %g, K = %d: %w", pt.Float("zeta"), pt.Int("K"), err)
		}
	}
	return nil
}
