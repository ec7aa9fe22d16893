package claims

import (
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

// trialsAt returns trials with schemes a and b at one point, trial i
// numbered first+i.
func trialsAt(first int, a, b []float64) *Trials {
	t := &Trials{Metric: "kl", XName: "x", x: map[int]float64{}, vals: map[string]map[int][]trialValue{}, used: map[string]bool{}}
	for i := range a {
		t.add("a", 0, 0, first+i, a[i])
		t.add("b", 0, 0, first+i, b[i])
	}
	t.sortTrials()
	return t
}

// A zero-width interval decides nothing: values in the same ratio in
// every trial, exactly or up to rounding, or every value at the err2
// floor.
func TestZeroWidthNeverDecides(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	a, b := make([]float64, 40), make([]float64, 40)
	for i := range a {
		a[i] = math.Exp(rng.NormFloat64())
		b[i] = 1.3 * a[i] // rounded: se is rounding error, not zero
	}
	tr := trialsAt(0, a, b)
	for _, f := range []struct {
		name string
		f    *node
		want Verdict
	}{
		{"b = 1.3a", lessLeaf(tr, 0, "a", "b"), Inconclusive},
		{"b = 1.3a against the factor 1.25", ratioLeaf(tr, "x", "1.25a < b", ref{"a", 0}, 1.25, ref{"b", 0}, 1), Inconclusive},
		{"all: with a clearly true one", allNode(lessLeaf(tr, 0, "a", "b"), fixedLeaf(1e-9, 1)), Inconclusive},
		{"any: with a clearly false one", anyNode(lessLeaf(tr, 0, "b", "a"), fixedLeaf(1, 1e-9)), Inconclusive},
	} {
		o := evaluate(f.f, "k")
		if o.Verdict != f.want {
			t.Errorf("%s: %v, want %v (%s)", f.name, o.Verdict, f.want, o.Reason)
		}
		if c := o.Comparisons[0]; c.PHold != 1 || c.PFail != 1 || c.Lo != c.Stat || c.Hi != c.Stat || !strings.Contains(c.Note, zeroWidthNote) {
			t.Errorf("%s: %+v", f.name, c)
		}
	}
	// err2 below the floor at two points, through TrialsOf: compared as
	// Err2Floor, the ratio is 1.25 in every trial and nothing is decided.
	res := &runner.Result{Spec: runner.Spec{ID: "floor", X: "x", Metrics: []string{"err2"}}, Trials: 30}
	for p, x := range []float64{1, 2} {
		for tr := range 30 {
			res.Tasks = append(res.Tasks, runner.TaskResult{TaskKey: runner.TaskKey{Point: p, X: x, Trial: tr},
				Rows: []runner.Row{{Scheme: "s", Metric: "err2", Value: math.Pow(10, -8-float64(p+tr%3))}}})
		}
	}
	ft := TrialsOf(res, "err2", scheme.Default)
	o := evaluate(ratioLeaf(ft, "x=1 vs x=2", "s(1) < 1.25×s(2)", ref{"s", 0}, 1, ref{"s", 1}, NearFactor), "k")
	if c := o.Comparisons[0]; o.Verdict != Inconclusive || !strings.Contains(c.Note, "err2 floor") || !strings.Contains(c.Note, zeroWidthNote) {
		t.Errorf("at the err2 floor: %v (%s)", o.Verdict, o.Reason)
	}
}

// outlierTrials returns n paired trials with b = ratio·a·(small noise),
// and trial k of scheme s multiplied by factor.
func outlierTrials(first, n int, ratio float64, s string, k int, factor float64) *Trials {
	rng := rand.New(rand.NewPCG(11, uint64(n)))
	a, b := make([]float64, n), make([]float64, n)
	for i := range a {
		a[i] = math.Exp(0.3 * rng.NormFloat64())
		b[i] = ratio * a[i] * math.Exp(0.05*rng.NormFloat64())
	}
	switch s {
	case "a":
		a[k] *= factor
	case "b":
		b[k] *= factor
	}
	return trialsAt(first, a, b)
}

// A verdict reached only because of one extreme trial is fragile: not
// decided, with a note naming the trial; a verdict that survives leaving
// that trial out stands.
func TestFragile(t *testing.T) {
	const first, k = 100, 7
	for _, c := range []struct {
		name   string
		tr     *Trials
		v      Verdict // with all trials
		want   Verdict
		phrase string
	}{
		{"equal, but one trial of b ×1000", outlierTrials(first, 40, 1, "b", k, 1000), Holds, Inconclusive, "holds only with trial 107"},
		{"equal, but one trial of a ×1000", outlierTrials(first, 40, 1, "a", k, 1000), Fails, Inconclusive, "fails only with trial 107"},
		{"b = 1.2a, and one trial of b ×1000", outlierTrials(first, 40, 1.2, "b", k, 1000), Holds, Holds, ""},
		{"b = 1.2a, and one trial of a ×1000", outlierTrials(first, 40, 1.2, "a", k, 1000), Fails, Inconclusive, "fails only with trial 107"},
	} {
		// With all trials, the bootstrap decides: the re-check is what
		// undoes it.
		l := lessLeaf(c.tr, 0, "a", "b").leaf
		b := l.con.bootstrap(seeded("k", l.cmp.At, l.cmp.Test), Resamples, alpha, alpha, true)
		if p := map[Verdict]float64{Holds: b.pHold, Fails: b.pFail}[c.v]; p > alpha {
			t.Fatalf("%s: with all trials p = %g, not decided %v", c.name, p, c.v)
		}
		o := evaluate(lessLeaf(c.tr, 0, "a", "b"), "k")
		cmp := o.Comparisons[0]
		if o.Verdict != c.want || cmp.Fragile != (c.phrase != "") {
			t.Errorf("%s: %v, fragile %v, want %v (%s)", c.name, o.Verdict, cmp.Fragile, c.want, o.Reason)
		}
		if c.phrase != "" && (!strings.Contains(cmp.Note, c.phrase) || !strings.Contains(o.Reason, "1 of 1 comparisons fragile")) {
			t.Errorf("%s: note %q, reason %q; want %q", c.name, cmp.Note, o.Reason, c.phrase)
		}
		// The interval is that of all trials; the verdict's p-value is the
		// larger of the two.
		if cmp.Stat != b.stat || cmp.Lo != b.lo || cmp.PHold < b.pHold || cmp.PFail < b.pFail {
			t.Errorf("%s: comparison %+v, bootstrap of all trials %+v", c.name, cmp, b)
		}
	}
	// In formulas: "all" waits for the fragile comparison, at the effect
	// seen without its decisive trial (here none: it is inconclusive with
	// no trials to decide); "any" holds by its other comparison.
	frag := func() *node { return lessLeaf(outlierTrials(0, 40, 1, "b", k, 1000), 0, "a", "b") }
	sure := func() *node { return lessLeaf(outlierTrials(0, 40, 2, "", 0, 1), 0, "a", "b") }
	if o := evaluate(allNode(frag(), sure()), "k"); o.Verdict != Inconclusive || o.Deciding != 0 || !strings.Contains(o.Reason, "1 of 2 comparisons fragile") {
		t.Errorf("all(fragile, clear): %v, deciding %d (%s)", o.Verdict, o.Deciding, o.Reason)
	}
	if o := evaluate(anyNode(frag(), sure()), "k"); o.Verdict != Holds || o.Comparisons[1].Verdict != Holds || !o.Comparisons[0].Fragile {
		t.Errorf("any(fragile, clear): %v (%s)", o.Verdict, o.Reason)
	}
}

// A fragile comparison is not decided: one trial of b ×1000 would decide
// b = 1.02a with noise at 40 trials, and without it nothing does.
func TestFragileNotDecided(t *testing.T) {
	tr := outlierTrials(0, 40, 1.02, "b", 3, 1000)
	o := evaluate(lessLeaf(tr, 0, "a", "b"), "k")
	if c := o.Comparisons[0]; !c.Fragile || o.Verdict != Inconclusive || !strings.Contains(c.Note, "trial 3") {
		t.Fatalf("%v (%s)", o.Verdict, o.Reason)
	}
}

// The leave-one-out estimates are exact: the unit picked moves θ̂ furthest,
// and its θ̂₋ is that of the contrast without it, for unpaired samples of
// several columns and for a transformed (spread) contrast.
func TestLeaveOneOut(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	col := func(n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = math.Exp(rng.NormFloat64())
		}
		return out
	}
	theta := func(c contrast) float64 {
		a, _ := newWork(c.sample).eval()
		return c.offset + a
	}
	trials := func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = 10 + i
		}
		return out
	}
	growth := contrast{offset: 0.1, sample: sample{
		cols: [][]float64{col(30), col(30), col(30), col(30)}, w: []float64{-1, 1, 1, -1}, trials: trials(30)}}
	rawA, rawB := col(41), col(41)
	spread := contrast{transform: absDevFromMedian, sample: sample{
		cols: [][]float64{absDevFromMedian(rawA), absDevFromMedian(rawB)}, raw: [][]float64{rawA, rawB}, w: []float64{-1, 1}, trials: trials(41)}}
	for _, c := range []struct {
		name string
		con  contrast
	}{{"growth", growth}, {"spread", spread}} {
		for _, down := range []bool{true, false} {
			i, got := c.con.leaveOneOut(down)
			best := math.NaN()
			for ii := range c.con.sample.trials {
				th := theta(c.con.without(ii))
				if c.con.transform == nil && ii == i && math.Abs(th-got) > 1e-12 {
					t.Errorf("%s: θ̂₋ = %g, without the unit %g", c.name, got, th)
				}
				if math.IsNaN(best) || down && th < best || !down && th > best {
					best = th
				}
			}
			w := c.con.without(i)
			if c.con.transform == nil && math.Abs(got-best) > 1e-12 {
				t.Errorf("%s, down %v: picked θ̂₋ = %g, furthest %g", c.name, down, got, best)
			}
			if c.con.transform != nil {
				// The transform is applied anew: the deviations from the
				// median of the remaining values.
				raw := slices.Delete(slices.Clone(rawA), i, i+1)
				if !slices.Equal(w.sample.cols[0], absDevFromMedian(raw)) {
					t.Errorf("spread: the deviations are not recomputed without the unit")
				}
				// Picked on the fixed deviations, it is the furthest or
				// close to it.
				if math.Abs(theta(w)-best) > 0.05 {
					t.Errorf("spread, down %v: θ̂₋ = %g, furthest %g", down, theta(w), best)
				}
			}
			if len(w.sample.trials) != len(c.con.sample.trials)-1 || slices.Contains(w.sample.trials, c.con.sample.trials[i]) {
				t.Errorf("%s: trial %d not left out", c.name, c.con.sample.trials[i])
			}
		}
	}
}

// Outcomes with re-checks are the same on one core and on several.
func TestRecheckDeterministic(t *testing.T) {
	f := func() *node {
		return allNode(
			lessLeaf(outlierTrials(0, 40, 1, "b", 7, 1000), 0, "a", "b"),
			lessLeaf(outlierTrials(0, 30, 2, "b", 3, 1000), 0, "a", "b"),
			anyNode(lessLeaf(outlierTrials(0, 50, 1.3, "a", 5, 100), 0, "a", "b"), lessLeaf(outlierTrials(0, 20, 0.5, "", 0, 1), 0, "a", "b")),
		)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	one := evaluate(f(), "k")
	runtime.GOMAXPROCS(4)
	four := evaluate(f(), "k")
	if !reflect.DeepEqual(one, four) {
		t.Errorf("1 core: %+v\n4 cores: %+v", one, four)
	}
	if !slices.ContainsFunc(one.Comparisons, func(c Comparison) bool { return c.Fragile }) {
		t.Errorf("no fragile comparison to test with: %s", one.Reason)
	}
}
