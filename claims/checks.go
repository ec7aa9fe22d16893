package claims

import (
	"fmt"
	"math"
	"strings"
)

// The check builders below turn a claim's shape into a formula of
// comparisons on one metric's trials. Each returns a missing formula,
// naming what is absent, when the schemes or sweep points the claim needs
// are absent.

// bestBeats: at every sweep point, the better of winners is below each of
// others present there, by factor f (f·min(winners) < other). "The better
// of" is a minimum of means, so each (point, other) is an "any" over the
// winners: f·w < other for some winner w — no winner is picked after
// seeing the data.
func bestBeats(t *Trials, winners, others []string, f float64) *node {
	var cs []*node
	for _, at := range bestBeatsAt(t, winners, others, f) {
		cs = append(cs, at...)
	}
	if len(cs) == 0 {
		return missing("no sweep point has both one of %s and one of %s", joinOr(winners), joinOr(others))
	}
	return allNode(cs...)
}

// bestBeatsSome: at some sweep point, the better of winners is below
// each of others present there by factor f ("can outperform"): "any"
// over the points of the formulas bestBeats requires at every point.
func bestBeatsSome(t *Trials, winners, others []string, f float64) *node {
	var cs []*node
	for _, at := range bestBeatsAt(t, winners, others, f) {
		cs = append(cs, allNode(at...))
	}
	if len(cs) == 0 {
		return missing("no sweep point has both one of %s and one of %s", joinOr(winners), joinOr(others))
	}
	return anyNode(cs...)
}

// bestBeatsAt returns, per sweep point with a winner and another scheme,
// the formulas f·w < o for some winner w, one per other scheme o.
func bestBeatsAt(t *Trials, winners, others []string, f float64) [][]*node {
	var out [][]*node
	for _, p := range t.points() {
		ws := t.present(p, winners...)
		if len(ws) == 0 {
			continue
		}
		var cs []*node
		for _, o := range t.present(p, others...) {
			var alts []*node
			for _, w := range ws {
				alts = append(alts, ratioLeaf(t, t.at(p), factorTest(f, w, 1, o), ref{w, p}, f, ref{o, p}, 1))
			}
			cs = append(cs, anyNode(alts...))
		}
		if len(cs) > 0 {
			out = append(out, cs)
		}
	}
	return out
}

// onAverage: for each pair (a, b), a lies below b on average over the
// sweep points with keep(x) where both have values, on the figures' log
// axes: the mean over those points of ln(b̄_p/ā_p) is positive. One
// contrast per pair, paired by trial across the points.
func onAverage(t *Trials, pairs [][2]string, keep func(x float64) bool, where string) *node {
	var cs []*node
	for _, ab := range pairs {
		var ps []int
		for _, p := range t.points(ab[0], ab[1]) {
			if keep(t.x[p]) {
				ps = append(ps, p)
			}
		}
		if len(ps) == 0 {
			continue
		}
		w := 1 / float64(len(ps))
		var terms []term
		for _, p := range ps {
			terms = append(terms, term{ref{ab[0], p}, -w}, term{ref{ab[1], p}, w})
		}
		at := fmt.Sprintf("mean over %d points", len(ps))
		if len(ps) == 1 {
			at = t.at(ps[0])
		}
		cs = append(cs, contrastLeaf(t, at, ab[0]+" < "+ab[1]+" on average (geometric mean of the ratios)", 0, nil, terms...))
	}
	if len(cs) == 0 {
		if where != "" {
			where = " " + where
		}
		return missing("no sweep point%s has the schemes compared (%s)", where, pairList(pairs))
	}
	return allNode(cs...)
}

// vanishesEverywhere: scheme s's error has vanished (vanishesAt) at every
// sweep point where it has values.
func vanishesEverywhere(t *Trials, s string) *node {
	var cs []*node
	for _, p := range t.points(s) {
		cs = append(cs, vanishesAt(t, p, s))
	}
	if len(cs) == 0 {
		return missing("%s has no values", s)
	}
	return allNode(cs...)
}

func pairList(pairs [][2]string) string {
	s := make([]string, len(pairs))
	for i, p := range pairs {
		s[i] = p[0] + " vs " + p[1]
	}
	return strings.Join(s, "; ")
}

func everywhere(float64) bool { return true }

