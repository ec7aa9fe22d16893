package claims

import (
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/wcmc-project/wcmc/internal/seed"
)

// Bootstrap settings.
const (
	// Resamples is the number of bootstrap resamples of every comparison:
	// its interval endpoints at (1 ± Level)/2 are the 20th order
	// statistics from either end of the studentised replicates.
	Resamples = 4000
	// MaxResamples bounds the resamples of a comparison whose p-value must
	// be resolved below 1/Resamples (see bootstrap).
	MaxResamples = 64 * Resamples
	// resolve is how many resamples per unit of 1/τ a p-value compared
	// with threshold τ gets: at B = resolve/τ it is rejected when at most
	// resolve − 1 replicates lie beyond the observed statistic.
	resolve = 2
	// MinTrials is the fewest trials per sweep point at which a comparison
	// is decided. The calibration test (calibration_test.go) finds every
	// claim shape's one-sided spurious rate within Monte Carlo error of its
	// nominal (1 − Level)/2 = 0.5% on log-normal (σ = 1) and χ²₁ trials
	// from n = 20 on; one comparison decided at n = 10 measures 0.35–0.67%
	// (4000 samples), close, but the bootstrap's error and the tails a
	// sample misses both grow as n falls. No test can decide with n = 1.
	MinTrials = 20
	// MinSpreadTrials is MinTrials for comparisons of spreads, whose
	// absolute deviations are more skewed than the values, and whose
	// Brown–Forsythe median needs trials of its own: the calibration test
	// asserts their rates from n = 40 on (0.25–0.57% when decided at
	// n = 20).
	MinSpreadTrials = 40
)

// alpha is the one-sided level of each direction of a comparison: a
// comparison holds when its two-sided Level interval lies above zero,
// which a true boundary case does with probability alpha.
const alpha = (1 - Level) / 2

// sample is the set of units (trials) resampled together: cols[k][i] is
// the value of column k (one scheme at one sweep point) in unit i. Every
// column is paired by trial, across sweep points too (common random
// numbers: TrialsOf).
type sample struct {
	cols   [][]float64
	w      []float64 // weight of ln(mean of column k) in the contrast
	trials []int     // the trial of each unit
	// raw holds the columns before the contrast's transform (nil without
	// one), so that a unit can be left out before transforming.
	raw [][]float64
}

// contrast is the statistic θ = offset + Σ_k w_k ln(mean of column k of
// its sample): a log ratio of means (ln(f_b·b̄) − ln(f_a·ā)), or a
// difference of two such (growth).
type contrast struct {
	sample    sample
	offset    float64
	transform func([]float64) []float64 // applied to each raw column; nil: none
}

// seZero is the standard error of θ below which it counts as zero: every
// unit's values are then in the ratio of the means up to floating-point
// rounding (relative 1e-16 per value; no Monte Carlo error is that small),
// so the data carry no estimate of their own error.
const seZero = 1e-12

// bootOut is what the bootstrap of a contrast gives.
type bootOut struct {
	stat, se     float64 // the estimate and its delta-method standard error
	lo, hi       float64 // the two-sided Level interval
	pHold, pFail float64 // one-sided p-values of θ ≤ 0 and of θ ≥ 0
	resamples    int
	// degenerate: se is zero (below seZero) or undefined, so nothing can
	// be decided; the interval is the point θ̂ and both p-values are 1.
	degenerate bool
}

// seeded returns a generator seeded from the words given (the claim ID,
// protocol and comparison), so that every comparison's resamples are
// fixed by what it compares and nothing else.
func seeded(words ...string) *rand.Rand { return seed.Words(words...).Rand() }

// work holds a sample in row-major form with buffers for resampling.
type work struct {
	n, c  int
	x     []float64 // x[i*c+k]
	w     []float64
	sumW  float64
	idx   []int
	means []float64
	cw    []float64
}

func newWork(s sample) *work {
	n, c := len(s.cols[0]), len(s.cols)
	wk := &work{n: n, c: c, x: make([]float64, n*c), w: s.w, idx: make([]int, n),
		means: make([]float64, c), cw: make([]float64, c)}
	for k, col := range s.cols {
		for i, v := range col {
			wk.x[i*c+k] = v
		}
		wk.sumW += s.w[k]
	}
	for i := range wk.idx {
		wk.idx[i] = i
	}
	return wk
}

