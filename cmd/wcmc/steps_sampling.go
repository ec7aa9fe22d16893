package main

// The settings and outputs shared by wcmc sample and wcmc posterior: the
// sampler flags, and the sample file written with its summary and its
// sampler record.

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/diagnostics"
	"github.com/wcmc-project/wcmc/internal/progress"
	"github.com/wcmc-project/wcmc/npy"
	"github.com/wcmc-project/wcmc/sampler"
)

// samplingFlags are the sampler settings shared by wcmc sample and wcmc
// posterior: --samples, --burnin, --prior-var, --sampler, --chains and --thin.
type samplingFlags struct {
	s, burnin, chains, thin int
	priorVar                float64
	method                  string
	limits                  chainLimits // --max-rhat, --min-ess: the warning thresholds
}

// samplerHelp is the part of the commands' help on samplers and chains.
const samplerHelp = `

--sampler gibbs (the default, the paper's) is Albert–Chib Gibbs sampling;
--sampler hmc is Hamiltonian Monte Carlo preconditioned by the Laplace
approximation at the mode, its step size adapted during the burn-in. Gibbs
is cheap per sweep but mixes slowly when the classes are nearly separable
(MNIST 0 vs 1): look at R̂ and the ESS in the summary and switch to hmc
when they fail.

--chains C runs C chains in parallel, each on its own random stream
derived from (--seed, worker, chain): chain 1 starts at the posterior mode
(so it equals the single-chain output), chain c ≥ 2 at a draw from the
Laplace approximation N(θ̂, 4H⁻¹) (the deviations from the mode doubled), so
that R̂ across chains can see chains that have not forgotten their starts.
With C > 1 the .npy file holds a 3-D array (chains, draws, d); every step
that reads samples (transmit, aggregate, evaluate) takes the chains pooled,
C·S samples. The result does not depend on the number of cores. The
transitions done by all chains, the rate and the time left are shown on
stderr as wcmc run shows its tasks (-q silences them).

Beside FILE.npy, FILE.sampler.json records the sampler, its settings and
per chain the statistics after burn-in: acceptance rate, mean acceptance
probability, mean step size and leapfrog steps, divergent transitions.
FILE.sample_stats.npz (NumPy's archive of named arrays, np.load) holds per
draw the sampler's report on the transition that made it, each array of
shape (chains, draws): acceptance_rate (the acceptance probability),
accepted (1/0), lp (log density up to a constant; NaN for Gibbs),
step_size, n_steps (leapfrog steps) and diverging (1/0). 'wcmc export'
turns them into ArviZ's sample_stats.`

// register adds the flags to f, with the command's default S and its
// wording of the prior variance.
func (sf *samplingFlags) register(f *pflag.FlagSet, defaultS int, priorDoc string) {
	f.IntVar(&sf.s, "samples", defaultS, "samples to keep per chain")
	f.IntVar(&sf.burnin, "burnin", sampler.DefaultBurnIn, "transitions discarded first (Gibbs sweeps; HMC adapts its step size during them)")
	f.Float64Var(&sf.priorVar, "prior-var", wcmc.DefaultPriorVar, priorDoc)
	f.StringVar(&sf.method, "sampler", wcmc.Gibbs, "MCMC sampler: "+strings.Join(sampler.Methods, " or "))
	f.IntVar(&sf.chains, "chains", 1, "number of chains C, run in parallel (C > 1 writes a (C, S, d) array)")
	f.IntVar(&sf.thin, "thin", 1, "keep every thin-th transition after burn-in")
	sf.limits.register(f)
}

// Bounds on the sampling flags: a run beyond them would take hours to
// years, so it is refused rather than left to run silently.
const (
	maxChains      = 1024
	maxTransitions = 1e9 // chains × (burn-in + samples × thin)
)