// nearAtTop: at the largest x where a and b both have values, which must
// be ≥ minX, a ≤ f·b and b ≤ f·a (an equivalence test: both must hold).
func nearAtTop(t *Trials, a, b string, minX, f float64) *node {
	ps := t.points(a, b)
	if len(ps) == 0 {
		return missing("no sweep point has both %s and %s", a, b)
	}
	p := ps[len(ps)-1]
	if t.x[p] < minX {
		return missing("the largest %s with both schemes is %g, below %g", t.XName, t.x[p], minX)
	}
	return allNode(
		ratioLeaf(t, t.at(p), factorTest(1, a, f, b), ref{a, p}, 1, ref{b, p}, f),
		ratioLeaf(t, t.at(p), factorTest(1, b, f, a), ref{b, p}, 1, ref{a, p}, f))
}

// flat: for each scheme, its largest mean over the sweep is below f times
// its smallest. Testing the observed largest against the observed
// smallest would pick the pair after seeing the data, so every ordered
// pair of sweep points (p, q) is a comparison, mean(p) < f·mean(q): the
// claim holds when all do (no correction needed), and fails when one does
// after Holm's correction over all of them.
func flat(t *Trials, schemes []string, f float64) *node {
	var cs []*node
	for _, s := range schemes {
		if pairs := flatPairs(t, s, f); len(pairs) > 0 {
			cs = append(cs, pairs...)
		}
	}
	if len(cs) == 0 {
		return missing("none of %s has values at two sweep points", joinOr(schemes))
	}
	return allNode(cs...)
}

// flatOrVanished: for each scheme, either flat (every pair of points
// within factor f) or vanished at every point (vanishesEverywhere): a
// curve at the err2 floor is unaffected by the sweep, but its ratios are
// 1 by construction and decide nothing, so the absolute reading decides
// it.
func flatOrVanished(t *Trials, schemes []string, f float64) *node {
	var cs []*node
	for _, s := range schemes {
		pairs := flatPairs(t, s, f)
		if len(pairs) == 0 {
			continue
		}
		cs = append(cs, anyNode(allNode(pairs...), vanishesEverywhere(t, s)))
	}
	if len(cs) == 0 {
		return missing("none of %s has values at two sweep points", joinOr(schemes))
	}
	return allNode(cs...)
}

// flatPairs returns the comparisons s(p) < f·s(q) for every ordered pair
// of s's sweep points.
func flatPairs(t *Trials, s string, f float64) []*node {
	var cs []*node
	ps := t.points(s)
	if len(ps) < 2 {
		return nil
	}
	for _, p := range ps {
		for _, q := range ps {
			if p == q {
				continue
			}
			cs = append(cs, ratioLeaf(t, t.at(p)+" vs "+t.at(q),
				fmt.Sprintf("%s(%s) < %g×%s(%s)", s, t.at(p), f, s, t.at(q)), ref{s, p}, 1, ref{s, q}, f))
		}
	}
	return cs
}

// endpoints returns the first and last sweep points (by x) of scheme s.
func endpoints(t *Trials, s string) (first, last int, ok bool) {
	ps := t.points(s)
	if len(ps) < 2 {
		return 0, 0, false
	}
	return ps[0], ps[len(ps)-1], true
}

// grows: for each scheme, its mean at its smallest x is below its mean at
// its largest x (the error grows along the sweep).
func grows(t *Trials, schemes []string) *node {
	var cs []*node
	for _, s := range schemes {
		p0, p1, ok := endpoints(t, s)
		if !ok {
			continue
		}
		cs = append(cs, ratioLeaf(t, t.at(p0)+" → "+t.at(p1), fmt.Sprintf("%s(%s) < %s(%s)", s, t.at(p0), s, t.at(p1)),
			ref{s, p0}, 1, ref{s, p1}, 1))
	}
	if len(cs) == 0 {
		return missing("none of %s has values at two sweep points", joinOr(schemes))
	}
	return allNode(cs...)
}

