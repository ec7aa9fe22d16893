package claims_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"wcmc/claims"
	"wcmc/experiment"
	"wcmc/runner"
)

// world is a synthetic experiment outcome: the mean of each scheme at each
// sweep point (NaN: not applicable there). Its summary rows have a ±5%
// band around the mean, so with n = 100 trials the standard errors are
// about 0.3% of the means and every difference of a few percent decides.
type world struct {
	xname   string
	xs      []float64
	schemes []string
	mean    func(s string, x float64) float64
}

// rows returns the summary rows of w for metric with n trials.
func (w world) rows(metric string, n int) []runner.SummaryRow {
	var out []runner.SummaryRow
	for _, s := range w.schemes {
		for p, x := range w.xs {
			m := w.mean(s, x)
			if math.IsNaN(m) {
				continue
			}
			out = append(out, runner.SummaryRow{Scheme: s, XName: w.xname, X: x, Point: p, Metric: metric,
				Mean: m, Q05: 0.95 * m, Q95: 1.05 * m, N: n})
		}
	}
	return out
}

// without returns w without the given schemes.
func (w world) without(schemes ...string) world {
	w.schemes = slices.DeleteFunc(slices.Clone(w.schemes), func(s string) bool { return slices.Contains(schemes, s) })
	return w
}

// at returns w over other sweep points.
func (w world) at(xs ...float64) world {
	w.xs = xs
	return w
}

func snr(x float64) float64 { return math.Pow(10, x/10) }

var (
	allSchemes  = []string{"gcmc", "wgcmc-oma", "wgcmc-noma", "wvcmc-oma", "wvcmc-noma", "cmc-noiseless", "best-single"}
	gradSchemes = []string{"wvcmc-oma", "wvcmc-noma", "sgld"}
	gradXs      = []float64{1e5, 3e5, 1e6, 3e6, 1e7, 3e7, 1e8}
	snrXs       = []float64{-10, -5, 0, 5, 10, 15, 20, 25, 30}
)

// Gauss-blocks: OMA schemes need S = T/K ≥ 2, so they start at T = 20.
func blocks(m func(s string, T float64) float64) world {
	return world{"T", []float64{5, 7, 10, 20, 50, 100, 200, 500, 1000, 2000}, allSchemes[:6], func(s string, T float64) float64 {
		if T < 20 && !strings.HasSuffix(s, "noma") {
			return math.NaN()
		}
		return m(s, T)
	}}
}

var blocksHold = blocks(func(s string, T float64) float64 {
	floor := 2 / math.Sqrt(T/10)
	switch s {
	case "wvcmc-noma":
		return 0.01
	case "wgcmc-noma":
		return 2 / math.Sqrt(T)
	case "wgcmc-oma", "cmc-noiseless":
		return floor
	case "gcmc":
		return floor + 0.5
	}
	return 0.02 // wvcmc-oma
})

var blocksFail = blocks(func(s string, T float64) float64 {
	floor := 2 / math.Sqrt(T/10)
	switch s {
	case "wvcmc-noma":
		return 3 / math.Sqrt(T) // worse than wgcmc-noma, still decaying at T ≈ 7
	case "wgcmc-noma":
		return 2 / math.Sqrt(T)
	case "wgcmc-oma":
		return floor + 0.5 // floors
	case "gcmc", "cmc-noiseless":
		return floor // optimal
	}
	return 0.02
})

var gaussSNRHold = world{"snr_db", snrXs, allSchemes[:6], func(s string, x float64) float64 {
	switch s {
	case "wvcmc-noma":
		return 0.03
	case "wvcmc-oma":
		return 0.05
	case "wgcmc-oma":
		return 0.1 + 1/(1+snr(x))
	case "gcmc":
		return 0.1 + 3/(1+snr(x))
	case "wgcmc-noma":
		return 0.3 + 1/(1+snr(x))
	}
	return 0.09
}}

var gaussSNRFail = world{"snr_db", snrXs, allSchemes[:6], func(s string, x float64) float64 {
	switch s {
	case "wvcmc-noma":
		return 0.03 * (1 + 10/(1+snr(x))) // not flat, behind OMA
	case "wvcmc-oma":
		return 0.02
	case "wgcmc-oma":
		return 0.1 + 1/(1+snr(x))
	case "gcmc":
		return 0.5 * (0.1 + 1/(1+snr(x))) // better than wgcmc-oma everywhere
	case "wgcmc-noma":
		return 0.01 // better than everything
	}
	return 0.09
}}

