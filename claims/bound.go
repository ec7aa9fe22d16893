package claims

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Absolute statements ("the error vanishes") are judged against a stated
// level rather than against another curve: the share VanishShare of the
// trials must lie below VanishLevel.
const (
	// VanishLevel is the err2 below which an error counts as vanished: a
	// mean relative error of 0.1% in the second moments, invisible on the
	// paper's log-scale figures beside the Monte Carlo error of exact
	// sampling, and a thousand times the Err2Floor at which err2 is an
	// optimiser's stopping residue.
	VanishLevel = 1e-3
	// VanishShare is the share of trials that must have vanished: the
	// claim is about the curve, not about every last trial. With no trial
	// at or above VanishLevel the test decides from 24 trials on
	// (0.8²⁴ < 0.5%).
	VanishShare = 0.8
)

// quantileBelow tests that scheme s at point p has its q-quantile over
// trials below level: with k of its n trials at or above level, it holds
// when P(Bin(n, 1−q) ≤ k) is small (so few exceedances are unlikely if
// the exceedance probability were 1−q or more) and fails when
// P(Bin(n, 1−q) ≥ k) is. The test is exact and distribution-free, and
// decides even when every trial has the same value, where no interval of
// a mean can. The comparison shows the share of trials at or above level,
// k/n, and its ratio is (1−q)/(k/n) with the Clopper–Pearson interval of
// the exceedance probability at the two-sided Level: above 1 supports the
// claim, +Inf when no trial exceeds.
func quantileBelow(t *Trials, p int, s string, q, level float64) *node {
	t.used[s] = true
	tv := t.vals[s][p]
	n := len(tv)
	k := 0 // trials at or above level
	for _, v := range tv {
		if v.v >= level {
			k++
		}
	}
	c := Comparison{At: t.at(p), Test: fmt.Sprintf("%s: share of trials at or above %g below %.2g", s, level, 1-q),
		Stat: math.NaN(), SE: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), PHold: 1, PFail: 1, N: n}
	l := &leaf{}
	if n < 2 {
		c.Verdict, c.Note, l.fixed = Inconclusive, fmt.Sprintf("n = %d: no test", n), true
		l.cmp = c
		return &node{leaf: l}
	}
	b := distuv.Binomial{N: float64(n), P: 1 - q}
	c.PHold = b.CDF(float64(k))
	c.PFail = binomialUpper(b, k)
	share := float64(k) / float64(n)
	pLo, pHi := clopperPearson(k, n)
	c.Stat = math.Log(1-q) - math.Log(share)
	c.Lo = math.Log(1-q) - math.Log(pHi)
	c.Hi = math.Log(1-q) - math.Log(pLo)
	c.Verdict = Inconclusive
	c.Values = []Estimate{{Scheme: s, XName: t.XName, X: t.x[p], What: fmt.Sprintf("share at or above %g", level), Mean: share, N: n}}
	c.Note = fmt.Sprintf("%d of %d trials at or above %g: exact binomial test against a share of %.2g, p = %.2g",
		k, n, level, 1-q, math.Min(c.PHold, c.PFail))
	l.cmp = c
	return &node{leaf: l}
}

// binomialUpper returns P(X ≥ k) for X ~ b, summed term by term so that a
// tail far below machine precision keeps its value.
func binomialUpper(b distuv.Binomial, k int) float64 {
	var p float64
	for j := int(b.N); j >= k; j-- {
		p += b.Prob(float64(j))
	}
	return math.Min(p, 1)
}

// clopperPearson returns the two-sided Level Clopper–Pearson interval of a
// binomial probability with k successes in n trials.
func clopperPearson(k, n int) (lo, hi float64) {
	lo, hi = 0, 1
	if k > 0 {
		lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(alpha)
	}
	if k < n {
		hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - alpha)
	}
	return lo, hi
}

// vanishesAt tests that scheme s's error has vanished at point p: its
// VanishShare quantile over trials is below VanishLevel.
func vanishesAt(t *Trials, p int, s string) *node {
	return quantileBelow(t, p, s, VanishShare, VanishLevel)
}