// growsMore: for each pair (fast, slow), the ratio of fast's mean at the
// last point to its mean at the start point exceeds the same ratio of
// slow. start picks the start point among the points where both schemes
// have values (ordered by x); the last is the largest x after it.
func growsMore(t *Trials, pairs [][2]string, start func(t *Trials, ps []int) (int, bool), from string) *node {
	var cs []*node
	for _, pr := range pairs {
		ps := t.points(pr[0], pr[1])
		i, ok := start(t, ps)
		if !ok || i >= len(ps)-1 {
			continue
		}
		p0, p1 := ps[i], ps[len(ps)-1]
		cs = append(cs, growthLeaf(t, t.at(p0)+" → "+t.at(p1), fmt.Sprintf("%s grows more than %s", pr[0], pr[1]), pr[0], pr[1], p0, p1))
	}
	if len(cs) == 0 {
		return missing("no pair (%s) has values at %s and a larger %s", pairList(pairs), from, t.XName)
	}
	return allNode(cs...)
}

// fromFirst starts growsMore at the smallest x.
func fromFirst(_ *Trials, ps []int) (int, bool) { return 0, len(ps) > 0 }

// fromAtLeast starts growsMore at the smallest x ≥ v.
func fromAtLeast(v float64) func(t *Trials, ps []int) (int, bool) {
	return func(t *Trials, ps []int) (int, bool) {
		for i, p := range ps {
			if t.x[p] >= v {
				return i, true
			}
		}
		return 0, false
	}
}

// someWhereEach: for each scheme s, at some sweep point best < s
// (existential over points, universal over schemes): "all" over the
// schemes of "any" over the points.
func someWhereEach(t *Trials, best string, schemes []string) *node {
	var per []*node
	for _, s := range schemes {
		var cs []*node
		for _, p := range t.points(best, s) {
			cs = append(cs, lessLeaf(t, p, best, s))
		}
		if len(cs) == 0 {
			return missing("not every one of %s shares a sweep point with %s", joinOr(schemes), best)
		}
		per = append(per, anyNode(cs...))
	}
	return allNode(per...)
}

// atPoints compares pairs at every point with keep(x): a < b on the means,
// or on the spreads when spread is set.
func atPoints(t *Trials, pairs [][2]string, keep func(x float64) bool, spread bool, where string) *node {
	var cs []*node
	for _, p := range t.points() {
		if !keep(t.x[p]) {
			continue
		}
		for _, ab := range pairs {
			if !t.has(ab[0], p) || !t.has(ab[1], p) {
				continue
			}
			if spread {
				cs = append(cs, spreadLeaf(t, p, ab[0], ab[1]))
			} else {
				cs = append(cs, lessLeaf(t, p, ab[0], ab[1]))
			}
		}
	}
	if len(cs) == 0 {
		if where != "" {
			where = " " + where
		}
		return missing("no sweep point%s has the schemes compared (%s)", where, pairList(pairs))
	}
	return allNode(cs...)
}

// lastPointOnly keeps only the largest x at which all schemes have values.
func lastPointOnly(t *Trials, schemes ...string) func(float64) bool {
	ps := t.points(schemes...)
	if len(ps) == 0 {
		return func(float64) bool { return false }
	}
	last := t.x[ps[len(ps)-1]]
	return func(x float64) bool { return x == last }
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

// levelLeaf tests that scheme s's mean at point p is above level (above
// set) or below it: θ = ln s̄ − ln level, or its negative.
func levelLeaf(t *Trials, p int, s string, level float64, above bool) *node {
	w, op := 1.0, ">"
	if !above {
		w, op = -1, "<"
	}
	return contrastLeaf(t, t.at(p), fmt.Sprintf("%s %s %g", s, op, level), -w*math.Log(level), nil, term{ref{s, p}, w})
}

// levelEverywhere requires, for each of schemes at every sweep point where
// it has values, its mean above lo (unless lo is NaN) and below hi
// (unless hi is NaN): a one-sided bound, or with both an equivalence test
// (both sides must hold).
func levelEverywhere(t *Trials, schemes []string, lo, hi float64) *node {
	var cs []*node
	for _, s := range schemes {
		for _, p := range t.points(s) {
			if !math.IsNaN(lo) {
				cs = append(cs, levelLeaf(t, p, s, lo, true))
			}
			if !math.IsNaN(hi) {
				cs = append(cs, levelLeaf(t, p, s, hi, false))
			}
		}
	}
	if len(cs) == 0 {
		return missing("no sweep point has values of %s", strings.Join(schemes, ", "))
	}
	return allNode(cs...)
}