// sampling checks the flags (the warning thresholds, sf.limits, too) and
// returns them as a wcmc.Sampling.
func (sf *samplingFlags) sampling() (wcmc.Sampling, error) {
	if _, err := sf.limits.check(); err != nil {
		return wcmc.Sampling{}, err
	}
	switch {
	case sf.s < 1:
		return wcmc.Sampling{}, fmt.Errorf("--samples must be ≥ 1, got %d", sf.s)
	case sf.burnin < 0:
		return wcmc.Sampling{}, fmt.Errorf("--burnin must be ≥ 0, got %d", sf.burnin)
	case !(sf.priorVar > 0):
		return wcmc.Sampling{}, fmt.Errorf("--prior-var must be positive, got %v", sf.priorVar)
	case math.IsInf(sf.priorVar, 1):
		return wcmc.Sampling{}, fmt.Errorf("--prior-var must be finite, got %v", sf.priorVar)
	case sf.method != wcmc.Gibbs && sf.method != wcmc.HMC:
		return wcmc.Sampling{}, fmt.Errorf("--sampler %q: want %s", sf.method, strings.Join(sampler.Methods, " or "))
	case sf.chains < 1:
		return wcmc.Sampling{}, fmt.Errorf("--chains must be ≥ 1, got %d", sf.chains)
	case sf.thin < 1:
		return wcmc.Sampling{}, fmt.Errorf("--thin must be ≥ 1, got %d", sf.thin)
	case sf.chains > maxChains:
		return wcmc.Sampling{}, fmt.Errorf("--chains %d: at most %d (each chain keeps its own state; R̂ needs only a few)", sf.chains, maxChains)
	}
	if n := float64(sf.chains) * (float64(sf.burnin) + float64(sf.s)*float64(sf.thin)); n > maxTransitions {
		return wcmc.Sampling{}, fmt.Errorf("--chains %d × (--burnin %d + --samples %d × --thin %d) = %.3g transitions, more than the %.0e wcmc runs (hours to years of sampling)",
			sf.chains, sf.burnin, sf.s, sf.thin, n, float64(maxTransitions))
	}
	return wcmc.Sampling{S: sf.s, BurnIn: sf.burnin, PriorVar: sf.priorVar, Sampler: sf.method, Chains: sf.chains, Thin: sf.thin}, nil
}

// drawWatched runs draw(ctx, s) with cmd's context, interruptible by it, and shows the
// chains' advance on cmd's progress output (none with --quiet) as wcmc run
// shows its tasks': "id: done/total transitions (p%), elapsed, rate,
// ~left" lines, or a bar on a terminal, then "id: total transitions done
// in elapsed". Watching changes no draw.
func drawWatched(cmd *cobra.Command, id string, s wcmc.Sampling, draw func(context.Context, wcmc.Sampling) (*wcmc.Draws, error)) (*wcmc.Draws, error) {
	meter := progress.New(progressOut(cmd), id, "transition", s.Chains*(s.BurnIn+s.S*s.Thin))
	s.Progress = func(done, _ int) { meter.Set(done) }
	stop := meter.Watch()
	// The chains stop at the signal too (they check the context), not
	// only the command.
	draws, err := interruptible(cmd.Context(), func() (*wcmc.Draws, error) { return draw(cmd.Context(), s) })
	stop()
	if err != nil {
		meter.Stop()
		return nil, err
	}
	meter.Finish()
	return draws, nil
}

// samplerFormat identifies the FILE.sampler.json written by wcmc sample and
// wcmc posterior.
const samplerFormat = "wcmc-sampler/1"

