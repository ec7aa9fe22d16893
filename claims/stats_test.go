package claims

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// trialsOf2 returns trials with schemes a and b at one point (x = 0), the
// values given per trial.
func trialsOf2(a, b []float64) *Trials {
	t := &Trials{Metric: "err2", XName: "x", x: map[int]float64{}, vals: map[string]map[int][]trialValue{}, used: map[string]bool{}}
	for i := range a {
		t.add("a", 0, 0, i, a[i])
	}
	for i := range b {
		t.add("b", 0, 0, i, b[i])
	}
	t.sortTrials()
	return t
}

func TestHolm(t *testing.T) {
	// m = 4 at level 0.04: thresholds 0.01, 0.0133, 0.02, 0.04 in order of
	// the p-values; the step-down stops at the first p above its own.
	got := holm([]float64{0.03, 0.005, 0.012, 0.5}, 0.04)
	want := []float64{0, 0.01, 0.04 / 3, 0}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-15 {
			t.Errorf("holm thresholds %v, want %v", got, want)
			break
		}
	}
	if got := holm([]float64{0.001, 0.001}, 0.01); got[0] != 0.005 || got[1] != 0.01 {
		t.Errorf("two rejections: %v", got)
	}
}

// fixedLeaf returns a leaf with given p-values and estimate.
func fixedLeaf(pHold, pFail float64) *node {
	return &node{leaf: &leaf{cmp: Comparison{At: "x", Test: "t", PHold: pHold, PFail: pFail, Stat: 0.1, SE: 0.1, N: 40, Verdict: Inconclusive}, minTrials: MinTrials}}
}

func TestFormulaVerdicts(t *testing.T) {
	const (
		strong = 1e-6  // rejected even after dividing α by dozens
		weak   = 0.004 // below α = 0.005, but not after Holm over 2
		none   = 0.5   // nothing
		sure   = 1 - 1e-6
	)
	for _, c := range []struct {
		name string
		f    *node
		want Verdict
	}{
		{"all hold (IUT, no correction)", allNode(fixedLeaf(weak, 1), fixedLeaf(weak, 1)), Holds},
		{"all: one undecided", allNode(fixedLeaf(strong, 1), fixedLeaf(none, none)), Inconclusive},
		{"all: one fails strongly", allNode(fixedLeaf(strong, 1), fixedLeaf(sure, strong)), Fails},
		{"all: one fails weakly, Holm over 2", allNode(fixedLeaf(strong, 1), fixedLeaf(1, weak)), Inconclusive},
		{"any: one holds strongly", anyNode(fixedLeaf(strong, 1), fixedLeaf(none, none)), Holds},
		{"any: one holds weakly, Holm over 2", anyNode(fixedLeaf(weak, 1), fixedLeaf(none, none)), Inconclusive},
		{"any: all fail (IUT)", anyNode(fixedLeaf(1, weak), fixedLeaf(1, weak)), Fails},
		{"all of any: each scheme somewhere", allNode(anyNode(fixedLeaf(strong, 1), fixedLeaf(none, none)),
			anyNode(fixedLeaf(none, none), fixedLeaf(strong, 1))), Holds},
		{"all of any: one scheme fails everywhere (Holm over schemes)", allNode(anyNode(fixedLeaf(strong, 1)),
			anyNode(fixedLeaf(1, 0.002), fixedLeaf(1, 0.001))), Fails},
		{"all of any: fails weakly, not after Holm over 2 schemes", allNode(anyNode(fixedLeaf(strong, 1)),
			anyNode(fixedLeaf(1, weak), fixedLeaf(1, weak))), Inconclusive},
	} {
		o := evaluate(c.f, "test")
		if o.Verdict != c.want {
			t.Errorf("%s: %v (%s), want %v", c.name, o.Verdict, o.Reason, c.want)
		}
		// The leaves' verdicts agree with the claim's.
		n := map[Verdict]int{}
		for _, cmp := range o.Comparisons {
			n[cmp.Verdict]++
		}
		if o.Verdict == Fails && n[Fails] == 0 || o.Verdict == Holds && n[Holds] == 0 {
			t.Errorf("%s: verdict %v with comparisons %v", c.name, o.Verdict, n)
		}
		d, ok := o.DecidingComparison()
		if !ok || (o.Verdict != Inconclusive && d.Verdict != o.Verdict) {
			t.Errorf("%s: deciding comparison %+v", c.name, d)
		}
	}
	if o := evaluate(missing("no %s", "data"), "k"); o.Verdict != NotEvaluated || o.Reason != "no data" {
		t.Errorf("missing formula: %v %q", o.Verdict, o.Reason)
	}
}

