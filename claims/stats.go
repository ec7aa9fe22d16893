package claims

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/stat/distuv"

	"wcmc/runner"
)

// Level is the two-sided confidence level of every comparison: a
// difference decides a verdict only when its Level confidence interval
// excludes zero. At 99% a claim made of a handful of comparisons has well
// under a 5% chance of a spurious verdict when the true difference is nil.
const Level = 0.99

// Estimate is one summary mean with its Monte Carlo standard error.
//
// SE is derived from the row's 5–95% band and n (runner.Summarize keeps no
// standard deviation): for n values of a normal variable the band
// [Q05, Q95] spans BandWidth(n) standard deviations on average, so
// σ̂ = (Q95 − Q05)/BandWidth(n) and SE = σ̂/√n. The per-trial errors are
// positive and skewed, so σ̂ is a normal-theory approximation; the t
// quantiles used with it (df = n − 1) widen the margin for small n.
type Estimate struct {
	Scheme   string
	XName    string
	X        float64
	Metric   string
	Mean, SE float64
	Sigma    float64 // σ̂, the per-trial standard deviation implied by the band
	Q05, Q95 float64
	N        int
}

// EstimateOf returns the estimate of one summary row.
func EstimateOf(r runner.SummaryRow) Estimate {
	e := Estimate{Scheme: r.Scheme, XName: r.XName, X: r.X, Metric: r.Metric,
		Mean: r.Mean, Q05: r.Q05, Q95: r.Q95, N: r.N, SE: math.NaN(), Sigma: math.NaN()}
	if w := BandWidth(r.N); w > 0 {
		e.Sigma = (r.Q95 - r.Q05) / w
		e.SE = e.Sigma / math.Sqrt(float64(r.N))
	}
	return e
}

// At returns "xname=x".
func (e Estimate) At() string { return e.XName + "=" + runner.FormatX(e.X) }

// String returns "mean ± SE (n=…)".
func (e Estimate) String() string {
	if math.IsNaN(e.SE) {
		return fmt.Sprintf("%s (n=%d, no error estimate)", Num(e.Mean), e.N)
	}
	return fmt.Sprintf("%s ± %s (n=%d)", Num(e.Mean), Num(e.SE), e.N)
}

// Num formats a number with 3 significant digits.
func Num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return fmt.Sprintf("%.3g", v)
}

// empiricalIndex is the 0-based index of the sorted values that
// stat.Quantile(p, stat.Empirical, ·) returns for n values: the first i with
// i+1 ≥ p·n.
func empiricalIndex(p float64, n int) int {
	f := p * float64(n)
	for i := range n {
		if float64(i+1) >= f {
			return i
		}
	}
	return n - 1
}

var bandCache sync.Map // n → float64

// BandWidth returns E[Z(k95) − Z(k05)] for n independent standard normal
// values, where Z(k) is the k-th smallest and k05, k95 are the order
// statistics stat.Quantile picks for the empirical 5% and 95% quantiles
// (for n < 20 the minimum and maximum, so BandWidth is the expected range,
// 2/√π at n = 2; as n grows it tends to 2·Φ⁻¹(0.95) ≈ 3.29). It is 0 for
// n < 2, where the band carries no spread.
//
// E[Z(k)] = n!/((k−1)!(n−k)!) ∫ z φ(z) Φ(z)^{k−1} (1−Φ(z))^{n−k} dz is
// computed by Gauss–Legendre quadrature for n ≤ 400, and by Blom's
// approximation Φ⁻¹((k − 3/8)/(n + 1/4)) beyond, where its error is below
// 10⁻³.
func BandWidth(n int) float64 {
	if n < 2 {
		return 0
	}
	if w, ok := bandCache.Load(n); ok {
		return w.(float64)
	}
	lo := empiricalIndex(0.05, n) + 1
	hi := empiricalIndex(0.95, n) + 1
	w := orderMean(hi, n) - orderMean(lo, n)
	bandCache.Store(n, w)
	return w
}