// samplerRecord is FILE.sampler.json: how the samples of FILE.npy were
// drawn, and the chains' statistics after burn-in.
type samplerRecord struct {
	Format   string       `json:"format"`
	Samples  string       `json:"samples"` // the .npy file, as given
	Sampler  string       `json:"sampler"`
	Chains   int          `json:"chains"`
	Draws    int          `json:"draws"` // per chain
	BurnIn   int          `json:"burnin"`
	Thin     int          `json:"thin"`
	PriorVar float64      `json:"prior_var"` // of the global prior (the worker's is K times it)
	Seed     uint64       `json:"seed"`
	Worker   int          `json:"worker,omitempty"`
	K        int          `json:"K,omitempty"`
	Shape    []int        `json:"shape"` // of the .npy array
	Start    string       `json:"start"`
	Stats    []chainStats `json:"stats"`
	// DrawStats names the arrays of FILE.sample_stats.npz (statsPath),
	// each of shape (chains, draws): drawStats.
	DrawStats []string `json:"draw_stats,omitempty"`
}

// drawStats are the per-draw statistics of FILE.sample_stats.npz, named as
// ArviZ names its sample_stats, and how each reads off the sampler's
// report on the transition that made the draw: the acceptance probability,
// whether it was accepted (1/0), the log density log p(θ, Z) + c (NaN for
// Gibbs, which does not compute it), the step size, the leapfrog steps and
// whether it diverged (1/0).
var drawStats = []struct {
	name string
	of   func(sampler.Info) float64
}{
	{"acceptance_rate", func(in sampler.Info) float64 { return in.AcceptProb }},
	{"accepted", func(in sampler.Info) float64 { return b2f(in.Accepted) }},
	{"lp", func(in sampler.Info) float64 { return in.LogDensity }},
	{"step_size", func(in sampler.Info) float64 { return in.StepSize }},
	{"n_steps", func(in sampler.Info) float64 { return float64(in.IntegrationSteps) }},
	{"diverging", func(in sampler.Info) float64 { return b2f(in.Divergent) }},
}

func b2f(x bool) float64 {
	if x {
		return 1
	}
	return 0
}

// drawStatNames lists the names of drawStats.
func drawStatNames() []string {
	out := make([]string, len(drawStats))
	for i, st := range drawStats {
		out[i] = st.name
	}
	return out
}

// writeDrawStats writes the per-draw statistics of the chains' infos
// (infos[c][i] for draw i of chain c) as an .npz archive: one
// uncompressed member NAME.npy per statistic, a float64 array of shape
// (chains, draws), which numpy.load reads.
func writeDrawStats(w io.Writer, infos [][]sampler.Info) error {
	zw := zip.NewWriter(w)
	for _, st := range drawStats {
		m := mat.NewDense(len(infos), len(infos[0]), nil)
		for c, in := range infos {
			for i, x := range in {
				m.Set(c, i, st.of(x))
			}
		}
		f, err := zw.CreateHeader(&zip.FileHeader{Name: st.name + ".npy", Method: zip.Store})
		if err != nil {
			return err
		}
		if err := npy.Write(f, m); err != nil {
			return err
		}
	}
	return zw.Close()
}

// statsPath returns the per-draw statistics beside the sample file out:
// samples-3.npy → samples-3.sample_stats.npz (not .npy, so that a glob of
// sample files, samples-*.npy, does not take it for one).
func statsPath(out string) string {
	return strings.TrimSuffix(out, ".npy") + ".sample_stats.npz"
}

// chainStats are one chain's sampler statistics (sampler.Stats).
type chainStats struct {
	Chain                int     `json:"chain"`
	Steps                int     `json:"steps"`
	AcceptRate           float64 `json:"accept_rate"`
	MeanAcceptProb       float64 `json:"mean_accept_prob"`
	StepSize             float64 `json:"step_size,omitempty"`
	MeanIntegrationSteps float64 `json:"mean_leapfrog_steps,omitempty"`
	Divergences          int     `json:"divergences"`
}

// chainStarts documents the chains' starting points in the record.
const chainStarts = "chain 1 at the posterior mode; chain c ≥ 2 at a draw from N(mode, 4H⁻¹), H the negative Hessian of the log posterior at the mode"

// sampleOutput is what wcmc sample and wcmc posterior write: FILE.npy,
// FILE.summary.csv, FILE.sampler.json and FILE.sample_stats.npz.
type sampleOutput struct {
	path    string
	draws   *wcmc.Draws
	summary sampleSummary
	record  samplerRecord
}

