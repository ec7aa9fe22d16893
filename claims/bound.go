package claims

import (
	"fmt"
	"math"
	"slices"

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
// a mean can. The comparison's ratio is level/q̂ with q̂ the sample
// quantile, and its interval level/x₍ᵤ₎ … level/x₍ₗ₎ from the order
// statistics that bound the quantile at the two-sided Level.
func quantileBelow(t *Trials, p int, s string, q, level float64) *node {
	t.used[s] = true
	tv := t.vals[s][p]
	x := make([]float64, len(tv))
	for i, v := range tv {
		x[i] = v.v
	}
	slices.Sort(x)
	n := len(x)
	c := Comparison{At: t.at(p), Test: fmt.Sprintf("%s: %g%% of trials below %g", s, 100*q, level),
		Stat: math.NaN(), SE: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), PHold: 1, PFail: 1, N: n, Paired: true}
	l := &leaf{}
	switch {
	case n < 2:
		c.Verdict, c.Note, l.fixed = Inconclusive, fmt.Sprintf("n = %d: no test", n), true
	case x[0] <= 0:
		c.Verdict, c.Note, l.fixed = NotEvaluated, fmt.Sprintf("a value of %s at %s is not positive", s, t.at(p)), true
	default:
		k := n - sortSearch(x, level) // trials at or above level
		b := distuv.Binomial{N: float64(n), P: 1 - q}
		c.PHold = b.CDF(float64(k))
		if k > 0 {
			c.PFail = 1 - b.CDF(float64(k-1))
		}
		lo, hi := quantileBounds(n, q)
		qhat := x[max(0, int(math.Ceil(q*float64(n)))-1)]
		c.Stat = math.Log(level) - math.Log(qhat)
		c.Lo = math.Log(level) - math.Log(x[hi])
		c.Hi = math.Log(level) - math.Log(x[lo])
		c.Verdict = Inconclusive
		c.Values = []Estimate{{Scheme: s, XName: t.XName, X: t.x[p], What: fmt.Sprintf("%g%% quantile", 100*q), Mean: qhat, N: n}}
		p := c.PHold
		if c.PFail < p {
			p = c.PFail
		}
		c.Note = fmt.Sprintf("%d of %d trials at or above %g: exact binomial test against a share of %g, p = %.2g (the interval is that of the %g%% quantile, err2 compared as at least %g)",
			k, n, level, 1-q, p, 100*q, Err2Floor)
	}
	l.cmp = c
	return &node{leaf: l}
}

// sortSearch returns the number of values of the sorted x below v.
func sortSearch(x []float64, v float64) int {
	i, _ := slices.BinarySearch(x, v)
	return i
}

// quantileBounds returns the indices (0-based) of the order statistics
// that bound the q-quantile of n values with two-sided confidence at least
// Level: lo the largest index with P(Bin(n, q) ≤ lo) ≤ α, hi the smallest
// with P(Bin(n, q) ≤ hi) ≥ 1 − α, clamped to the sample.
func quantileBounds(n int, q float64) (lo, hi int) {
	b := distuv.Binomial{N: float64(n), P: q}
	lo, hi = 0, n-1
	for j := n - 1; j >= 0; j-- {
		if b.CDF(float64(j)) <= alpha {
			lo = j
			break
		}
	}
	for j := 0; j < n; j++ {
		if b.CDF(float64(j)) >= 1-alpha {
			hi = j
			break
		}
	}
	return lo, hi
}

// vanishesAt tests that scheme s's error has vanished at point p: its
// VanishShare quantile over trials is below VanishLevel.
func vanishesAt(t *Trials, p int, s string) *node {
	return quantileBelow(t, p, s, VanishShare, VanishLevel)
}
