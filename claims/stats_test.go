package claims

import (
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"wcmc/runner"
)

func TestBandWidthKnownValues(t *testing.T) {
	// For n < 20 the empirical 5% and 95% quantiles are the minimum and
	// maximum, so BandWidth is the expected range of n normals:
	// 2/√π at n = 2 and 3/√π at n = 3 exactly, 3.0775 at n = 10 (tables
	// of the d2 constant).
	for _, c := range []struct {
		n    int
		want float64
		tol  float64
	}{
		{1, 0, 0},
		{2, 2 / math.SqrtPi, 1e-9},
		{3, 3 / math.SqrtPi, 1e-9},
		{10, 3.0775, 1e-4},
	} {
		if got := BandWidth(c.n); math.Abs(got-c.want) > c.tol {
			t.Errorf("BandWidth(%d) = %.6g, want %.6g", c.n, got, c.want)
		}
	}
	// Large n: the band tends to 2·Φ⁻¹(0.95) = 3.2897; at n = 10000 the
	// order statistics sit within O(1/n) of the quantiles.
	if got, want := BandWidth(10000), 2*distuv.UnitNormal.Quantile(0.95); math.Abs(got-want) > 2e-3 {
		t.Errorf("BandWidth(10000) = %.5g, want ≈ %.5g", got, want)
	}
}

func TestOrderMeanQuadratureMatchesBlom(t *testing.T) {
	// Just below the switch to Blom's approximation, the quadrature and
	// Blom's formula must agree to its known accuracy (~1e-3).
	n := 400
	for _, k := range []int{20, 200, 380} {
		q := orderMean(k, n)
		b := distuv.UnitNormal.Quantile((float64(k) - 0.375) / (float64(n) + 0.25))
		if math.Abs(q-b) > 2e-3 {
			t.Errorf("E[Z(%d) of %d]: quadrature %.5f, Blom %.5f", k, n, q, b)
		}
	}
}

func TestBandWidthMonteCarlo(t *testing.T) {
	// The mean width of the empirical 5–95% band of n normals, over R
	// replications, must match BandWidth(n) within 4 Monte Carlo standard
	// errors of that mean.
	rng := rand.New(rand.NewPCG(1, 2))
	const R = 4000
	for _, n := range []int{2, 4, 20, 40, 100} {
		w := make([]float64, R)
		x := make([]float64, n)
		for r := range R {
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			sort.Float64s(x)
			w[r] = stat.Quantile(0.95, stat.Empirical, x, nil) - stat.Quantile(0.05, stat.Empirical, x, nil)
		}
		m, sd := stat.MeanStdDev(w, nil)
		se := sd / math.Sqrt(R)
		if got := BandWidth(n); math.Abs(got-m) > 4*se {
			t.Errorf("n=%d: BandWidth %.4f, Monte Carlo %.4f ± %.4f", n, got, m, se)
		}
	}
}

func TestEstimateOf(t *testing.T) {
	r := runner.SummaryRow{Scheme: "a", XName: "x", X: 3, Metric: "m", Mean: 1, Q05: 0.5, Q95: 1.5, N: 4}
	e := EstimateOf(r)
	wantSigma := 1 / BandWidth(4)
	if math.Abs(e.Sigma-wantSigma) > 1e-12 || math.Abs(e.SE-wantSigma/2) > 1e-12 {
		t.Errorf("σ̂ = %g, SE = %g; want %g, %g", e.Sigma, e.SE, wantSigma, wantSigma/2)
	}
	if e.At() != "x=3" {
		t.Errorf("At() = %q", e.At())
	}
	one := EstimateOf(runner.SummaryRow{Mean: 1, Q05: 1, Q95: 1, N: 1})
	if !math.IsNaN(one.SE) {
		t.Errorf("n = 1: SE = %g, want NaN", one.SE)
	}
}

// est is an estimate with mean m, standard error se and n trials.
func est(s string, m, se float64, n int) Estimate {
	return Estimate{Scheme: s, XName: "x", Mean: m, SE: se, Sigma: se * math.Sqrt(float64(n)), N: n}
}

func TestScaledLessVerdicts(t *testing.T) {
	t99 := tQuantile(99) // ≈ 2.626
	if math.Abs(t99-2.626) > 1e-3 {
		t.Fatalf("t quantile(99 df) = %g", t99)
	}
	se := 0.1
	margin := t99 * math.Hypot(se, se)
	for _, c := range []struct {
		name   string
		a, b   Estimate
		fa, fb float64
		want   Verdict
	}{
		{"clear", est("a", 1, se, 100), est("b", 1+1.01*margin, se, 100), 1, 1, Holds},
		{"within margin", est("a", 1, se, 100), est("b", 1+0.99*margin, se, 100), 1, 1, Inconclusive},
		{"reversed", est("a", 1+1.01*margin, se, 100), est("b", 1, se, 100), 1, 1, Fails},
		{"factor", est("a", 1, 0.001, 100), est("b", 1.9, 0.001, 100), 2, 1, Fails},
		{"factor on b", est("a", 1.2, 0.001, 100), est("b", 1, 0.001, 100), 1, 1.25, Holds},
		{"n=1", est("a", 1, 0, 1), est("b", 100, 0, 1), 1, 1, Inconclusive},
		{"b infinite", est("a", 1, se, 100), est("b", math.Inf(1), math.NaN(), 100), 1, 1, Holds},
		{"a infinite", est("a", math.Inf(1), math.NaN(), 100), est("b", 1, se, 100), 1, 1, Fails},
		{"NaN", est("a", math.NaN(), se, 100), est("b", 1, se, 100), 1, 1, NotEvaluated},
	} {
		got := scaledLess("x=1", "t", c.a, c.fa, c.b, c.fb)
		if got.Verdict != c.want {
			t.Errorf("%s: verdict %v, want %v (stat %g, [%g, %g])", c.name, got.Verdict, c.want, got.Stat, got.Lo, got.Hi)
		}
	}
}

