package claims

import (
	"fmt"
	"strings"
)

// The check builders below turn a claim's shape into comparisons on one
// metric's table. Each returns NotEvaluated, naming what is missing, when
// the schemes or sweep points the claim needs are absent.

// bestBeats: at every sweep point, the better (lower mean) of winners is
// below each of others present there, by factor f (f·best < other).
// Taking the better winner per point is a selection among two means; it
// only matters when the two are within error of each other.
func bestBeats(t *table, winners, others []string, f float64) Outcome {
	var cs []Comparison
	for _, p := range t.points() {
		best, ok := t.bestOf(p, winners...)
		if !ok {
			continue
		}
		for _, o := range t.present(p, others...) {
			e, _ := t.get(o, p)
			cs = append(cs, scaledLess(t.at(p), factorTest(f, best.Scheme, 1, o), best, f, e, 1))
		}
	}
	if len(cs) == 0 {
		return notEvaluated("no sweep point has both one of %s and one of %s", joinOr(winners), joinOr(others))
	}
	return allOf(cs)
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
func nearAtTop(t *table, a, b string, minX, f float64) Outcome {
	ps := t.points(a, b)
	if len(ps) == 0 {
		return notEvaluated("no sweep point has both %s and %s", a, b)
	}
	p := ps[len(ps)-1]
	if t.x[p] < minX {
		return notEvaluated("the largest %s with both schemes is %g, below %g", t.xname, t.x[p], minX)
	}
	ea, _ := t.get(a, p)
	eb, _ := t.get(b, p)
	return allOf([]Comparison{
		scaledLess(t.at(p), factorTest(1, a, f, b), ea, 1, eb, f),
		scaledLess(t.at(p), factorTest(1, b, f, a), eb, 1, ea, f),
	})
}

// flat: for each scheme, its largest mean over the sweep is below f times
// its smallest (max < f·min).
func flat(t *table, schemes []string, f float64) Outcome {
	var cs []Comparison
	for _, s := range schemes {
		ps := t.points(s)
		if len(ps) < 2 {
			continue
		}
		lo, hi := ps[0], ps[0]
		el, _ := t.get(s, lo)
		eh := el
		for _, p := range ps[1:] {
			e, _ := t.get(s, p)
			if e.Mean < el.Mean {
				lo, el = p, e
			}
			if e.Mean > eh.Mean {
				hi, eh = p, e
			}
		}
		cs = append(cs, scaledLess(t.at(hi)+" vs "+t.at(lo),
			fmt.Sprintf("max %s < %g×min %s", s, f, s), eh, 1, el, f))
	}
	if len(cs) == 0 {
		return notEvaluated("none of %s has values at two sweep points", joinOr(schemes))
	}
	return allOf(cs)
}

// endpoints returns the first and last sweep points (by x) of scheme s.
func endpoints(t *table, s string) (first, last int, ok bool) {
	ps := t.points(s)
	if len(ps) < 2 {
		return 0, 0, false
	}
	return ps[0], ps[len(ps)-1], true
}

// grows: for each scheme, its mean at its smallest x is below its mean at
// its largest x (the error grows along the sweep).
func grows(t *table, schemes []string) Outcome {
	var cs []Comparison
	for _, s := range schemes {
		p0, p1, ok := endpoints(t, s)
		if !ok {
			continue
		}
		a, _ := t.get(s, p0)
		b, _ := t.get(s, p1)
		cs = append(cs, scaledLess(t.at(p0)+" → "+t.at(p1), fmt.Sprintf("%s(%s) < %s(%s)", s, t.at(p0), s, t.at(p1)), a, 1, b, 1))
	}
	if len(cs) == 0 {
		return notEvaluated("none of %s has values at two sweep points", joinOr(schemes))
	}
	return allOf(cs)
}

// growsMore: for each pair (fast, slow), the ratio of fast's mean at the
// last point to its mean at the start point exceeds the same ratio of
// slow. start picks the start point among the points where both schemes
// have values (ordered by x); the last is the largest x after it.
func growsMore(t *table, pairs [][2]string, start func(t *table, ps []int) (int, bool), from string) Outcome {
	var cs []Comparison
	for _, pr := range pairs {
		ps := t.points(pr[0], pr[1])
		i, ok := start(t, ps)
		if !ok || i >= len(ps)-1 {
			continue
		}
		p0, p1 := ps[i], ps[len(ps)-1]
		a0, _ := t.get(pr[0], p0)
		a1, _ := t.get(pr[0], p1)
		b0, _ := t.get(pr[1], p0)
		b1, _ := t.get(pr[1], p1)
		cs = append(cs, growthGreater(t.at(p0)+" → "+t.at(p1),
			fmt.Sprintf("%s grows more than %s", pr[0], pr[1]), a0, a1, b0, b1))
	}
	if len(cs) == 0 {
		return notEvaluated("no pair (%s) has values at %s and a larger %s", pairList(pairs), from, t.xname)
	}
	return allOf(cs)
}

// fromFirst starts growsMore at the smallest x.
func fromFirst(_ *table, ps []int) (int, bool) { return 0, len(ps) > 0 }

// fromAtLeast starts growsMore at the smallest x ≥ v.
func fromAtLeast(v float64) func(t *table, ps []int) (int, bool) {
	return func(t *table, ps []int) (int, bool) {
		for i, p := range ps {
			if t.x[p] >= v {
				return i, true
			}
		}
		return 0, false
	}
}

// someWhereEach: for each scheme s, at some sweep point best < s
// (existential over points, universal over schemes).
func someWhereEach(t *table, best string, schemes []string) Outcome {
	var all []Comparison
	var per []Outcome
	for _, s := range schemes {
		var cs []Comparison
		for _, p := range t.points(best, s) {
			a, _ := t.get(best, p)
			b, _ := t.get(s, p)
			cs = append(cs, less(t.at(p), a, b))
		}
		if len(cs) == 0 {
			continue
		}
		per = append(per, anyOf(cs))
		all = append(all, cs...)
	}
	if len(per) < len(schemes) {
		return notEvaluated("not every one of %s shares a sweep point with %s", joinOr(schemes), best)
	}
	o := Outcome{Comparisons: all, Verdict: Holds, Reason: "each scheme is worse than " + best + " at some sweep point"}
	var open []string // the reasons of the schemes not yet decided
	for i, p := range per {
		switch {
		case p.Verdict == Fails:
			o.Verdict = Fails
			o.Reason = fmt.Sprintf("%s is never significantly worse than %s (it is better at every point)", schemes[i], best)
			return o
		case p.Verdict != Holds:
			open = append(open, fmt.Sprintf("%s: %s", schemes[i], p.Reason))
		}
	}
	if len(open) > 0 {
		o.Verdict, o.Reason = Inconclusive, strings.Join(open, "; ")
	}
	return o
}

// atPoints runs comparisons of pairs at every point with keep(x): less for
// means, or spreadLess when spread is set.
func atPoints(t *table, pairs [][2]string, keep func(x float64) bool, spread bool, where string) Outcome {
	var cs []Comparison
	for _, p := range t.points() {
		if !keep(t.x[p]) {
			continue
		}
		for _, ab := range pairs {
			a, okA := t.get(ab[0], p)
			b, okB := t.get(ab[1], p)
			if !okA || !okB {
				continue
			}
			if spread {
				cs = append(cs, spreadLess(t.at(p), a, b))
			} else {
				cs = append(cs, less(t.at(p), a, b))
			}
		}
	}
	if len(cs) == 0 {
		if where != "" {
			where = " " + where
		}
		return notEvaluated("no sweep point%s has the schemes compared (%s)", where, pairList(pairs))
	}
	return allOf(cs)
}

// lastPointOnly keeps only the largest x at which all schemes have values.
func lastPointOnly(t *table, schemes ...string) func(float64) bool {
	ps := t.points(schemes...)
	if len(ps) == 0 {
		return func(float64) bool { return false }
	}
	last := t.x[ps[len(ps)-1]]
	return func(x float64) bool { return x == last }
}

// merge combines outcomes that must all hold.
func merge(os ...Outcome) Outcome {
	var cs []Comparison
	for _, o := range os {
		if o.Verdict == NotEvaluated && len(o.Comparisons) == 0 {
			return o
		}
		cs = append(cs, o.Comparisons...)
	}
	return allOf(cs)
}
