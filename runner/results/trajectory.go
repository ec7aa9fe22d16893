package results

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/wcmc-project/wcmc/figure"
	"github.com/wcmc-project/wcmc/runner"
)

// A trajectory figure (Spec.Trajectory) draws, per scheme, the median of
// the trials at each checkpoint with the band between their 5% and 95%
// quantiles, the paper's 90% intervals (Figs. 4 and 9): a few diverging
// trials make a mean, and its confidence interval, meaningless. On a log
// axis, values above a ceiling are drawn at it (see ceilingOf), so that
// diverged trials stay visible without stretching the axis over decades
// that hold no other curve.

// CeilingDecades is how far above the highest 95% quantile of the curves
// that do not diverge a trajectory figure's ceiling lies, in decades.
const CeilingDecades = 3

// trialValue is one trial's value at one checkpoint.
type trialValue struct {
	v     float64
	trial int
}

// curve is one scheme's trials along a trajectory, checkpoint by
// checkpoint (sweep order).
type curve struct {
	scheme        string
	x             []float64
	med, q05, q95 []float64
	vals          [][]trialValue
}

// quantiles returns the empirical median, 5% and 95% quantiles of vs
// (Summarize's rule); NaN when a value is NaN.
func quantiles(vs []trialValue) (med, q05, q95 float64) {
	sorted := make([]float64, len(vs))
	for i, tv := range vs {
		if math.IsNaN(tv.v) {
			return math.NaN(), math.NaN(), math.NaN()
		}
		sorted[i] = tv.v
	}
	sort.Float64s(sorted)
	q := func(p float64) float64 { return stat.Quantile(p, stat.Empirical, sorted, nil) }
	return q(0.5), q(0.05), q(0.95)
}

// curves returns the trials of metric of the schemes figure f shows, in
// Spec.Schemes order; schemes without values are left out.
func curves(res *runner.Result, f Figure) []curve {
	type key struct {
		scheme string
		point  int
	}
	vals := map[key][]trialValue{}
	for _, t := range res.Tasks {
		for _, r := range t.Rows {
			if r.Metric == f.Metric {
				k := key{r.Scheme, t.Point}
				vals[k] = append(vals[k], trialValue{r.Value, t.Trial})
			}
		}
	}
	var out []curve
	for _, s := range res.Spec.Schemes {
		if !f.shows(s) {
			continue
		}
		c := curve{scheme: s}
		for pi, x := range res.Values.XList() {
			vs := vals[key{s, pi}]
			if len(vs) == 0 {
				continue
			}
			med, q05, q95 := quantiles(vs)
			c.x = append(c.x, x)
			c.med, c.q05, c.q95 = append(c.med, med), append(c.q05, q05), append(c.q95, q95)
			c.vals = append(c.vals, vs)
		}
		if len(c.x) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// top is the highest 95% quantile of c (NaN quantiles ignored; −Inf
// when it has none).
func (c curve) top() float64 {
	t := math.Inf(-1)
	for _, q := range c.q95 {
		if !math.IsNaN(q) {
			t = math.Max(t, q)
		}
	}
	return t
}

// ceiling is the cap of a trajectory figure's y axis.
type ceiling struct {
	value     float64 // 0: none
	decade    int     // value = 10^decade
	reference float64 // the highest 95% quantile of the curves that do not diverge
	diverging []string
}

// ceilingOf returns the ceiling of cs: the first decade at least
// CeilingDecades above the highest 95% quantile of the curves that do not
// diverge. A curve diverges when its highest 95% quantile is infinite or
// more than CeilingDecades above that of the median curve (the lower
// median over the curves with a finite positive one). None when no curve
// has a finite positive 95% quantile.
func ceilingOf(cs []curve) ceiling {
	var tops []float64
	for _, c := range cs {
		if t := c.top(); t > 0 && !math.IsInf(t, 1) {
			tops = append(tops, t)
		}
	}
	if len(tops) == 0 {
		return ceiling{}
	}
	sorted := slices.Sorted(slices.Values(tops))
	limit := sorted[(len(sorted)-1)/2] * math.Pow10(CeilingDecades)
	var ce ceiling
	for _, c := range cs {
		switch t := c.top(); {
		case t > limit:
			ce.diverging = append(ce.diverging, c.scheme)
		case t > ce.reference:
			ce.reference = t
		}
	}
	ce.decade = int(math.Ceil(math.Log10(ce.reference)-1e-9)) + CeilingDecades
	ce.value = math.Pow10(ce.decade)
	return ce
}

// clipped returns, for each checkpoint of c, whether a trial lies above
// limit there, and the number of trials above it at some checkpoint out
// of the trials of c.
func (c curve) clipped(limit float64) (at []bool, trials, of int) {
	above, all := map[int]bool{}, map[int]bool{}
	at = make([]bool, len(c.x))
	for i, vs := range c.vals {
		for _, tv := range vs {
			all[tv.trial] = true
			if tv.v > limit {
				above[tv.trial] = true
				at[i] = true
			}
		}
	}
	return at, len(above), len(all)
}

// trajectorySeries sets the series of ch, a figure of a trajectory
// experiment, from the trials of res (see the comment at the top of this
// file) and returns the caption's sentences on the lines, bands and
// ceiling.
func trajectorySeries(ch *figure.Chart, res *runner.Result, f Figure) string {
	cs := curves(res, f)
	var ce ceiling
	if ch.LogY {
		ce = ceilingOf(cs)
	}
	var counts []string
	minN, maxN := math.MaxInt, 0
	for _, c := range cs {
		s := figure.Series{Name: SchemeLabel(c.scheme), Style: styleOf(c.scheme), X: c.x, Mean: c.med, Lo: c.q05, Hi: c.q95}
		for _, vs := range c.vals {
			minN, maxN = min(minN, len(vs)), max(maxN, len(vs))
		}
		if ce.value > 0 {
			at, n, of := c.clipped(ce.value)
			if n > 0 {
				s.Clipped = at
				counts = append(counts, fmt.Sprintf("%s %d of %d", s.Name, n, of))
			}
		}
		ch.Series = append(ch.Series, s)
	}
	if maxN == 0 {
		return ""
	}
	n := fmt.Sprint(minN)
	if maxN != minN {
		n = fmt.Sprintf("%d–%d", minN, maxN)
	}
	out := fmt.Sprintf("Lines: median of the %s trials at each checkpoint; bands: their 5–95%% range (a 90%% interval).", n)
	if len(counts) == 0 {
		return out // nothing above the ceiling: the axis holds every value
	}
	ch.Ceiling = ce.value
	lim := fmt.Sprintf("1e%d", ce.decade)
	ch.CeilingLabel = "trials above " + lim
	of := "the curves"
	if len(ce.diverging) > 0 {
		names := make([]string, len(ce.diverging))
		for i, s := range ce.diverging {
			names[i] = SchemeLabel(s)
		}
		of += " other than " + strings.Join(names, ", ")
	}
	others := ""
	if len(counts) < len(cs) {
		others = ", none of the other curves"
	}
	return out + fmt.Sprintf(" Values above %s (the first power of ten at least %d decades above %.3g, the highest 95%% quantile of %s) are drawn at %s (↑, dashed line); trials with a value above it: %s%s.",
		lim, CeilingDecades, ce.reference, of, lim, strings.Join(counts, ", "), others)
}