// orderMean returns E[Z(k)], the mean of the k-th smallest (1-based) of n
// standard normal values.
func orderMean(k, n int) float64 {
	if n > 400 {
		return distuv.UnitNormal.Quantile((float64(k) - 0.375) / (float64(n) + 0.25))
	}
	lgn, _ := math.Lgamma(float64(n + 1))
	lgk, _ := math.Lgamma(float64(k))
	lgr, _ := math.Lgamma(float64(n - k + 1))
	logc := lgn - lgk - lgr
	f := func(z float64) float64 {
		lp := math.Log(0.5 * math.Erfc(-z/math.Sqrt2)) // log Φ(z)
		lq := math.Log(0.5 * math.Erfc(z/math.Sqrt2))  // log (1 − Φ(z))
		l := logc - 0.5*z*z - 0.5*math.Log(2*math.Pi)
		if k > 1 {
			l += float64(k-1) * lp
		}
		if n > k {
			l += float64(n-k) * lq
		}
		return z * math.Exp(l)
	}
	return quad.Fixed(f, -12, 12, 1000, quad.Legendre{}, 0)
}

// tQuantile returns the two-sided Level quantile of Student's t with df
// degrees of freedom.
func tQuantile(df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(0.5 + Level/2)
}

// fQuantile returns the upper (1+Level)/2 quantile of the F(d1, d2)
// distribution.
func fQuantile(d1, d2 int) float64 {
	return distuv.F{D1: float64(d1), D2: float64(d2)}.Quantile(0.5 + Level/2)
}

// Comparison is one test within a claim: the estimates it compared, a
// statistic that is positive when the data support the claim, the Level
// confidence interval [Lo, Hi] of that statistic, and its verdict: holds
// when Lo > 0, fails when Hi < 0, inconclusive otherwise.
type Comparison struct {
	At      string // where, e.g. "snr_db=5" or "T=7 → T=2000"
	Test    string // what, e.g. "wvcmc-noma < gcmc"
	Values  []Estimate
	Stat    float64
	Lo, Hi  float64
	Verdict Verdict
	Note    string // why a comparison could not decide, if so
}

// Brief returns a one-line account: "at AT: TEST (means m1 vs m2;
// statistic s, 99% CI [lo, hi])", with the note if any.
func (c Comparison) Brief() string {
	ms := make([]string, len(c.Values))
	for i, e := range c.Values {
		ms[i] = Num(e.Mean)
	}
	s := fmt.Sprintf("at %s: %s (means %s; statistic %s, %.0f%% CI [%s, %s])", c.At, c.Test,
		strings.Join(ms, " vs "), Num(c.Stat), 100*Level, Num(c.Lo), Num(c.Hi))
	if c.Note != "" {
		s += "; " + c.Note
	}
	return s
}

// decide sets the verdict from the interval.
func (c *Comparison) decide() {
	switch {
	case math.IsNaN(c.Lo) || math.IsNaN(c.Hi):
		c.Verdict = Inconclusive
	case c.Lo > 0:
		c.Verdict = Holds
	case c.Hi < 0:
		c.Verdict = Fails
	default:
		c.Verdict = Inconclusive
	}
}

// finiteOrder handles comparisons of a·fa < b·fb where a mean is not
// finite; it reports whether it decided.
func finiteOrder(c *Comparison, a, b float64) bool {
	switch {
	case math.IsNaN(a) || math.IsNaN(b):
		c.Verdict, c.Note = NotEvaluated, "a mean is NaN"
		c.Stat, c.Lo, c.Hi = math.NaN(), math.NaN(), math.NaN()
		return true
	case math.IsInf(a, 0) && math.IsInf(b, 0):
		c.Verdict, c.Note = Inconclusive, "both means are infinite"
		c.Stat, c.Lo, c.Hi = math.NaN(), math.Inf(-1), math.Inf(1)
		return true
	case math.IsInf(b, 1) || math.IsInf(a, -1):
		c.Stat, c.Lo, c.Hi = math.Inf(1), math.Inf(1), math.Inf(1)
		c.Verdict, c.Note = Holds, "an infinite mean (some trial gave +Inf)"
		return true
	case math.IsInf(a, 1) || math.IsInf(b, -1):
		c.Stat, c.Lo, c.Hi = math.Inf(-1), math.Inf(-1), math.Inf(-1)
		c.Verdict, c.Note = Fails, "an infinite mean (some trial gave +Inf)"
		return true
	}
	return false
}

