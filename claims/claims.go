// Package claims holds the paper's claims about its figures (Section VI)
// as data: each Claim quotes the paper, names the experiment and metric it
// is about, states its threshold, and checks it on that experiment's
// summary (runner.Summarize), returning a verdict and the numbers it
// compared.
//
// Every comparison is of summary means against their Monte Carlo error
// (see Estimate and Comparison): a difference decides only when its 99%
// confidence interval excludes zero, otherwise the comparison is
// inconclusive. Words of degree in the paper ("vastly", "converging",
// "essentially unaffected", "slightly") are read as fixed factors on the
// means (VastFactor, NearFactor, SlightFactor), stated beside each claim;
// the Monte Carlo margin is applied on top of them.
package claims

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"wcmc/runner"
)

// Verdict is the result of checking a claim.
type Verdict int

const (
	// NotEvaluated: the data needed are absent (experiment not run, scheme
	// not applicable at the points needed, sweep without such points).
	NotEvaluated Verdict = iota
	// Holds: every comparison supports the claim beyond Monte Carlo error.
	Holds
	// Fails: some comparison contradicts the claim beyond Monte Carlo error.
	Fails
	// Inconclusive: no comparison contradicts the claim, but some lie
	// within Monte Carlo error (too few trials to decide).
	Inconclusive
)

// Verdicts lists the verdicts in the order reports count them.
var Verdicts = []Verdict{Holds, Fails, Inconclusive, NotEvaluated}

func (v Verdict) String() string {
	switch v {
	case Holds:
		return "holds"
	case Fails:
		return "fails"
	case Inconclusive:
		return "inconclusive"
	}
	return "not evaluated"
}

// Degree factors: how the paper's words of degree are read. The paper's
// figures are log-scale plots spanning several decades (its source does
// not include them), so its qualitative words are read as ratios of means.
const (
	// NearFactor: "converging", "attain optimality", "essentially
	// unaffected" — two means within 25% of each other (0.1 decade, about
	// the width of a plotted line and marker on such axes).
	NearFactor = 1.25
	// VastFactor: "vastly" and "significantly" outperform — the better
	// mean at least a factor 2 (0.3 decade) below the other, the weakest
	// reading under which the curves are visibly apart.
	VastFactor = 2.0
	// SlightFactor: "degrades slightly" — at most a factor 2 worse.
	SlightFactor = 2.0
)

// Method describes, for reports, how verdicts are decided.
var Method = fmt.Sprintf(`Each claim is checked on the experiment's summary (mean and 5–95%% band over n trials per scheme and sweep point). `+
	`The per-trial standard deviation is estimated from the band as σ̂ = (q95 − q05)/w(n), where w(n) is the expected width `+
	`of that band for n normal values (the expected range for n < 20, → 3.29 for large n), and the standard error of a mean is σ̂/√n. `+
	`A comparison of means holds when its %.0f%% confidence interval (Student t on min(n) − 1 degrees of freedom, schemes treated `+
	`as independent, which is conservative) lies above zero, fails when it lies below, and is inconclusive otherwise; `+
	`with n = 1 nothing can be decided. Spreads are compared with a variance-ratio F test at the same level. `+
	`Words of degree are factors on the means: "vastly"/"significantly" ×%g, "converging"/"optimal"/"unaffected" within ×%g, `+
	`"slightly" at most ×%g. A claim holds when all its comparisons hold, fails when any fails, and is inconclusive otherwise; `+
	`it is not evaluated when the schemes or sweep points it needs are absent.`,
	100*Level, VastFactor, NearFactor, SlightFactor)

// Outcome is the result of checking one claim.
type Outcome struct {
	Verdict     Verdict
	Reason      string // one line: why this verdict
	Comparisons []Comparison
}

