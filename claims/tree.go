package claims

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// A claim is a logical formula over comparisons: an "all" node holds when
// every child holds, an "any" node when some child does. Each comparison
// tests one contrast θ in both directions, holds (θ > 0) and fails
// (θ < 0), with one-sided bootstrap p-values. Error control follows the
// formula:
//
//   - "all" holds by the intersection-union test: every child must hold
//     at the node's level, no correction (its p-value is the largest of
//     the children's). It fails when some child fails: Holm's step-down
//     over the children's fail p-values (its p-value is m times the
//     smallest, Holm's first step).
//   - "any" is the mirror image: holds by Holm over the children, fails by
//     the intersection-union test.
//
// The root decides at α = (1 − Level)/2 in each direction, so a claim at
// its boundary is spuriously held, or spuriously failed, with probability
// at most α each (as far as the comparisons' p-values are valid), however
// many comparisons it is made of. A comparison decided is then re-checked
// without the trial that weakens it most (leaf.recheck): its p-value
// becomes the larger of the two, and the formula is decided again on
// those p-values, so that no verdict rests on one trial.
type node struct {
	all      bool
	children []*node
	leaf     *leaf
	why      string // set: the formula cannot be evaluated, and why

	pHold, pFail float64 // after evaluation
	tauH, tauF   float64 // the smallest thresholds the node can be compared with
}

// leaf is one comparison: its contrast, or a verdict fixed without one.
type leaf struct {
	cmp   Comparison
	con   *contrast
	fixed bool // cmp carries its final verdict (not evaluated, too few trials)
	// minTrials is the fewest trials at which the comparison decides.
	minTrials int
	// thH, thF are the thresholds assign last gave the leaf.
	thH, thF float64
	// loo is the re-check of a verdict reached with all trials, if any.
	loo *looCheck
}

// allNode is the formula that every child holds.
func allNode(children ...*node) *node { return &node{all: true, children: children} }

// anyNode is the formula that some child holds.
func anyNode(children ...*node) *node { return &node{children: children} }

// missing returns a formula that cannot be evaluated, with the reason.
func missing(format string, args ...any) *node {
	return &node{why: fmt.Sprintf(format, args...)}
}

// merge returns the formula that all of fs hold (missing if one is), with
// the children of "all" formulas taken in directly, so that one Holm
// correction covers them all.
func merge(fs ...*node) *node {
	var cs []*node
	for _, f := range fs {
		switch {
		case f.why != "":
			return f
		case f.all && f.leaf == nil:
			cs = append(cs, f.children...)
		default:
			cs = append(cs, f)
		}
	}
	return allNode(cs...)
}

// leaves returns the leaves of n in order.
func (n *node) leaves() []*node {
	if n.leaf != nil {
		return []*node{n}
	}
	var out []*node
	for _, c := range n.children {
		out = append(out, c.leaves()...)
	}
	return out
}

// thresholds sets the smallest thresholds every node can be compared
// with: Holm divides a node's threshold by its number of children.
func (n *node) thresholds(tauH, tauF float64) {
	n.tauH, n.tauF = tauH, tauF
	m := float64(len(n.children))
	for _, c := range n.children {
		if n.all {
			c.thresholds(tauH, tauF/m)
		} else {
			c.thresholds(tauH/m, tauF)
		}
	}
}

// combine computes the p-values of inner nodes from their children's.
func (n *node) combine() {
	if n.leaf != nil {
		n.pHold, n.pFail = n.leaf.cmp.PHold, n.leaf.cmp.PFail
		return
	}
	if len(n.children) == 0 {
		n.pHold, n.pFail = 1, 1
		return
	}
	m := float64(len(n.children))
	maxH, maxF, minH, minF := 0.0, 0.0, 1.0, 1.0
	for _, c := range n.children {
		c.combine()
		maxH, maxF = math.Max(maxH, c.pHold), math.Max(maxF, c.pFail)
		minH, minF = math.Min(minH, c.pHold), math.Min(minF, c.pFail)
	}
	if n.all {
		n.pHold, n.pFail = maxH, math.Min(1, m*minF)
	} else {
		n.pHold, n.pFail = math.Min(1, m*minH), maxF
	}
}

// holm returns the thresholds Holm's step-down procedure at level t gives
// to p-values ps: t/(m − j) for the j-th smallest (0-based) as long as
// each so far is rejected, 0 (never rejected) from the first that is not.
func holm(ps []float64, t float64) []float64 {
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case ps[a] < ps[b]:
			return -1
		case ps[a] > ps[b]:
			return 1
		}
		return 0
	})
	out := make([]float64, len(ps))
	m := len(ps)
	for j, i := range order {
		th := t / float64(m-j)
		if ps[i] > th {
			break
		}
		out[i] = th
	}
	return out
}