func grad(m func(s string, g float64) float64) world {
	return world{"gradients", gradXs, gradSchemes, func(s string, g float64) float64 {
		if s == "sgld" && g < 3e5 {
			return math.NaN() // still in burn-in
		}
		return m(s, g)
	}}
}

var gradHold = grad(func(s string, g float64) float64 {
	switch s {
	case "wvcmc-noma":
		return 0.02 + 1e5/g
	case "wvcmc-oma":
		return 0.05 + 1e5/g
	}
	return 10 * (0.05 + 1e5/g)
})

// gradOMABest: for MNIST (Fig. 9) OMA is the best.
var gradOMABest = grad(func(s string, g float64) float64 {
	switch s {
	case "wvcmc-oma":
		return 0.02 + 1e5/g
	case "wvcmc-noma":
		return 0.05 + 1e5/g
	}
	return 10 * (0.05 + 1e5/g)
})

var gradFail = grad(func(s string, g float64) float64 {
	base := 0.02 + 1e5/g
	switch s {
	case "wvcmc-noma":
		return 2 * base // behind OMA, wider band (the band is ±5% of the mean)
	case "wvcmc-oma":
		return base
	}
	return 1.5 * base // SGLD close to WVCMC
})

var probitSNRHold = world{"snr_db", []float64{0, 5, 10, 15, 20, 25, 30, 35}, allSchemes, func(s string, x float64) float64 {
	switch s {
	case "wvcmc-noma":
		return 0.02 * (1 + 0.5/(1+snr(x)))
	case "wvcmc-oma":
		return 0.03 * (1 + 0.5/(1+snr(x)))
	case "gcmc":
		return 0.6
	case "best-single":
		return 0.3
	}
	return 0.5
}}

var probitSNRFail = world{"snr_db", []float64{0, 5, 10, 15, 20, 25, 30, 35}, allSchemes, func(s string, x float64) float64 {
	switch s {
	case "wvcmc-noma":
		return 0.02 * (1 + 10/(1+snr(x))) // ×6 at 0 dB
	case "wvcmc-oma":
		return 0.03 * (1 + 10/(1+snr(x)))
	case "best-single":
		return 0.01
	case "wgcmc-oma", "wgcmc-noma":
		return 0.03
	}
	return 0.6
}}

var workersXs = []float64{5, 10, 20, 30, 40, 50}

var workersHold = world{"K", workersXs, allSchemes, func(s string, K float64) float64 {
	m := 0.01 * math.Sqrt(K)
	if strings.HasSuffix(s, "-oma") && K > 20 {
		m *= K / 20 // OMA degrades further beyond K = 20
	}
	return m
}}

var workersFail = world{"K", workersXs, allSchemes, func(s string, K float64) float64 {
	m := 0.01 / math.Sqrt(K)
	if strings.HasSuffix(s, "-oma") && K > 20 {
		m *= 20 / K
	}
	return m
}}

var zetaXs = []float64{0, 0.5, 1, 1.5, 2}

var zetaHold = world{"zeta", zetaXs, allSchemes, func(s string, z float64) float64 {
	if strings.HasSuffix(s, "-noma") {
		return 0.02 * (1 + z) * (1 + z)
	}
	return 0.03 * (1 + z)
}}

var zetaFail = world{"zeta", zetaXs, allSchemes, func(s string, z float64) float64 {
	if strings.HasSuffix(s, "-noma") {
		return 0.02 / ((1 + z) * (1 + z))
	}
	return 0.03 / (1 + z)
}}

var highdimHold = world{"snr_db", []float64{0, 10, 20, 30}, allSchemes, func(s string, _ float64) float64 {
	return map[string]float64{"wvcmc-oma": 0.02, "wvcmc-noma": 0.03, "wgcmc-oma": 0.5, "wgcmc-noma": 0.8,
		"gcmc": 1, "best-single": 0.7, "cmc-noiseless": 0.9}[s]
}}

var highdimFail = world{"snr_db", []float64{0, 10, 20, 30}, allSchemes, func(s string, _ float64) float64 {
	return map[string]float64{"wvcmc-oma": 0.03, "wvcmc-noma": 0.02, "wgcmc-oma": 0.8, "wgcmc-noma": 0.5,
		"gcmc": 1, "best-single": 0.025, "cmc-noiseless": 0.9}[s]
}}

var mnistXs = []float64{0, 10, 20, 30, 40}