// The paired bootstrap on normal data with a known effect: the ratio is
// estimated, the interval covers it, and with no effect the verdict is
// inconclusive.
func TestBootstrapPaired(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	a, b := make([]float64, 100), make([]float64, 100)
	for i := range a {
		u := rng.NormFloat64()
		a[i] = 10 + u + 0.5*rng.NormFloat64()
		b[i] = 12 + u + 0.5*rng.NormFloat64()
	}
	tr := trialsOf2(a, b)
	o := evaluate(lessLeaf(tr, 0, "a", "b"), "k")
	c := o.Comparisons[0]
	if o.Verdict != Holds || c.N != 100 || c.Resamples != Resamples {
		t.Fatalf("a < b by 20%%: %v %+v", o.Verdict, c)
	}
	est, lo, hi := c.Ratio()
	if math.Abs(est-1.2) > 0.02 || !(lo < est && est < hi) || lo < 1.1 || hi > 1.3 {
		t.Errorf("ratio %g [%g, %g], want ≈ 1.2", est, lo, hi)
	}
	// The delta-method SE of ln(b̄/ā): sd(b/b̄ − a/ā)/√n, here
	// √(0.5² + 0.5²)·(1/11)/10 ≈ 0.0064 (a and b share u, which cancels to
	// first order).
	if math.Abs(c.SE-0.0064) > 0.0015 {
		t.Errorf("SE %g, want ≈ 0.0064", c.SE)
	}
	// The same data give the same outcome; another key other resamples.
	if again := evaluate(lessLeaf(tr, 0, "a", "b"), "k").Comparisons[0]; again.Lo != c.Lo || again.PHold != c.PHold {
		t.Error("the bootstrap is not deterministic")
	}
	if other := evaluate(lessLeaf(tr, 0, "a", "b"), "other").Comparisons[0]; other.Lo == c.Lo {
		t.Error("another key gave the same resamples")
	}
	// No effect: undecided, with the trials that would decide it.
	same := trialsOf2(a, a)
	for i := range same.vals["b"][0] {
		same.vals["b"][0][i].v += 1e-3 * rng.NormFloat64()
	}
	if o := evaluate(lessLeaf(same, 0, "a", "b"), "k"); o.Verdict != Inconclusive {
		t.Errorf("no effect: %v", o.Verdict)
	}
}

func TestBootstrapEdgeCases(t *testing.T) {
	ones := func(n int, v float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = v * (1 + 0.1*float64(i%3))
		}
		return out
	}
	// b = 2a in every trial: the ratio is exact, but a zero-width interval
	// carries no estimate of the Monte Carlo error and decides nothing.
	o := evaluate(lessLeaf(trialsOf2(ones(30, 1), ones(30, 2)), 0, "a", "b"), "k")
	if c := o.Comparisons[0]; o.Verdict != Inconclusive || math.Abs(c.Stat-math.Ln2) > 1e-12 || c.Lo != c.Stat || c.Hi != c.Stat ||
		c.PHold != 1 || c.PFail != 1 || !strings.Contains(c.Note, "same ratio") {
		t.Errorf("exact ratio 2: %v %+v", o.Verdict, c)
	}
	// One infinite value makes b's mean infinite, but leaving it out makes
	// it finite: not decided.
	inf1 := ones(30, 1)
	inf1[3] = math.Inf(1)
	if o := evaluate(lessLeaf(trialsOf2(ones(30, 1), inf1), 0, "a", "b"), "k"); o.Verdict != Inconclusive || !strings.Contains(o.Reason, "one trial") {
		t.Errorf("b infinite in one trial: %v %s", o.Verdict, o.Reason)
	}
	// Two infinite values keep it infinite whichever trial is left out:
	// a < b holds.
	inf := ones(30, 1)
	inf[3], inf[7] = math.Inf(1), math.Inf(1)
	if o := evaluate(lessLeaf(trialsOf2(ones(30, 1), inf), 0, "a", "b"), "k"); o.Verdict != Holds || !strings.Contains(o.Reason, "infinite") {
		t.Errorf("b infinite: %v %s", o.Verdict, o.Reason)
	}
	if o := evaluate(lessLeaf(trialsOf2(inf, ones(30, 1)), 0, "a", "b"), "k"); o.Verdict != Fails {
		t.Errorf("a infinite: %v %s", o.Verdict, o.Reason)
	}
	if o := evaluate(lessLeaf(trialsOf2(inf, inf), 0, "a", "b"), "k"); o.Verdict != Inconclusive {
		t.Errorf("both infinite: %v %s", o.Verdict, o.Reason)
	}
	// A zero mean has no ratio.
	if o := evaluate(lessLeaf(trialsOf2(make([]float64, 30), ones(30, 1)), 0, "a", "b"), "k"); o.Verdict != NotEvaluated {
		t.Errorf("zero mean: %v %s", o.Verdict, o.Reason)
	}
	// One trial: nothing to resample.
	if o := evaluate(lessLeaf(trialsOf2([]float64{1}, []float64{100}), 0, "a", "b"), "k"); o.Verdict != Inconclusive ||
		!strings.Contains(o.Reason, "n = 1") {
		t.Errorf("n = 1: %v %s", o.Verdict, o.Reason)
	}
	// Too few trials: undecided however clear, and saying so.
	o = evaluate(lessLeaf(trialsOf2([]float64{1, 1.2, 0.9, 1.1}, []float64{2, 2.5, 1.8, 2.1}), 0, "a", "b"), "k")
	if o.Verdict != Inconclusive || !strings.Contains(o.Reason, "fewer than") {
		t.Errorf("n = 4: %v (%s)", o.Verdict, o.Reason)
	}
	// Trials are matched by index: only common trials are paired.
	tr := trialsOf2(ones(30, 1), ones(25, 2))
	if c := evaluate(lessLeaf(tr, 0, "a", "b"), "k").Comparisons[0]; c.N != 25 {
		t.Errorf("common trials: n = %d, want 25", c.N)
	}
}