func TestGrowthGreater(t *testing.T) {
	// a grows ×4, b ×2, with 1% relative errors: ln 2 ≫ margin.
	a0, a1 := est("a", 1, 0.01, 50), est("a", 4, 0.04, 50)
	b0, b1 := est("b", 1, 0.01, 50), est("b", 2, 0.02, 50)
	if v := growthGreater("", "", a0, a1, b0, b1).Verdict; v != Holds {
		t.Errorf("a ×4 vs b ×2: %v, want holds", v)
	}
	if v := growthGreater("", "", b0, b1, a0, a1).Verdict; v != Fails {
		t.Errorf("b ×2 vs a ×4: %v, want fails", v)
	}
	if v := growthGreater("", "", a0, a1, a0, a1).Verdict; v != Inconclusive {
		t.Errorf("equal growth: %v, want inconclusive", v)
	}
	if v := growthGreater("", "", est("a", 0, 0, 50), a1, b0, b1).Verdict; v != NotEvaluated {
		t.Errorf("zero mean: %v, want not evaluated", v)
	}
}

func TestSpreadLess(t *testing.T) {
	// σ ratio 2 (variance ratio 4) with n = 100 each: F_{0.995}(99, 99) ≈ 1.7.
	a := Estimate{Scheme: "a", Mean: 1, Sigma: 1, N: 100}
	b := Estimate{Scheme: "b", Mean: 1, Sigma: 2, N: 100}
	if v := spreadLess("", a, b).Verdict; v != Holds {
		t.Errorf("σ 1 vs 2: %v, want holds", v)
	}
	if v := spreadLess("", b, a).Verdict; v != Fails {
		t.Errorf("σ 2 vs 1: %v, want fails", v)
	}
	c := Estimate{Scheme: "c", Mean: 1, Sigma: 1.1, N: 100}
	if v := spreadLess("", a, c).Verdict; v != Inconclusive {
		t.Errorf("σ 1 vs 1.1: %v, want inconclusive", v)
	}
	if v := spreadLess("", Estimate{Sigma: 0, N: 1}, b).Verdict; v != Inconclusive {
		t.Errorf("n = 1: %v, want inconclusive", v)
	}
}

func TestAllOfAnyOf(t *testing.T) {
	h, f, i := Comparison{Verdict: Holds, Lo: 1}, Comparison{Verdict: Fails}, Comparison{Verdict: Inconclusive}
	for _, c := range []struct {
		cs       []Comparison
		all, any Verdict
	}{
		{[]Comparison{h, h}, Holds, Holds},
		{[]Comparison{h, i}, Inconclusive, Holds},
		{[]Comparison{h, f}, Fails, Holds},
		{[]Comparison{i, f}, Fails, Inconclusive},
		{[]Comparison{f, f}, Fails, Fails},
		{nil, NotEvaluated, NotEvaluated},
	} {
		if got := allOf(c.cs).Verdict; got != c.all {
			t.Errorf("allOf(%v) = %v, want %v", verdicts(c.cs), got, c.all)
		}
		if got := anyOf(c.cs).Verdict; got != c.any {
			t.Errorf("anyOf(%v) = %v, want %v", verdicts(c.cs), got, c.any)
		}
	}
}

func verdicts(cs []Comparison) []Verdict {
	out := make([]Verdict, len(cs))
	for i, c := range cs {
		out[i] = c.Verdict
	}
	return out
}

// When no comparison holds, anyOf says how many failed and which one came
// nearest to holding, so a reader sees the best evidence for the claim.
func TestAnyOfNamesNearestComparison(t *testing.T) {
	cs := []Comparison{
		{At: "x=1", Verdict: Fails, Lo: -3, Hi: -1},
		{At: "x=2", Verdict: Inconclusive, Lo: -0.5, Hi: 2},
		{At: "x=3", Verdict: Inconclusive, Lo: -2, Hi: 1},
	}
	o := anyOf(cs)
	if o.Verdict != Inconclusive {
		t.Fatalf("verdict %v, want inconclusive", o.Verdict)
	}
	for _, want := range []string{"none of 3 comparisons holds", "1 fail, 2 undecided", "nearest to holding at x=2"} {
		if !strings.Contains(o.Reason, want) {
			t.Errorf("reason %q lacks %q", o.Reason, want)
		}
	}
	o = anyOf([]Comparison{cs[0], {At: "x=4", Verdict: Fails, Lo: -1, Hi: -0.5}})
	if o.Verdict != Fails || !strings.Contains(o.Reason, "all 2 comparisons fail; nearest to holding at x=4") {
		t.Errorf("all failing: %v %q", o.Verdict, o.Reason)
	}
}