var mnistHold = world{"snr_db", mnistXs, allSchemes, func(s string, x float64) float64 {
	switch s {
	case "wvcmc-oma":
		return 0.02
	case "wvcmc-noma":
		return 0.04
	case "gcmc":
		return 0.5 + 0.02*x
	case "wgcmc-oma":
		return 0.4 + 0.02*x
	case "wgcmc-noma":
		return 0.45 + 0.02*x
	case "best-single":
		return 0.6 // below gcmc and wgcmc-oma from 10 dB on
	}
	return 0.3
}}

var mnistFail = world{"snr_db", mnistXs, allSchemes, func(s string, x float64) float64 {
	switch s {
	case "wvcmc-oma":
		return 0.05
	case "wvcmc-noma":
		return 0.04
	case "gcmc":
		return 1.3 - 0.02*x
	case "wgcmc-oma":
		return 1.2 - 0.02*x
	case "wgcmc-noma":
		return 0.001 // better than WVCMC
	case "best-single":
		return 100 // far worse than gcmc and wgcmc-oma everywhere
	}
	return 0.3
}}

// claimCase gives, for one claim (and its fresh twin), a world in which it
// holds, one in which it fails, and one lacking what it needs.
type claimCase struct {
	id               string
	hold, fail, none world
}

var claimCases = []claimCase{
	{"fig2-wvcmc-noma-fastest", blocksHold, blocksFail, blocksHold.at(20, 50, 2000)},
	{"fig2-wvcmc-noma-vanishes", blocksHold, blocksFail, blocksHold.at(20, 50, 2000)},
	{"fig2-wgcmc-optimal", blocksHold, blocksFail, blocksHold.without("cmc-noiseless")},
	{"fig2-gcmc-not-optimal", blocksHold, blocksFail, blocksHold.without("cmc-noiseless")},

	{"fig3-wvcmc-best", gaussSNRHold, gaussSNRFail, gaussSNRHold.without("wvcmc-oma", "wvcmc-noma")},
	{"fig3-wvcmc-flat", gaussSNRHold, gaussSNRFail, gaussSNRHold.at(5)},
	{"fig3-wgcmc-oma-beats-gcmc", gaussSNRHold, gaussSNRFail, gaussSNRHold.at(15, 20, 30)},
	{"fig3-wgcmc-oma-meets-gcmc", gaussSNRHold, gaussSNRFail, gaussSNRHold.at(-10, 0, 10)},
	{"fig3-wgcmc-noma-worse", gaussSNRHold, gaussSNRFail, gaussSNRHold.without("wgcmc-noma")},
	{"fig3-wvcmc-noma-ahead", gaussSNRHold, gaussSNRFail, gaussSNRHold.without("wvcmc-oma")},

	{"fig4-wvcmc-beats-sgld", gradHold, gradFail, gradHold.without("sgld")},
	{"fig4-wvcmc-noma-best-late", gradHold, gradFail, gradHold.at(1e5, 1e6, 3e6)},
	{"fig4-wvcmc-noma-least-spread", gradHold, gradFail, gradHold.at(1e5, 1e6, 3e6)},

	{"fig5-wvcmc-best", probitSNRHold, probitSNRFail, probitSNRHold.without("wvcmc-oma", "wvcmc-noma")},
	{"fig5-wvcmc-slight-low-snr", probitSNRHold, probitSNRFail, probitSNRHold.at(20)},
	{"fig5-wgcmc-hurt", probitSNRHold, probitSNRFail, probitSNRHold.without("wgcmc-oma", "wgcmc-noma")},

	{"fig6-error-grows-with-k", workersHold, workersFail, workersHold.at(20)},
	{"fig6-oma-degrades-beyond-20", workersHold, workersFail, workersHold.at(5, 10)},

	{"fig7-heterogeneity-hurts", zetaHold, zetaFail, zetaHold.at(0)},
	{"fig7-noma-hurt-more", zetaHold, zetaFail, zetaHold.at(0)},

	{"fig8-wvcmc-best", highdimHold, highdimFail, highdimHold.without("wvcmc-oma", "wvcmc-noma")},
	{"fig8-oma-ahead", highdimHold, highdimFail, highdimHold.without("wvcmc-noma", "wgcmc-noma")},

	{"fig9-wvcmc-beats-sgld", gradOMABest, gradFail, gradOMABest.without("sgld")},
	{"fig9-wvcmc-oma-best", gradOMABest, gradHold, gradOMABest.without("sgld")},

	{"fig10-wvcmc-best", mnistHold, mnistFail, mnistHold.without("wvcmc-oma", "wvcmc-noma")},
	{"fig10-oma-ahead", mnistHold, mnistFail, mnistHold.without("wvcmc-noma")},
	{"fig10-gaussian-schemes-worse-high-snr", mnistHold, mnistFail, mnistHold.at(20)},
	{"fig10-below-single-worker", mnistHold, mnistFail, mnistHold.without("best-single")},

	{"fig11-kl-wvcmc-best", mnistHold, mnistFail, mnistHold.without("wvcmc-oma", "wvcmc-noma")},
	{"fig11-kl-oma-ahead", mnistHold, mnistFail, mnistHold.without("wvcmc-noma")},
}

