package experiment

import (
	"fmt"
	"math/rand/v2"
	"strings"

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

// parseProtocols reads the "protocols" parameter: a non-empty comma list
// of distinct protocol names, returned in scheme.Protocols order.
func parseProtocols(v runner.Values) ([]scheme.Protocol, error) {
	seen := map[scheme.Protocol]bool{}
	for _, s := range strings.Split(v.String("protocols"), ",") {
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

// protocolRuns returns the optimiser settings of every protocol the run
// evaluates. batch is N_b for the minibatch optimisers (0 = full batch);
// the paper's steps eta_oma and eta_noma are divided by etaDiv wherever SGD
// uses them (K under eta_over_k, else 1).
func protocolRuns(v runner.Values, batch int, etaDiv float64) ([]protocolRun, error) {
	ps, err := parseProtocols(v)
	if err != nil {
		return nil, err
	}
	runs := make([]protocolRun, len(ps))
	for i, p := range ps {
		r := protocolRun{protocol: p}
		switch p {
		case scheme.Default:
			r.oma, r.noma = optimizerFor(v, "oma", batch), optimizerFor(v, "noma", batch)
		case scheme.Paper:
			r.oma, r.noma = paperOptimizer(v, "oma", batch), paperOptimizer(v, "noma", batch)
		case scheme.Converged:
			if tol := v.Float("converged_tol"); tol >= 1 {
				return nil, fmt.Errorf("converged_tol = %g: must be below 1 (a fraction of the start's gradient norm)", tol)
			}
			r.oma, r.noma = convergedOptimizer(v), convergedOptimizer(v)
		}
		for _, o := range []*consensus.Settings{&r.oma, &r.noma} {
			if m, ok := o.Method.(consensus.SGD); ok {
				m.Step /= etaDiv
				o.Method = m
			}
		}
		runs[i] = r
	}
	return runs, nil
}

// paperOptimizer is the paper's procedure for access "oma" or "noma":
// SGD with step eta_<access> for iters_<access> iterations on minibatches
// of batch (0 = full batch), no holdout (consensus.Paper).
func paperOptimizer(v runner.Values, access string, batch int) consensus.Settings {
	return consensus.Paper(v.Float("eta_"+access), zeroOff(v.Int("iters_"+access)), batch)
}

// convergedOptimizer runs the in-sample objective, without holdout, to a
// stationary point (consensus.Converged: Newton in whitened coordinates
// where the Hessian is cheap, else whitened L-BFGS) until its gradient
// norm is converged_tol times the start's, or at converged_iters
// iterations.
func convergedOptimizer(v runner.Values) consensus.Settings {
	return consensus.Converged(v.Int("converged_iters"), v.Float("converged_tol"))
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
		return rand.New(rand.NewPCG(s.a, s.b))
	}
	return seed.New(s.a).AddUint64(s.b).AddString(string(p)).Rand()
}