// eval returns the sample's part of θ, Σ_k w_k ln(mean_k), and of the
// variance of θ, Σ_i l_i² / (n(n−1)) with the influence values
// l_i = Σ_k w_k (x_ik/mean_k − 1), over the units in idx.
func (wk *work) eval() (theta, v float64) {
	n := float64(wk.n)
	var ss float64
	switch wk.c {
	case 1: // one column: l_i = w (x_i/m − 1)
		x := wk.x
		var s float64
		for _, j := range wk.idx {
			s += x[j]
		}
		m := s / n
		theta = wk.w[0] * math.Log(m)
		for _, j := range wk.idx {
			d := x[j] - m
			ss += d * d
		}
		ss *= wk.w[0] * wk.w[0] / (m * m)
	case 2: // a pair of columns
		x := wk.x
		var s0, s1 float64
		for _, j := range wk.idx {
			s0 += x[2*j]
			s1 += x[2*j+1]
		}
		m0, m1 := s0/n, s1/n
		theta = wk.w[0]*math.Log(m0) + wk.w[1]*math.Log(m1)
		c0, c1 := wk.w[0]/m0, wk.w[1]/m1
		for _, j := range wk.idx {
			l := c0*x[2*j] + c1*x[2*j+1] - wk.sumW
			ss += l * l
		}
	default:
		c := wk.c
		clear(wk.means)
		for _, j := range wk.idx {
			row := wk.x[j*c : j*c+c]
			for k, x := range row {
				wk.means[k] += x
			}
		}
		for k := range wk.means {
			wk.means[k] /= n
			theta += wk.w[k] * math.Log(wk.means[k])
			wk.cw[k] = wk.w[k] / wk.means[k]
		}
		for _, j := range wk.idx {
			row := wk.x[j*c : j*c+c]
			l := -wk.sumW
			for k, x := range row {
				l += wk.cw[k] * x
			}
			ss += l * l
		}
	}
	return theta, ss / (n * (n - 1))
}

// bootstrap returns the studentised (bootstrap-t) interval (NaN unless
// interval) and p-values of the contrast. Each replicate resamples the
// units of every sample with replacement and computes
// t* = (θ* − θ̂)/se*, with se* the delta-method
// standard error of the replicate; the interval is
// [θ̂ − se·t*_(1−α), θ̂ − se·t*_(α)] and the p-values are
// pHold = (#{t* ≥ θ̂/se} + 1)/(B + 1), pFail = (#{t* ≤ θ̂/se} + 1)/(B + 1).
//
// B is resamples (Resamples in reports), or, when a p-value is at most α
// and must be compared with a smaller threshold — down to tauH or tauF,
// Holm's α/m — resolve/τ for that direction's τ (up to
// MaxResamples/Resamples times resamples). The
// number of resamples at which a p-value can be rejected is thus fixed in
// advance by τ, never chosen by the data (stopping as soon as a p-value
// looks small would inflate the rejections). Every sample needs at least
// 2 units. When se is zero (below seZero) the bootstrap decides nothing:
// both p-values are 1 (see bootOut.degenerate).
//
// Studentising a log ratio of means is chosen over BCa because, on the
// skewed (log-normal, χ²) trials of the calibration test, its one-sided
// errors stay near nominal where BCa's reach several times it; the log
// makes the statistic scale-free, turns the degree factors into offsets
// and a growth comparison into a difference, and steadies its variance.
func (c contrast) bootstrap(rng *rand.Rand, resamples int, tauH, tauF float64, interval bool) bootOut {
	wk := newWork(c.sample)
	theta, v := wk.eval()
	theta += c.offset
	out := bootOut{stat: theta, se: math.Sqrt(v)}
	if !(out.se >= seZero) || math.IsNaN(theta) || math.IsInf(theta, 0) {
		// Every unit's values are in the ratio of the means (or a mean is
		// not positive): the contrast is the same in every resample, and
		// a zero-width interval says nothing of the Monte Carlo error.
		out.lo, out.hi, out.pHold, out.pFail, out.degenerate = theta, theta, 1, 1, true
		return out
	}
	tObs := theta / out.se
	var ts []float64
	if interval {
		ts = make([]float64, 0, resamples)
	}
	ge, le, reps := 0, 0, 0
	replicate := func() {
		for i := range wk.idx {
			wk.idx[i] = rng.IntN(wk.n)
		}
		th, vr := wk.eval()
		th += c.offset
		t := 0.0
		switch se := math.Sqrt(vr); {
		case se > 0:
			t = (th - theta) / se
		case th > theta:
			t = math.Inf(1)
		case th < theta:
			t = math.Inf(-1)
		}
		if math.IsNaN(t) {
			t = 0
		}
		if t >= tObs {
			ge++
		}
		if t <= tObs {
			le++
		}
		reps++
		if interval {
			ts = append(ts, t)
		}
	}
	p := func(count int) float64 { return float64(count+1) / float64(reps+1) }
	for range resamples {
		replicate()
	}
	target := reps
	for _, d := range []struct {
		count int
		tau   float64
	}{{ge, tauH}, {le, tauF}} {
		if p(d.count) <= alpha && d.tau < alpha {
			target = max(target, int(math.Ceil(resolve/d.tau)))
		}
	}
	for range min(target, (MaxResamples/Resamples)*resamples) - reps {
		replicate()
	}
	out.resamples = reps
	out.pHold, out.pFail = p(ge), p(le)
	out.lo, out.hi = math.NaN(), math.NaN()
	if interval {
		slices.Sort(ts)
		out.lo = theta - out.se*stat.Quantile(1-alpha, stat.Empirical, ts, nil)
		out.hi = theta - out.se*stat.Quantile(alpha, stat.Empirical, ts, nil)
	}
	return out
}

