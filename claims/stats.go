package claims

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/wcmc-project/wcmc/runner"
)

// Level is the two-sided confidence level of every comparison's interval:
// a claim at its boundary is spuriously held with nominal probability
// α = (1 − Level)/2 = 0.5%, and spuriously failed with as much, however
// many comparisons it is made of (see node). The calibration test
// (calibration_test.go) checks the real rates through the claims' own
// checks: within Monte Carlo error of α on skewed trials (log-normal
// σ = 1, χ²₁) from MinTrials on; above it, at the rates Method states,
// where one scheme's values are heavy-tailed or rarely 50× larger.
const Level = 0.99

// Estimate is the mean of one scheme's values at one sweep point over its
// trials (or, for a spread comparison, the mean absolute deviation of the
// values from their median).
type Estimate struct {
	Scheme string
	XName  string
	X      float64
	What   string // "mean" or "spread"
	Mean   float64
	N      int
}

// At returns "xname=x".
func (e Estimate) At() string { return e.XName + "=" + runner.FormatX(e.X) }

// String returns "mean (n=…)".
func (e Estimate) String() string {
	s := fmt.Sprintf("%s (n=%d)", Num(e.Mean), e.N)
	if e.What != "mean" && e.What != "" {
		s = e.What + " " + s
	}
	return s
}

// Num formats a number with 3 significant digits.
func Num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return fmt.Sprintf("%.3g", v)
}

// Comparison is one test within a claim. Its contrast θ is the natural log
// of a ratio of means that exceeds 1 when the data support the claim:
// f_b·b̄/(f_a·ā) for "f_a·a < f_b·b", (a₁/a₀)/(b₁/b₀) for "a grows more
// than b", spread(b)/spread(a) for "a spreads less than b". Stat, Lo and
// Hi are θ̂ and its two-sided Level interval, SE its delta-method
// standard error; PHold and PFail are the one-sided bootstrap p-values of
// θ ≤ 0 and θ ≥ 0 (for a direction decided with all trials, the larger of
// that and the p-value without the trial whose leaving out weakens it
// most). The verdict is the comparison's after the claim's multiplicity
// correction: holds when PHold is below the threshold the claim's formula
// gives it, fails likewise with PFail, inconclusive otherwise.
type Comparison struct {
	At           string // where, e.g. "snr_db=5" or "T=7 vs T=2000"
	Test         string // what, e.g. "wvcmc-noma < gcmc"
	Values       []Estimate
	Stat, SE     float64
	Lo, Hi       float64
	PHold, PFail float64
	N            int // trials, paired (same point, or common random numbers)
	Resamples    int
	Verdict      Verdict
	Note         string // why it could not decide, if so
	// Fragile: decided with all trials, but not without the one whose
	// leaving out weakens the verdict most (see Note); not decided.
	Fragile bool
}

// Ratio returns the contrast and its interval as ratios, exp(θ̂) and
// [exp(lo), exp(hi)]: above 1 supports the claim.
func (c Comparison) Ratio() (est, lo, hi float64) {
	return math.Exp(c.Stat), math.Exp(c.Lo), math.Exp(c.Hi)
}

// Interval returns "[lo, hi]" of the ratio.
func (c Comparison) Interval() string {
	_, lo, hi := c.Ratio()
	return fmt.Sprintf("[%s, %s]", Num(lo), Num(hi))
}

// Brief returns a one-line account: "at AT: TEST (values v1 vs v2; ratio
// r, 99% CI [lo, hi], n paired trials)", with the note if any.
func (c Comparison) Brief() string {
	ms := make([]string, len(c.Values))
	for i, e := range c.Values {
		ms[i] = Num(e.Mean)
	}
	what := "means"
	if len(c.Values) > 0 {
		switch w := c.Values[0].What; w {
		case "spread":
			what = "spreads"
		case "mean", "":
		default:
			what = w
		}
	}
	if len(ms) > 4 {
		// A contrast over many sweep points: its values are in the
		// report's table; the line says how many.
		ms = append(ms[:4:4], fmt.Sprintf("… (%d values)", len(c.Values)))
	}
	r, _, _ := c.Ratio()
	s := fmt.Sprintf("at %s: %s (%s %s; ratio %s, %.0f%% CI %s, n=%d paired)", c.At, c.Test, what,
		strings.Join(ms, " vs "), Num(r), 100*Level, c.Interval(), c.N)
	if c.Note != "" {
		s += "; " + c.Note
	}
	return s
}

// term is one ln(mean) of a contrast: the values of one scheme at one
// sweep point, with its weight.
type term struct {
	ref
	w float64
}

