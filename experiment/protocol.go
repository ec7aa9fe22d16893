package experiment

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/consensus"
	"github.com/wcmc-project/wcmc/internal/seed"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

// A protocol is a named optimiser setting under which the WVCMC schemes
// are run (package scheme). The "protocols" parameter lists those a run
// evaluates; every trial runs each listed protocol on the same worker
// samples and the same received signals, so the protocols' results are
// paired with each other and with the schemes that learn no map. Rows of
// a protocol other than default are named scheme.Under(s, p), e.g.
// "wvcmc-oma.paper".

// The converged protocol's default tolerances (converged_tol). Probit:
// from 1e-4 to 1e-8 the in-sample err2 and kl move by ≤ 0.5% on
// paper-size trials (bench/convstudy). Gaussian: the in-sample err2 is 0
// at the exact minimum (the map matches the in-sample moment), so the
// stop's residue is the whole value — 1e-5 at 1e-4, 1e-9 at 1e-8
// (gauss-blocks, T = 7 and 50000, 20 trials) — and Newton reaches 1e-8
// for 23% more CPU than 1e-4.
const (
	probitConvergedTol = "1e-4"
	gaussConvergedTol  = "1e-8"
)

// protocolRun is one protocol's WVCMC optimiser settings per access.
type protocolRun struct {
	protocol  scheme.Protocol
	oma, noma consensus.Settings
}

// forAccess returns the run's settings for access a.
func (r protocolRun) forAccess(a channel.Access) consensus.Settings {
	if a == channel.NOMA {
		return r.noma
	}
	return r.oma
}

// protocolParams list the protocols a run evaluates and bound the
// converged one; tol is the default of converged_tol.
func protocolParams(tol string) []runner.Param {
	return []runner.Param{protocolsParam(),
		intParam("converged_iters", "20000", "iteration cap of the converged protocol (its status in the results JSON says whether the cap or convergence stopped it)", 1),
		positiveParam("converged_tol", tol, "the converged protocol stops when the in-sample objective's gradient norm is this fraction of its start value "+
			"(probit: 1e-4 settles the in-sample err2 and kl within 0.5%; Gaussian: 1e-8, since there the in-sample err2 vanishes at the minimum and a looser stop leaves a residue of 1e-5; see docs/PERFORMANCE.md)")}
}

// protocolsParam lists the protocols a run evaluates.
func protocolsParam() runner.Param {
	return stringParam("protocols", "default",
		"WVCMC optimisation protocols to run, a comma list of default (the optimizer settings above; at their defaults L-BFGS "+
			"with held-out early stopping), paper (the paper's SGD: step eta_*, iters_* iterations, minibatch batch_frac where the "+
			"experiment has one, no holdout) and converged (run to a stationary point of the in-sample objective, no holdout); "+
			"results of paper and converged are named wvcmc-oma.paper, wvcmc-noma.converged, …")
}

// accessSteps are the paper's SGD settings for one access (OMA or NOMA):
// the step η (eta_<access>) and the iterations t_m (iters_<access>, also
// Adam's).
type accessSteps struct {
	eta   float64
	iters int
}

// optimizerConfig is how WVCMC is optimised (optimizerParams, with the
// experiment's eta_* and iters_*): the optimiser of the default protocol
// and the protocols the run evaluates.
type optimizerConfig struct {
	method     string // consensus.NameLBFGS, NameAdam or NameSGD
	adamStep   float64
	lbfgsIters int
	holdout    float64 // fraction held out (0 = none)
	oma, noma  accessSteps

	protocols      []scheme.Protocol // in scheme.Protocols order
	convergedIters int
	convergedTol   float64
}

// decodeOptimizer reads the optimiser and protocol parameters.
func decodeOptimizer(v runner.Values, p *problems) optimizerConfig {
	o := optimizerConfig{
		method:         v.String("optimizer"),
		adamStep:       v.Float("adam_step"),
		lbfgsIters:     v.Int("lbfgs_iters"),
		holdout:        v.Float("holdout"),
		oma:            accessSteps{eta: v.Float("eta_oma"), iters: v.Int("iters_oma")},
		noma:           accessSteps{eta: v.Float("eta_noma"), iters: v.Int("iters_noma")},
		convergedIters: v.Int("converged_iters"),
		convergedTol:   v.Float("converged_tol"),
	}
	var err error
	o.protocols, err = parseProtocols(v.String("protocols"))
	p.add("protocols", err)
	if slices.Contains(o.protocols, scheme.Converged) && o.convergedTol >= 1 {
		p.addf("converged_tol", "converged_tol = %g: must be below 1 (a fraction of the start's gradient norm)", o.convergedTol)
	}
	return o
}