// leaveOneOut returns the unit i whose leaving out moves θ̂ furthest down
// (down) or up, and the estimate θ̂₋ without it. The leave-one-out
// estimates are exact and take O(units × columns):
// θ̂₋ = offset + Σ_k w_k ln((S_k − x_ik)/(n − 1)), with S_k the sum of
// column k. An estimate that is not a number (a mean that
// would be 0) counts as the furthest either way; ties go to the first
// unit. For a transformed contrast (spreads) the transformed values are
// left out as they are; the transform's own dependence on the unit (the
// median) is second order for picking the unit.
func (c contrast) leaveOneOut(down bool) (i int, theta float64) {
	wk := newWork(c.sample)
	i, theta = -1, math.NaN()
	further := func(t float64) bool {
		switch {
		case i < 0:
			return true
		case math.IsNaN(theta):
			return false
		case math.IsNaN(t):
			return true
		case down:
			return t < theta
		}
		return t > theta
	}
	sums := make([]float64, wk.c)
	for j := range wk.n {
		for col := range wk.c {
			sums[col] += wk.x[j*wk.c+col]
		}
	}
	m := float64(wk.n - 1)
	for j := range wk.n {
		t := c.offset
		for col := range wk.c {
			t += wk.w[col] * math.Log((sums[col]-wk.x[j*wk.c+col])/m)
		}
		if further(t) {
			i, theta = j, t
		}
	}
	return i, theta
}

// without returns the contrast with unit i left out (the transform, if
// any, applied anew to the remaining raw values).
func (c contrast) without(i int) contrast {
	out := c
	s := c.sample
	drop := func(cols [][]float64) [][]float64 {
		if cols == nil {
			return nil
		}
		out := make([][]float64, len(cols))
		for k, col := range cols {
			out[k] = slices.Delete(slices.Clone(col), i, i+1)
		}
		return out
	}
	ns := sample{cols: drop(s.cols), w: s.w, trials: slices.Delete(slices.Clone(s.trials), i, i+1), raw: drop(s.raw)}
	if ns.raw != nil && c.transform != nil {
		for k, col := range ns.raw {
			ns.cols[k] = c.transform(col)
		}
	}
	out.sample = ns
	return out
}

// trialsToDecide returns ⌈n·(z·se/|θ̂|)²⌉, the trials per sweep point at
// which a comparison with estimate θ̂ and standard error se at n trials
// would have its interval at one-sided level tau exclude zero, if the
// estimate stayed and the standard error shrank as 1/√n (z is the normal
// 1 − tau quantile); 0 when θ̂ = 0 or se is unknown.
func trialsToDecide(n int, stat, se, tau float64) int {
	if stat == 0 || math.IsNaN(stat) || math.IsNaN(se) || math.IsInf(stat, 0) || tau <= 0 {
		return 0
	}
	z := distuv.UnitNormal.Quantile(1 - tau)
	r := z * se / stat
	m := math.Ceil(float64(n) * r * r)
	if m > 1e9 {
		return 0
	}
	return int(m)
}