// contrastLeaf returns the comparison of θ = offset + Σ w ln(mean of the
// term's values), after transform (nil: the values themselves), on the
// trials that have every term, resampled as pairs.
func contrastLeaf(t *Trials, at, test string, offset float64, transform func([]float64) []float64, terms ...term) *node {
	c := Comparison{At: at, Test: test, Stat: math.NaN(), SE: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), PHold: 1, PFail: 1}
	l := &leaf{}
	n := &node{leaf: l}
	what, minTrials := "mean", MinTrials
	if transform != nil {
		what, minTrials = "spread", MinSpreadTrials
	}
	l.minTrials = minTrials
	// Every term is paired by trial (TrialsOf: common random numbers
	// across sweep points), so the terms form one sample: the trials with
	// all of them.
	refs := make([]ref, len(terms))
	for j, tm := range terms {
		t.used[tm.scheme] = true
		refs[j] = tm.ref
	}
	trials := t.trialsOf(refs...)
	c.N = len(trials)
	con := &contrast{offset: offset, transform: transform, sample: sample{trials: trials}}
	s := &con.sample
	atFloor := true // every value compared is an err2 at Err2Floor
	infSign := 0.0
	infOnOne := false // an infinite mean rests on one trial's +Inf
	seen := map[ref]bool{}
	notPositive := ""
	for _, tm := range terms {
		col, _ := t.column(tm.ref, trials)
		raw := col
		if transform != nil && len(col) > 0 {
			col = transform(col)
		}
		m := mean(col)
		if !seen[tm.ref] {
			seen[tm.ref] = true
			c.Values = append(c.Values, Estimate{Scheme: tm.scheme, XName: t.XName, X: t.x[tm.point], What: what, Mean: m, N: len(col)})
		}
		switch {
		case math.IsInf(m, 1):
			infSign += math.Copysign(1, tm.w)
			infOnOne = infOnOne || countInf(col) == 1
			continue
		case !(m > 0) && notPositive == "":
			notPositive = fmt.Sprintf("the %s of %s at %s is not positive", what, tm.scheme, t.at(tm.point))
		}
		s.cols = append(s.cols, col)
		s.w = append(s.w, tm.w)
		if transform != nil {
			s.raw = append(s.raw, raw)
		}
		atFloor = atFloor && transform == nil && isErr2(t.Metric) && !slices.ContainsFunc(col, func(v float64) bool { return v != Err2Floor })
	}
	switch {
	case c.N == 0:
		c.Verdict, c.Note, l.fixed = NotEvaluated, "no trial has all the values compared", true
	case infSign != 0 || slices.ContainsFunc(c.Values, func(e Estimate) bool { return math.IsInf(e.Mean, 1) }):
		// Some trial gave +Inf: the means it enters are infinite.
		c.Note = "an infinite mean (some trial gave +Inf)"
		c.Verdict = Inconclusive
		switch {
		case infOnOne:
			// Leaving that trial out makes the mean finite: as fragile as
			// any comparison decided by one trial.
			c.Note, l.fixed = "an infinite mean resting on one trial's +Inf: not decided", true
		case c.N < minTrials:
			c.Note, l.fixed = fmt.Sprintf("an infinite mean (some trials gave +Inf), at n = %d trials, fewer than the %d needed to decide", c.N, minTrials), true
		case infSign > 0:
			c.Stat, c.Lo, c.Hi, c.PHold = math.Inf(1), math.Inf(1), math.Inf(1), 0
		case infSign < 0:
			c.Stat, c.Lo, c.Hi, c.PFail = math.Inf(-1), math.Inf(-1), math.Inf(-1), 0
		default:
			c.Note, l.fixed = "infinite means on both sides", true
		}
	case c.N < 2:
		c.Verdict, c.Note, l.fixed = Inconclusive, "n = 1: no Monte Carlo error estimate", true
	case notPositive != "":
		c.Verdict, c.Note, l.fixed = NotEvaluated, notPositive, true
	default:
		c.Verdict = Inconclusive
		l.con = con
		if atFloor && len(s.cols) > 0 {
			c.Note = fmt.Sprintf("every value compared is at the err2 floor %g (an optimiser's stopping residue): the means are equal by construction", Err2Floor)
		}
		if c.N < minTrials {
			// Too few to decide; the estimate still says how many would.
			c.Note, l.fixed = fmt.Sprintf("n = %d trials, fewer than the %d needed to decide", c.N, minTrials), true
			th, v := newWork(*s).eval()
			c.Stat, c.SE = offset+th, math.Sqrt(v)
		}
	}
	l.cmp = c
	return n
}

// zeroWidthNote is the note of a comparison whose standard error is zero.
const zeroWidthNote = "every trial gives the same ratio: no Monte Carlo error estimate, not decided"

// run bootstraps the leaf's contrast (unless its verdict is fixed),
// seeding the generator from key and the comparison.
func (l *leaf) run(key string, resamples int, tauH, tauF float64) {
	if l.fixed || l.con == nil {
		return
	}
	b := l.con.bootstrap(seeded(key, l.cmp.At, l.cmp.Test), resamples, tauH, tauF, true)
	c := &l.cmp
	c.Stat, c.SE, c.Lo, c.Hi, c.PHold, c.PFail, c.Resamples = b.stat, b.se, b.lo, b.hi, b.pHold, b.pFail, b.resamples
	if b.degenerate {
		c.Note = joinNotes(c.Note, zeroWidthNote)
	}
}