// newSampleOutput prepares the files of draws to be written to path (.npy)
// with the settings s and seed; its summary warns beyond limits.
func newSampleOutput(path string, draws *wcmc.Draws, s wcmc.Sampling, seed uint64, limits diagnostics.Thresholds) (*sampleOutput, error) {
	summary, err := summarize(path, limits, draws.Chains...)
	if err != nil {
		return nil, err
	}
	sr, d := draws.Chains[0].Dims()
	shape := []int{sr, d}
	if len(draws.Chains) > 1 {
		shape = []int{len(draws.Chains), sr, d}
	}
	rec := samplerRecord{
		Format: samplerFormat, Samples: path, Sampler: s.Sampler, Chains: len(draws.Chains), Draws: sr,
		BurnIn: s.BurnIn, Thin: s.Thin, PriorVar: s.PriorVar, Seed: seed, Shape: shape, Start: chainStarts,
	}
	for c, st := range draws.Stats {
		rec.Stats = append(rec.Stats, chainStats{
			Chain: c + 1, Steps: st.Steps, AcceptRate: st.AcceptRate, MeanAcceptProb: st.MeanAcceptProb,
			StepSize: st.StepSize, MeanIntegrationSteps: st.MeanIntegrationSteps, Divergences: st.Divergences,
		})
	}
	if len(draws.Infos) == len(draws.Chains) {
		rec.DrawStats = drawStatNames()
	}
	return &sampleOutput{path, draws, summary, rec}, nil
}

// recordPath returns the sampler record beside the sample file out:
// samples-3.npy → samples-3.sampler.json.
func recordPath(out string) string {
	return strings.TrimSuffix(out, ".npy") + ".sampler.json"
}

// write writes the files, all or nothing: the samples as an S×d array
// for one chain, (C, S, d) for C > 1, and the per-draw statistics when
// the draws have their infos.
func (o *sampleOutput) write() error {
	samples := npyFile(o.path, o.draws.Chains[0])
	if len(o.draws.Chains) > 1 {
		samples = outFile{o.path, func(w io.Writer) error { return npy.WriteChains(w, o.draws.Chains) }}
	}
	files := []outFile{samples, o.summary.file(), jsonFile(recordPath(o.path), o.record)}
	if o.record.DrawStats != nil {
		files = append(files, outFile{statsPath(o.path), func(w io.Writer) error { return writeDrawStats(w, o.draws.Infos) }})
	}
	return writeAll(files)
}

// print writes the summary table, the chains' sampler statistics and any
// warning (see sampleSummary.print).
func (o *sampleOutput) print(stdout, stderr io.Writer) {
	o.summary.print(stdout, stderr, o.path, len(o.draws.Chains), o.record.Sampler)
	if o.record.Sampler != wcmc.HMC {
		return
	}
	var div []string
	for _, st := range o.record.Stats {
		fmt.Fprintf(stdout, "chain %d: acceptance rate %.3f, step size %.3g, %.1f leapfrog steps, %d divergent\n",
			st.Chain, st.AcceptRate, st.StepSize, st.MeanIntegrationSteps, st.Divergences)
		if st.Divergences > 0 {
			div = append(div, fmt.Sprintf("chain %d: %d of %d", st.Chain, st.Divergences, st.Steps))
		}
	}
	if div != nil {
		fmt.Fprintf(stderr, "warning: %s: divergent HMC transitions (%s): the posterior has regions the step size cannot follow; "+
			"its samples may be biased. Burn in longer (--burnin) or check the data for extreme covariates.\n",
			o.path, strings.Join(div, "; "))
	}
}

// shapeString formats an array shape as rows×cols or chains×draws×d.
func shapeString(shape []int) string {
	parts := make([]string, len(shape))
	for i, n := range shape {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, "×")
}
