package claims

import (
	"math"
	"testing"
)

// "Vanishes" is decided by the exact binomial test, with an interval of
// the exceedance share that is never a point, even when every trial sits
// at the err2 floor.
func TestVanishesExact(t *testing.T) {
	floor := filled(100, Err2Floor)
	o := evaluate(quantileBelow(trialsOf2(floor, floor), 0, "a", VanishShare, VanishLevel), "k")
	c := o.Comparisons[0]
	// No trial at or above the level: P(Bin(100, 0.2) ≤ 0) = 0.8¹⁰⁰.
	if o.Verdict != Holds || math.Abs(c.PHold-math.Pow(0.8, 100)) > 1e-15 || !math.IsInf(c.Stat, 1) || !(c.Lo > 0 && c.Lo < c.Hi) {
		t.Errorf("all at the floor: %v %+v", o.Verdict, c)
	}
	// The upper Clopper–Pearson bound with no success is 1 − α^(1/n).
	if want := math.Log(0.2) - math.Log(1-math.Pow(alpha, 0.01)); math.Abs(c.Lo-want) > 1e-9 {
		t.Errorf("lower end %g, want %g", c.Lo, want)
	}
	// Every trial above: fails, with the exact tail 0.2¹⁰⁰, not a
	// cancellation to 1e-16.
	high := filled(100, 1)
	o = evaluate(quantileBelow(trialsOf2(high, high), 0, "a", VanishShare, VanishLevel), "k")
	if c := o.Comparisons[0]; o.Verdict != Fails || math.Abs(c.PFail/math.Pow(0.2, 100)-1) > 1e-9 {
		t.Errorf("all above: %v %+v", o.Verdict, c)
	}
	// 40 trials, none above: 0.8⁴⁰ = 1.3e-4 decides; 20 trials (0.8²⁰ =
	// 0.012) cannot.
	if o := evaluate(quantileBelow(trialsOf2(floor[:40], floor[:40]), 0, "a", VanishShare, VanishLevel), "k"); o.Verdict != Holds {
		t.Errorf("40 trials at the floor: %v", o.Verdict)
	}
	if o := evaluate(quantileBelow(trialsOf2(floor[:20], floor[:20]), 0, "a", VanishShare, VanishLevel), "k"); o.Verdict != Inconclusive {
		t.Errorf("20 trials at the floor: %v", o.Verdict)
	}
}

// filled returns n copies of v.
func filled(n int, v float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = v
	}
	return x
}