// Claim is one statement of the paper about one experiment's figure.
type Claim struct {
	ID         string // unique, e.g. "fig3-wvcmc-best"; "-fresh" twins check the fresh-signal metric
	Experiment string // experiment ID, e.g. "gauss-snr"
	Figure     string // e.g. "Fig. 3"
	Section    string // where the paper says it, e.g. "Sec. VI-A, Error vs SNR"
	Quote      string // the paper's words
	Source     string // "paper", or the issue whose reading of the paper this is
	Metric     string // the metric checked
	Threshold  string // the rule, in words
	// Check evaluates the claim on the experiment's summary rows.
	Check func(rows []runner.SummaryRow) Outcome
}

// Evaluate checks c on the summary rows of its experiment: NotEvaluated
// when rows hold no value of c's metric.
func (c Claim) Evaluate(rows []runner.SummaryRow) Outcome {
	if !slices.ContainsFunc(rows, func(r runner.SummaryRow) bool { return r.Metric == c.Metric }) {
		return Outcome{Verdict: NotEvaluated, Reason: fmt.Sprintf("no %s values in the summary", c.Metric)}
	}
	return c.Check(rows)
}

// All returns every claim, in figure order.
func All() []Claim { return slices.Clone(registry) }

// For returns the claims about one experiment.
func For(experiment string) []Claim {
	var out []Claim
	for _, c := range registry {
		if c.Experiment == experiment {
			out = append(out, c)
		}
	}
	return out
}

// Lookup returns the claim with the given ID.
func Lookup(id string) (Claim, bool) {
	for _, c := range registry {
		if c.ID == id {
			return c, true
		}
	}
	return Claim{}, false
}

// notEvaluated returns a NotEvaluated outcome with the formatted reason.
func notEvaluated(format string, args ...any) Outcome {
	return Outcome{Verdict: NotEvaluated, Reason: fmt.Sprintf(format, args...)}
}

// allOf combines comparisons that must all hold: fails if any fails, holds
// if all hold, inconclusive otherwise (not evaluated if none could be
// evaluated). The reason quotes the deciding comparison: the first that
// fails, the first left undecided, or the closest call among those that
// hold.
func allOf(cs []Comparison) Outcome {
	o := Outcome{Comparisons: cs}
	if len(cs) == 0 {
		o.Verdict, o.Reason = NotEvaluated, "nothing to compare"
		return o
	}
	count := map[Verdict]int{}
	var firstFail, firstOpen, closest *Comparison // closest: the holding comparison with the smallest lower bound
	for i := range cs {
		c := &cs[i]
		count[c.Verdict]++
		switch c.Verdict {
		case Fails:
			if firstFail == nil {
				firstFail = c
			}
		case Inconclusive, NotEvaluated:
			if firstOpen == nil {
				firstOpen = c
			}
		case Holds:
			if closest == nil || c.Lo < closest.Lo {
				closest = c
			}
		}
	}
	n := len(cs)
	switch {
	case firstFail != nil:
		o.Verdict = Fails
		o.Reason = "fails " + firstFail.Brief()
		if n > 1 {
			o.Reason = fmt.Sprintf("%d of %d comparisons fail, first %s", count[Fails], n, firstFail.Brief())
		}
	case count[NotEvaluated] == n:
		o.Verdict = NotEvaluated
		o.Reason = fmt.Sprintf("no comparison could be evaluated: %s", cs[0].Note)
	case firstOpen != nil:
		o.Verdict = Inconclusive
		o.Reason = "undecided " + firstOpen.Brief()
		if n > 1 {
			o.Reason = fmt.Sprintf("%d of %d comparisons hold, none fails; undecided %s", count[Holds], n, firstOpen.Brief())
		}
	default:
		o.Verdict = Holds
		o.Reason = "holds " + closest.Brief()
		if n > 1 {
			o.Reason = fmt.Sprintf("all %d comparisons hold; closest %s", n, closest.Brief())
		}
	}
	return o
}