// parseProtocols reads the "protocols" parameter: a non-empty comma list
// of distinct protocol names, returned in scheme.Protocols order.
func parseProtocols(list string) ([]scheme.Protocol, error) {
	seen := map[scheme.Protocol]bool{}
	for _, s := range strings.Split(list, ",") {
		p, err := scheme.ParseProtocol(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("protocols: %w", err)
		}
		if seen[p] {
			return nil, fmt.Errorf("protocols: %s is listed twice", p)
		}
		seen[p] = true
	}
	var out []scheme.Protocol
	for _, p := range scheme.Protocols {
		if seen[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

// runs returns the optimiser settings of every protocol the run
// evaluates. batch is N_b for the minibatch optimisers (0 = full batch);
// the paper's steps η are divided by etaDiv wherever SGD uses them (K
// under eta_over_k, else 1).
func (o optimizerConfig) runs(batch int, etaDiv float64) []protocolRun {
	runs := make([]protocolRun, len(o.protocols))
	for i, p := range o.protocols {
		r := protocolRun{protocol: p}
		switch p {
		case scheme.Default:
			r.oma, r.noma = o.settings(o.oma, batch), o.settings(o.noma, batch)
		case scheme.Paper:
			r.oma, r.noma = paperOptimizer(o.oma, batch), paperOptimizer(o.noma, batch)
		case scheme.Converged:
			r.oma, r.noma = o.converged(), o.converged()
		}
		for _, s := range []*consensus.Settings{&r.oma, &r.noma} {
			if m, ok := s.Method.(consensus.SGD); ok {
				m.Step /= etaDiv
				s.Method = m
			}
		}
		runs[i] = r
	}
	return runs
}

// settings is the default protocol's optimiser for an access with steps
// a: optimizer with its parameters (eta and iters of a, adam_step,
// lbfgs_iters, holdout); batch is N_b for sgd and adam (0 = full batch).
// The parameters' 0 (holdout = 0, iters = 0) means none, which
// consensus.Settings spells consensus.Off.
func (o optimizerConfig) settings(a accessSteps, batch int) consensus.Settings {
	holdout := zeroOff(o.holdout)
	iters := zeroOff(a.iters)
	switch o.method {
	case consensus.NameSGD:
		return consensus.Paper(a.eta, iters, batch)
	case consensus.NameAdam:
		return consensus.Settings{Method: consensus.Adam{Step: o.adamStep, Iters: iters, BatchSize: batch}, Holdout: holdout}
	}
	return consensus.Settings{Method: consensus.LBFGS{Iters: o.lbfgsIters}, Holdout: holdout}
}

// paperOptimizer is the paper's procedure for an access with steps a:
// SGD with step η for t_m iterations on minibatches of batch (0 = full
// batch), no holdout (consensus.Paper).
func paperOptimizer(a accessSteps, batch int) consensus.Settings {
	return consensus.Paper(a.eta, zeroOff(a.iters), batch)
}

// converged runs the in-sample objective, without holdout, to a
// stationary point (consensus.Converged: Newton in whitened coordinates
// where the Hessian is cheap, else whitened L-BFGS) until its gradient
// norm is converged_tol times the start's, or at converged_iters
// iterations.
func (o optimizerConfig) converged() consensus.Settings {
	return consensus.Converged(o.convergedIters, o.convergedTol)
}

// zeroOff maps a parameter's 0 ("none") to consensus.Off.
func zeroOff[T int | float64](x T) T {
	if x == 0 {
		return consensus.Off
	}
	return x
}

// resultNames lists the names under which the schemes' results are
// reported: each scheme in order, a variational one once per protocol.
func resultNames(schemes []string, runs []protocolRun) []string {
	var out []string
	for _, s := range schemes {
		if !scheme.IsVariational(s) {
			out = append(out, s)
			continue
		}
		for _, r := range runs {
			out = append(out, scheme.Under(s, r.protocol))
		}
	}
	return out
}

// allResultNames lists every name a spec may report (Spec.Schemes, the
// plot order): its schemes, then the variational ones under the paper and
// converged protocols.
func allResultNames(schemes []string) []string {
	out := append([]string(nil), schemes...)
	for _, p := range []scheme.Protocol{scheme.Paper, scheme.Converged} {
		for _, s := range schemes {
			if scheme.IsVariational(s) {
				out = append(out, scheme.Under(s, p))
			}
		}
	}
	return out
}

// seededStream is a generator with its seed kept, so that streams for the
// protocols can be derived from it.
type seededStream struct{ a, b uint64 }

// splitSeeds draws the seed of an independent stream from rng (the same
// two draws as seed.Split).
func splitSeeds(rng *rand.Rand) seededStream { return seededStream{rng.Uint64(), rng.Uint64()} }

// forProtocol returns the stream of protocol p: for Default the stream
// the seed names (as seed.Split would give), for any other protocol one seeded
// by the seed and the protocol's name (seed.Hash) — independent of which
// other protocols the run evaluates.
func (s seededStream) forProtocol(p scheme.Protocol) *rand.Rand {
	if p == scheme.Default {
		return s.rand()
	}
	return seed.New(s.a).AddUint64(s.b).AddString(string(p)).Rand()
}

// rand is the stream the seed names: PCG(a, b), as seed.Split gives.
func (s seededStream) rand() *rand.Rand { return rand.New(rand.NewPCG(s.a, s.b)) }

// chains returns the generators of c Markov chains on the stream: the
// first is the stream itself (s.rand, so that the first of c chains draws
// what a single chain draws), chain j ≥ 1 one seeded by the seed, "chain"
// and j (seed.Hash.Chains) — the scheme of wcmc sample --chains.
func (s seededStream) chains(c int) []*rand.Rand {
	return seed.New(s.a).AddUint64(s.b).AddString("chain").Chains(s.rand(), c)
}