// scaledLess tests fa·a < fb·b on the means: the statistic is
// D = fb·b − fa·a, its standard error √(fa²SE_a² + fb²SE_b²) (the two
// estimates treated as independent — conservative, since schemes compared
// within one trial share its samples and are positively correlated), and
// the margin t·SE with t the Level quantile of Student's t on
// min(n_a, n_b) − 1 degrees of freedom.
func scaledLess(at, test string, a Estimate, fa float64, b Estimate, fb float64) Comparison {
	c := Comparison{At: at, Test: test, Values: []Estimate{a, b}}
	if finiteOrder(&c, fa*a.Mean, fb*b.Mean) {
		return c
	}
	c.Stat = fb*b.Mean - fa*a.Mean
	df := min(a.N, b.N) - 1
	if df < 1 {
		c.Lo, c.Hi = math.Inf(-1), math.Inf(1)
		c.Verdict, c.Note = Inconclusive, "n = 1: no Monte Carlo error estimate"
		return c
	}
	se := math.Hypot(fa*a.SE, fb*b.SE)
	m := tQuantile(df) * se
	c.Lo, c.Hi = c.Stat-m, c.Stat+m
	c.decide()
	return c
}

// less tests a < b.
func less(at string, a, b Estimate) Comparison {
	return scaledLess(at, a.Scheme+" < "+b.Scheme, a, 1, b, 1)
}

// growthGreater tests a1/a0 > b1/b0: the statistic is
// D = ln(a1/a0) − ln(b1/b0), with the delta-method standard error
// √Σ(SE_i/mean_i)² and the t margin of scaledLess.
func growthGreater(at, test string, a0, a1, b0, b1 Estimate) Comparison {
	c := Comparison{At: at, Test: test, Values: []Estimate{a0, a1, b0, b1}}
	for _, e := range c.Values {
		if !(e.Mean > 0) || math.IsInf(e.Mean, 0) {
			c.Verdict, c.Note = NotEvaluated, "growth ratios need finite positive means"
			c.Stat, c.Lo, c.Hi = math.NaN(), math.NaN(), math.NaN()
			return c
		}
	}
	c.Stat = math.Log(a1.Mean/a0.Mean) - math.Log(b1.Mean/b0.Mean)
	df := min(a0.N, a1.N, b0.N, b1.N) - 1
	if df < 1 {
		c.Lo, c.Hi = math.Inf(-1), math.Inf(1)
		c.Verdict, c.Note = Inconclusive, "n = 1: no Monte Carlo error estimate"
		return c
	}
	var v float64
	for _, e := range c.Values {
		r := e.SE / e.Mean
		v += r * r
	}
	m := tQuantile(df) * math.Sqrt(v)
	c.Lo, c.Hi = c.Stat-m, c.Stat+m
	c.decide()
	return c
}

// spreadLess tests σ_a < σ_b, the per-trial standard deviations implied by
// the bands: the statistic is D = ln(σ̂_b²/σ̂_a²), which under equal
// variances follows ln F(n_b−1, n_a−1); the interval is
// [D − ln F_q(n_b−1, n_a−1), D + ln F_q(n_a−1, n_b−1)] with F_q the upper
// (1+Level)/2 quantile (a two-sided variance-ratio F test).
func spreadLess(at string, a, b Estimate) Comparison {
	c := Comparison{At: at, Test: "spread(" + a.Scheme + ") < spread(" + b.Scheme + ")", Values: []Estimate{a, b}}
	if a.N < 2 || b.N < 2 {
		c.Stat, c.Lo, c.Hi = math.NaN(), math.Inf(-1), math.Inf(1)
		c.Verdict, c.Note = Inconclusive, "n = 1: no spread estimate"
		return c
	}
	if math.IsNaN(a.Sigma) || math.IsNaN(b.Sigma) || math.IsInf(a.Sigma, 0) || math.IsInf(b.Sigma, 0) {
		c.Stat, c.Lo, c.Hi = math.NaN(), math.NaN(), math.NaN()
		c.Verdict, c.Note = NotEvaluated, "a band is not finite"
		return c
	}
	c.Stat = 2 * (math.Log(b.Sigma) - math.Log(a.Sigma))
	if math.IsNaN(c.Stat) { // both spreads zero
		c.Lo, c.Hi = math.Inf(-1), math.Inf(1)
		c.Verdict, c.Note = Inconclusive, "both bands have zero width"
		return c
	}
	c.Lo = c.Stat - math.Log(fQuantile(b.N-1, a.N-1))
	c.Hi = c.Stat + math.Log(fQuantile(a.N-1, b.N-1))
	c.decide()
	return c
}