// variants returns a claim and its fresh-signal twin, if any.
func variants(t *testing.T, id string) []claims.Claim {
	t.Helper()
	c, ok := claims.Lookup(id)
	if !ok {
		t.Fatalf("no claim %q", id)
	}
	out := []claims.Claim{c}
	if f, ok := claims.Lookup(id + "-fresh"); ok {
		out = append(out, f)
	}
	return out
}

func TestClaimsOnSyntheticSummaries(t *testing.T) {
	covered := map[string]bool{}
	for _, cc := range claimCases {
		for _, c := range variants(t, cc.id) {
			covered[c.ID] = true
			for _, w := range []struct {
				name string
				w    world
				n    int
				want claims.Verdict
			}{
				{"hold", cc.hold, 100, claims.Holds},
				{"fail", cc.fail, 100, claims.Fails},
				{"missing", cc.none, 100, claims.NotEvaluated},
				// One trial gives no Monte Carlo error: nothing decides.
				{"n=1", cc.hold, 1, claims.Inconclusive},
			} {
				o := c.Evaluate(w.w.rows(c.Metric, w.n))
				if o.Verdict != w.want {
					t.Errorf("%s on the %q world: %v (%s), want %v", c.ID, w.name, o.Verdict, o.Reason, w.want)
					for _, cmp := range o.Comparisons {
						t.Logf("  %s: %s → %v [%g, %g] %s", cmp.At, cmp.Test, cmp.Verdict, cmp.Lo, cmp.Hi, cmp.Note)
					}
				}
				if o.Reason == "" {
					t.Errorf("%s on the %q world: empty reason", c.ID, w.name)
				}
				if o.Verdict != claims.NotEvaluated && len(o.Comparisons) == 0 {
					t.Errorf("%s on the %q world: verdict %v without comparisons", c.ID, w.name, o.Verdict)
				}
			}
			// Rows of another metric only: not evaluated.
			if o := c.Evaluate(cc.hold.rows("other", 100)); o.Verdict != claims.NotEvaluated {
				t.Errorf("%s without its metric: %v", c.ID, o.Verdict)
			}
		}
	}
	for _, c := range claims.All() {
		if !covered[c.ID] {
			t.Errorf("claim %s has no synthetic test case", c.ID)
		}
	}
}

func TestClaimsMatchExperiments(t *testing.T) {
	specs := map[string]runner.Spec{}
	for _, s := range experiment.All() {
		specs[s.ID] = s
	}
	ids := map[string]bool{}
	perExp := map[string]int{}
	for _, c := range claims.All() {
		if ids[c.ID] {
			t.Errorf("duplicate claim ID %s", c.ID)
		}
		ids[c.ID] = true
		spec, ok := specs[c.Experiment]
		if !ok {
			t.Errorf("%s: unknown experiment %q", c.ID, c.Experiment)
			continue
		}
		perExp[c.Experiment]++
		if !slices.Contains(spec.Metrics, c.Metric) {
			t.Errorf("%s: experiment %s has no metric %q", c.ID, c.Experiment, c.Metric)
		}
		if c.Figure != spec.Figure {
			t.Errorf("%s: figure %q, experiment says %q", c.ID, c.Figure, spec.Figure)
		}
		if c.Quote == "" || c.Section == "" || c.Threshold == "" || c.Source == "" || c.Check == nil {
			t.Errorf("%s: incomplete claim %+v", c.ID, c)
		}
		// Claims on the paper's in-sample metric have a fresh-signal twin
		// wherever the experiment reports one (issue 8).
		fresh := map[string]string{"err2": "err2_fresh", "kl": "kl_fresh"}[c.Metric]
		if fresh != "" && slices.Contains(spec.Metrics, fresh) {
			tw, ok := claims.Lookup(c.ID + "-fresh")
			if !ok || tw.Metric != fresh {
				t.Errorf("%s: no %s twin", c.ID, fresh)
			}
		}
	}
	for id := range specs {
		if perExp[id] == 0 {
			t.Errorf("experiment %s has no claims", id)
		}
	}
}