// recheck re-runs the bootstrap of a leaf that reached verdict v (Holds or
// Fails) at threshold tau, leaving out the trial whose removal moves its
// estimate furthest the other way (contrast.leaveOneOut). The re-run's
// resamples follow the same rule as the first run's for that direction
// (fixed in advance by the leaf's smallest threshold), and it is seeded
// from key, the comparison and the direction. The leaf's p-value in that
// direction becomes the larger of the two: still a valid p-value, since
// P(max(p, p₋) ≤ τ) ≤ P(p ≤ τ) ≤ τ whichever trial is left out.
func (l *leaf) recheck(n *node, key string, resamples int, v Verdict, tau float64) {
	down := v == Holds
	i, _ := l.con.leaveOneOut(down)
	tauH, tauF := 1.0, n.tauF
	if down {
		tauH, tauF = n.tauH, 1
	}
	b := l.con.without(i).bootstrap(seeded(key, l.cmp.At, l.cmp.Test, "without one trial", v.String()), resamples, tauH, tauF, false)
	p := b.pFail
	if down {
		p = b.pHold
	}
	l.loo = &looCheck{dir: v, tau: tau, trial: l.con.sample.trials[i], stat: b.stat, se: b.se, p: p, degenerate: b.degenerate}
	if down {
		l.cmp.PHold = max(l.cmp.PHold, p)
	} else {
		l.cmp.PFail = max(l.cmp.PFail, p)
	}
}

// looCheck is the re-check of a decided comparison without one trial.
type looCheck struct {
	dir        Verdict // the verdict re-checked: Holds or Fails
	tau        float64 // the threshold it was reached at
	trial      int     // the trial left out
	stat, se   float64 // θ̂ and its standard error without it
	p          float64 // the p-value in direction dir without it
	degenerate bool    // without it, se is zero
}

// fragile reports whether the verdict does not survive leaving the trial
// out.
func (c *looCheck) fragile() bool { return c != nil && c.p > c.tau }

// note says why a fragile comparison is not decided.
func (c *looCheck) note() string {
	if c.degenerate {
		return fmt.Sprintf("%s only with trial %d: leaving it out, %s", c.dir, c.trial, zeroWidthNote)
	}
	return fmt.Sprintf("%s only with trial %d: leaving it out gives ratio %s with p = %.2g, above the threshold %.2g it was decided at; not decided",
		c.dir, c.trial, Num(math.Exp(c.stat)), c.p, c.tau)
}

// joinNotes joins two notes with "; ".
func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// countInf returns how many of x are +Inf.
func countInf(x []float64) int {
	n := 0
	for _, v := range x {
		if math.IsInf(v, 1) {
			n++
		}
	}
	return n
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// absDevFromMedian returns |x_i − median(x)|, the values whose mean is
// Brown–Forsythe's measure of spread.
func absDevFromMedian(x []float64) []float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	out := make([]float64, n)
	for i, v := range x {
		out[i] = math.Abs(v - med)
	}
	return out
}

// ratioLeaf tests fa·a < fb·b on the means: θ = ln(fb·b̄) − ln(fa·ā).
func ratioLeaf(t *Trials, at, test string, a ref, fa float64, b ref, fb float64) *node {
	return contrastLeaf(t, at, test, math.Log(fb)-math.Log(fa), nil, term{a, -1}, term{b, 1})
}

// lessLeaf tests a < b at point p.
func lessLeaf(t *Trials, p int, a, b string) *node {
	return ratioLeaf(t, t.at(p), a+" < "+b, ref{a, p}, 1, ref{b, p}, 1)
}

// growthLeaf tests that a grows more than b from p0 to p1:
// θ = ln(a₁/a₀) − ln(b₁/b₀) on the means.
func growthLeaf(t *Trials, at, test string, a, b string, p0, p1 int) *node {
	return contrastLeaf(t, at, test, 0, nil, term{ref{a, p0}, -1}, term{ref{b, p0}, 1}, term{ref{a, p1}, 1}, term{ref{b, p1}, -1})
}

// spreadLeaf tests that a spreads less than b at point p: the trials'
// absolute deviations from their scheme's median (Brown–Forsythe's
// transform, robust to skewed values) have a smaller mean for a,
// θ = ln(mean z_b) − ln(mean z_a), paired by trial.
func spreadLeaf(t *Trials, p int, a, b string) *node {
	return contrastLeaf(t, t.at(p), "spread("+a+") < spread("+b+")", 0, absDevFromMedian, term{ref{a, p}, -1}, term{ref{b, p}, 1})
}