// assign gives every leaf its verdict from the thresholds the formula
// hands down from the root's (thH, thF).
func (n *node) assign(thH, thF float64) {
	if n.leaf != nil {
		l := n.leaf
		c := &l.cmp
		if l.fixed {
			return
		}
		l.thH, l.thF = thH, thF
		switch {
		case c.PHold <= thH:
			c.Verdict = Holds
		case c.PFail <= thF:
			c.Verdict = Fails
		default:
			c.Verdict = Inconclusive
			switch {
			case l.loo.fragile():
				if !c.Fragile {
					c.Fragile = true
					c.Note = joinNotes(c.Note, l.loo.note())
				}
			case c.Note == "" && (c.PHold <= alpha || c.PFail <= alpha):
				c.Note = holmNote
			}
		}
		return
	}
	ph := make([]float64, len(n.children))
	pf := make([]float64, len(n.children))
	for i, c := range n.children {
		ph[i], pf[i] = c.pHold, c.pFail
	}
	var hs, fs []float64
	if n.all {
		hs, fs = fill(len(ph), thH), holm(pf, thF)
	} else {
		hs, fs = holm(ph, thH), fill(len(pf), thF)
	}
	for i, c := range n.children {
		c.assign(hs[i], fs[i])
	}
}

// holmNote is the note of a comparison decided on its own but not after
// the Holm correction.
const holmNote = "its interval excludes equality on its own, but not after the Holm correction across the claim's comparisons"