// Across sweep points trials are paired (common random numbers): a factor
// shared by a trial's points cancels from the comparison.
func TestAcrossPoints(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	tr := &Trials{Metric: "err2", XName: "x", x: map[int]float64{}, vals: map[string]map[int][]trialValue{}, used: map[string]bool{}}
	for i := range 50 {
		f := math.Exp(rng.NormFloat64()) // a factor shared by the trial's points
		tr.add("s", 0, 1, i, f)
		tr.add("s", 1, 2, i, 1.1*f*math.Exp(0.01*rng.NormFloat64()))
	}
	tr.sortTrials()
	c := evaluate(ratioLeaf(tr, "x", "s(1) < s(2)", ref{"s", 0}, 1, ref{"s", 1}, 1), "k").Comparisons[0]
	// Paired, the SE is that of the 1% noise of the ratio (0.01/√50), not
	// of the shared factor (≈ 0.3 on the log scale), and the 10% gap
	// decides.
	if !(c.SE < 0.005) || c.Verdict != Holds || c.N != 50 {
		t.Errorf("SE %g, verdict %v, n %d", c.SE, c.Verdict, c.N)
	}
}

func TestTrialsToDecideFormula(t *testing.T) {
	// n·(z·se/θ)² with z = Φ⁻¹(0.995) ≈ 2.576: 40·(2.576·0.05/0.1)² ≈ 66.4.
	z := distuv.UnitNormal.Quantile(0.995)
	want := int(math.Ceil(40 * math.Pow(z*0.05/0.1, 2)))
	if got := trialsToDecide(40, 0.1, 0.05, 0.005); got != want || got != 67 {
		t.Errorf("trialsToDecide = %d, want %d", got, want)
	}
	if got := trialsToDecide(40, 0, 0.05, 0.005); got != 0 {
		t.Errorf("zero estimate: %d, want 0 (unknown)", got)
	}
}

func TestAbsDevFromMedian(t *testing.T) {
	if got := absDevFromMedian([]float64{5, 1, 3}); !slices.Equal(got, []float64{2, 2, 0}) {
		t.Errorf("odd n: %v", got)
	}
	if got := absDevFromMedian([]float64{1, 2, 4, 10}); !slices.Equal(got, []float64{2, 1, 1, 7}) {
		t.Errorf("even n: %v", got)
	}
}

// A spread comparison is about spreads, not means: b has the larger mean
// but the smaller spread.
func TestSpreadLeaf(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	a, b := make([]float64, 60), make([]float64, 60)
	for i := range a {
		a[i] = 1 + 0.1*rng.NormFloat64()
		b[i] = 5 + 0.3*rng.NormFloat64()
	}
	tr := trialsOf2(a, b)
	if o := evaluate(spreadLeaf(tr, 0, "a", "b"), "k"); o.Verdict != Holds || o.Comparisons[0].Values[0].What != "spread" {
		t.Errorf("spread 0.1 vs 0.3: %v (%s)", o.Verdict, o.Reason)
	}
	if o := evaluate(spreadLeaf(tr, 0, "b", "a"), "k"); o.Verdict != Fails {
		t.Errorf("spread 0.3 vs 0.1: %v (%s)", o.Verdict, o.Reason)
	}
	if o := evaluate(spreadLeaf(trialsOf2(a[:30], b[:30]), 0, "a", "b"), "k"); o.Verdict != Inconclusive || !strings.Contains(o.Reason, "fewer than") {
		t.Errorf("30 trials: %v (%s)", o.Verdict, o.Reason)
	}
}