// anyOf combines comparisons of which one holding suffices: holds if any
// holds, fails if all fail, inconclusive otherwise. When none holds, the
// reason names the comparison nearest to holding (the largest lower bound).
func anyOf(cs []Comparison) Outcome {
	o := Outcome{Comparisons: cs}
	if len(cs) == 0 {
		o.Verdict, o.Reason = NotEvaluated, "nothing to compare"
		return o
	}
	nFail := 0
	var nearest *Comparison
	for i := range cs {
		c := &cs[i]
		if c.Verdict == Holds {
			o.Verdict = Holds
			o.Reason = "holds " + c.Brief()
			return o
		}
		if c.Verdict == Fails {
			nFail++
		}
		if nearest == nil || c.Lo > nearest.Lo {
			nearest = c
		}
	}
	n := len(cs)
	if nFail == n {
		o.Verdict = Fails
		o.Reason = "fails " + nearest.Brief()
		if n > 1 {
			o.Reason = fmt.Sprintf("all %d comparisons fail; nearest to holding %s", n, nearest.Brief())
		}
		return o
	}
	o.Verdict = Inconclusive
	o.Reason = fmt.Sprintf("none of %d comparisons holds (%d fail, %d undecided); nearest to holding %s",
		n, nFail, n-nFail, nearest.Brief())
	return o
}

// table indexes the summary rows of one metric by scheme and sweep point.
type table struct {
	xname  string
	metric string
	est    map[string]map[int]Estimate // scheme → point → estimate
	x      map[int]float64             // point → x
}

func newTable(rows []runner.SummaryRow, metric string) *table {
	t := &table{metric: metric, est: map[string]map[int]Estimate{}, x: map[int]float64{}}
	for _, r := range rows {
		if r.Metric != metric {
			continue
		}
		t.xname = r.XName
		if t.est[r.Scheme] == nil {
			t.est[r.Scheme] = map[int]Estimate{}
		}
		t.est[r.Scheme][r.Point] = EstimateOf(r)
		t.x[r.Point] = r.X
	}
	return t
}

// get returns the estimate of scheme at point p.
func (t *table) get(scheme string, p int) (Estimate, bool) {
	e, ok := t.est[scheme][p]
	return e, ok
}

// points returns the sweep points at which every scheme given has a
// value, ordered by increasing x.
func (t *table) points(schemes ...string) []int {
	var out []int
	for p := range t.x {
		ok := true
		for _, s := range schemes {
			if _, has := t.est[s][p]; !has {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if t.x[out[i]] != t.x[out[j]] {
			return t.x[out[i]] < t.x[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}

// at returns "xname=x" of point p.
func (t *table) at(p int) string { return t.xname + "=" + runner.FormatX(t.x[p]) }

// missing returns the schemes given that have no value of the metric.
func (t *table) missing(schemes ...string) []string {
	var out []string
	for _, s := range schemes {
		if len(t.est[s]) == 0 {
			out = append(out, s)
		}
	}
	return out
}

// present returns the schemes given that have a value at point p.
func (t *table) present(p int, schemes ...string) []string {
	var out []string
	for _, s := range schemes {
		if _, ok := t.est[s][p]; ok {
			out = append(out, s)
		}
	}
	return out
}

// bestOf returns the scheme among those given with the smallest mean at p.
func (t *table) bestOf(p int, schemes ...string) (Estimate, bool) {
	var best Estimate
	found := false
	for _, s := range schemes {
		e, ok := t.est[s][p]
		if !ok || math.IsNaN(e.Mean) {
			continue
		}
		if !found || e.Mean < best.Mean {
			best, found = e, true
		}
	}
	return best, found
}

func factorTest(fa float64, a string, fb float64, b string) string {
	f := func(k float64, s string) string {
		if k == 1 {
			return s
		}
		return fmt.Sprintf("%g×%s", k, s)
	}
	return f(fa, a) + " < " + f(fb, b)
}

func joinOr(s []string) string { return strings.Join(s, ", ") }