func fill(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// deciding returns the leaf that decides verdict v of n: for a verdict
// reached, the closest call among the children that reach it under "all"
// holds / "any" fails, the strongest under "all" fails / "any" holds.
// Closeness is by p-value, then (p-values at the bootstrap's floor tie) by
// the studentised estimate.
func (n *node) deciding(v Verdict) *node {
	if n.leaf != nil {
		return n
	}
	weakest := v == Holds && n.all || v == Fails && !n.all
	best := n.children[0]
	for _, c := range n.children[1:] {
		pc, pb := p(c, v), p(best, v)
		sc, sb := c.strength(v), best.strength(v)
		if weakest && (pc > pb || pc == pb && sc < sb) || !weakest && (pc < pb || pc == pb && sc > sb) {
			best = c
		}
	}
	return best.deciding(v)
}

func p(n *node, v Verdict) float64 {
	if v == Holds {
		return n.pHold
	}
	return n.pFail
}

// strength is how far n is from the boundary in the direction of v, in
// standard errors: ±θ̂/se for a leaf, the weakest child's under "all"
// for holds (the strongest for fails), the mirror image under "any".
func (n *node) strength(v Verdict) float64 {
	if n.leaf != nil {
		c := n.leaf.cmp
		z := c.Stat / c.SE
		if math.IsNaN(z) {
			z = math.Copysign(math.Inf(1), c.Stat)
			if math.IsNaN(c.Stat) {
				z = math.Inf(-1)
			}
		}
		if v == Fails {
			z = -z
		}
		return z
	}
	weakest := v == Holds && n.all || v == Fails && !n.all
	out := n.children[0].strength(v)
	for _, c := range n.children[1:] {
		if s := c.strength(v); weakest == (s < out) {
			out = s
		}
	}
	return out
}

// toDecide picks the comparison an inconclusive claim waits for, by a
// normal-theory extrapolation from the leaves' estimates and standard
// errors of how n would be decided with more trials and at how many trials
// per point (an ordering only: reruns at that many trials decide far less
// often than the extrapolation suggests, so the number is not reported):
// a leaf goes the way of its estimate and needs trialsToDecide (its
// current n if already decided); "all" fails with its quickest failing
// child and otherwise holds with its slowest holding one, "any" the mirror
// image. Inconclusive with 0 trials means unknown (a zero estimate, no
// spread estimate, a comparison that cannot be evaluated). at is the leaf
// the prediction rests on.
func (n *node) toDecide() (v Verdict, trials int, at *node) {
	if n.leaf != nil {
		c := n.leaf.cmp
		nc, stat, se := c.N, c.Stat, c.SE
		if l := n.leaf.loo; c.Fragile && !l.degenerate {
			// At the effect seen without the trial that alone decided it.
			nc, stat, se = c.N-1, l.stat, l.se
		}
		switch {
		case c.Verdict == Holds || c.Verdict == Fails:
			return c.Verdict, c.N, n
		case c.Verdict == NotEvaluated || nc < 2 || stat == 0 || math.IsNaN(stat) || math.IsInf(stat, 0) || c.Fragile && n.leaf.loo.degenerate:
			return Inconclusive, 0, n
		}
		v, tau := Holds, n.tauH
		if stat < 0 {
			v, tau = Fails, n.tauF
		}
		t := trialsToDecide(nc, stat, se, tau)
		if t == 0 {
			return Inconclusive, 0, n
		}
		return v, max(t, c.N+1, n.leaf.minTrials), n
	}
	quick, slow := Fails, Holds // "all" fails with its quickest failing child
	if !n.all {
		quick, slow = Holds, Fails
	}
	var q, s, unknown *node
	nq, ns := 0, 0
	for _, c := range n.children {
		cv, ct, leaf := c.toDecide()
		switch {
		case cv == quick:
			if q == nil || ct < nq {
				q, nq = leaf, ct
			}
		case cv == slow:
			if s == nil || ct > ns {
				s, ns = leaf, ct
			}
		case unknown == nil:
			unknown = leaf
		}
	}
	switch {
	case q != nil:
		return quick, nq, q
	case unknown != nil:
		return Inconclusive, 0, unknown
	}
	return slow, ns, s
}

// evaluate runs the comparisons of the formula rooted at n, seeding each
// bootstrap from key and the comparison, and returns the claim's outcome.
func evaluate(n *node, key string) Outcome { return evaluateWith(n, key, Resamples) }

// evaluateWith is evaluate with another number of resamples (the
// calibration test uses fewer).
func evaluateWith(n *node, key string, resamples int) Outcome {
	if n.why != "" {
		return notEvaluated("%s", n.why)
	}
	leaves := n.leaves()
	if len(leaves) == 0 {
		return notEvaluated("nothing to compare")
	}
	n.thresholds(alpha, alpha)
	parallel(leaves, func(l *node) { l.leaf.run(key, resamples, l.tauH, l.tauF) })
	n.combine()
	n.assign(alpha, alpha)
	// Every comparison decided is re-checked without its most influential
	// trial; its p-value becomes the larger of the two, and the formula is
	// decided anew. Raising p-values only removes rejections (Holm's
	// step-down and the intersection-union test are monotone), so the
	// comparisons undecided now need no re-check.
	var decided []*node
	for _, l := range leaves {
		if v := l.leaf.cmp.Verdict; !l.leaf.fixed && l.leaf.con != nil && (v == Holds || v == Fails) {
			decided = append(decided, l)
		}
	}
	if len(decided) > 0 {
		parallel(decided, func(l *node) {
			v, tau := l.leaf.cmp.Verdict, l.leaf.thH
			if v == Fails {
				tau = l.leaf.thF
			}
			l.leaf.recheck(l, key, resamples, v, tau)
		})
		n.combine()
		n.assign(alpha, alpha)
	}
	o := Outcome{Deciding: -1}
	for _, l := range leaves {
		o.Comparisons = append(o.Comparisons, l.leaf.cmp)
	}
	idx := func(d *node) int { return slices.Index(leaves, d) }
	switch {
	case !slices.ContainsFunc(leaves, func(l *node) bool { return l.leaf.cmp.Verdict != NotEvaluated }):
		o.Verdict = NotEvaluated
		o.Reason = "no comparison could be evaluated: " + leaves[0].leaf.cmp.Note
		return o
	case n.pHold <= alpha:
		o.Verdict, o.Deciding = Holds, idx(n.deciding(Holds))
	case n.pFail <= alpha:
		o.Verdict, o.Deciding = Fails, idx(n.deciding(Fails))
	default:
		o.Verdict = Inconclusive
		_, _, d := n.toDecide()
		o.Deciding = idx(d)
	}
	o.Reason = reason(o)
	return o
}

// parallel runs f on every node. Each leaf has its own seeded generator,
// so running them in parallel gives the same outcome on any number of
// cores.
func parallel(nodes []*node, f func(*node)) {
	var wg sync.WaitGroup
	next := make(chan *node)
	for range min(runtime.GOMAXPROCS(0), len(nodes)) {
		wg.Go(func() {
			for l := range next {
				f(l)
			}
		})
	}
	for _, l := range nodes {
		next <- l
	}
	close(next)
	wg.Wait()
}

// fragileKey counts fragile comparisons in reason.
const fragileKey Verdict = -1

// reason states the verdict in one line: how many comparisons hold, fail
// or stay undecided (and how many of these are fragile), and the deciding
// comparison.
func reason(o Outcome) string {
	count := map[Verdict]int{}
	for _, c := range o.Comparisons {
		count[c.Verdict]++
		if c.Fragile {
			count[fragileKey]++
		}
	}
	m := len(o.Comparisons)
	d := o.Comparisons[o.Deciding]
	var s string
	switch {
	case m == 1:
		s = o.Verdict.String() + " " + d.Brief()
	case o.Verdict == Holds:
		s = fmt.Sprintf("%d of %d comparisons hold; deciding %s", count[Holds], m, d.Brief())
	case o.Verdict == Fails:
		s = fmt.Sprintf("%d of %d comparisons fail (Holm-corrected); deciding %s", count[Fails], m, d.Brief())
	default:
		parts := []string{fmt.Sprintf("%d of %d comparisons hold", count[Holds], m)}
		if count[Fails] > 0 {
			parts = append(parts, fmt.Sprintf("%d fail", count[Fails]))
		}
		parts = append(parts, fmt.Sprintf("%d undecided", count[Inconclusive]+count[NotEvaluated]))
		s = fmt.Sprintf("%s; deciding %s", strings.Join(parts, ", "), d.Brief())
	}
	if f := count[fragileKey]; f > 0 {
		s += fmt.Sprintf("; %d of %d comparisons fragile (decided with all trials, not without the most influential one)", f, m)
	}
	return s
}
