package diagnostics

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Summary is the posterior summary and the diagnostics of one scalar
// quantity, from all its draws (every chain).
type Summary struct {
	Mean, SD      float64 // mean and standard deviation (divisor S − 1) of the S draws
	Q05, Q50, Q95 float64 // 5%, 50% and 95% quantiles (type 7)

	MCSEMean         float64 // Monte Carlo standard error of Mean: SD/√ESSMean
	MCSEQ05, MCSEQ95 float64 // Monte Carlo standard errors of Q05 and Q95

	ESSBulk float64 // ESS of the rank-normalised draws
	ESSTail float64 // min of the ESS of the indicators 1{θ ≤ Q05} and 1{θ ≤ Q95}
	ESSMean float64 // ESS of the draws themselves (split chains, not ranked)

	Rhat     float64 // max(RhatBulk, RhatTail)
	RhatBulk float64 // split-R̂ of the rank-normalised draws
	RhatTail float64 // split-R̂ of the rank-normalised folded draws |θ − median|
}

// Summarize returns the summary and diagnostics of the draws x, x[c][i]
// draw i of chain c. A quantity with non-finite draws gets NaN everywhere.
// Summarize panics if x has no chains, no draws or chains of unequal length.
func Summarize(x [][]float64) Summary {
	var w workspace
	return w.summarize(x)
}

// Rhat returns the rank-normalised split-R̂ of x, the larger of RhatBulk
// and RhatTail. It panics on a shape error, as Summarize.
func Rhat(x [][]float64) float64 { return math.Max(RhatBulk(x), RhatTail(x)) }

// RhatBulk returns the split-R̂ of the rank-normalised draws z(x). It panics
// on a shape error, as Summarize.
func RhatBulk(x [][]float64) float64 {
	return eval(x, func(w *workspace, m, n int) float64 {
		w.zScale()
		return w.rhat(w.trans, m, n)
	})
}

// RhatTail returns the split-R̂ of the rank-normalised folded draws
// z(|x − median(x)|). It panics on a shape error, as Summarize.
func RhatTail(x [][]float64) float64 {
	return eval(x, func(w *workspace, m, n int) float64 {
		w.sortSplit()
		w.foldScores(quantile7(w.sorted, 0.5))
		return w.rhat(w.trans, m, n)
	})
}

// ESSBulk returns the effective sample size of the rank-normalised draws
// z(x), which measures how well the bulk of the distribution is explored.
// It panics on a shape error, as Summarize.
func ESSBulk(x [][]float64) float64 {
	return eval(x, func(w *workspace, m, n int) float64 {
		w.zScale()
		return w.ess(w.trans, m, n)
	})
}

// ESSTail returns min(ESSQuantile(x, 0.05), ESSQuantile(x, 0.95)), which
// measures how well the tails are explored. It panics on a shape error, as
// Summarize.
func ESSTail(x [][]float64) float64 {
	return math.Min(ESSQuantile(x, 0.05), ESSQuantile(x, 0.95))
}

// ESSMean returns the effective sample size of the split draws themselves,
// the one that sets the Monte Carlo error of the mean. It panics on a shape
// error, as Summarize.
func ESSMean(x [][]float64) float64 {
	return eval(x, func(w *workspace, m, n int) float64 { return w.ess(w.split, m, n) })
}

// ESSQuantile returns the effective sample size of the indicator
// 1{x ≤ q_p}, q_p the p-quantile of all draws (type 7). It panics if p is
// outside (0, 1) or on a shape error, as Summarize.
func ESSQuantile(x [][]float64, p float64) float64 {
	checkProb(p)
	return eval(x, func(w *workspace, m, n int) float64 { return w.essQuantile(p, m, n) })
}

// MCSEMean returns the Monte Carlo standard error of the mean of x,
// sd(x)/√ESSMean(x). It panics on a shape error, as Summarize.
func MCSEMean(x [][]float64) float64 {
	return eval(x, func(w *workspace, m, n int) float64 {
		return stat.StdDev(w.sorted, nil) / math.Sqrt(w.ess(w.split, m, n))
	})
}

// MCSEQuantile returns the Monte Carlo standard error of the p-quantile of
// x: half the distance between the draws of ranks ⌊a S⌋ and ⌈b S⌉, where
// a and b are the Φ(−1) and Φ(1) quantiles of
// Beta(E p + 1, E (1 − p) + 1), E = ESSQuantile(x, p) and S the number of
// draws (a ±1 sd interval of the quantile's rank). It panics if p is
// outside (0, 1) or on a shape error, as Summarize.
func MCSEQuantile(x [][]float64, p float64) float64 {
	checkProb(p)
	return eval(x, func(w *workspace, m, n int) float64 {
		return mcseQuantile(w.sorted, p, w.essQuantile(p, m, n))
	})
}

// eval loads x into a new workspace, sorts all draws (so that sums run in
// the order Summarize uses) and returns f of the m split chains of n
// draws, or NaN when a draw is not finite.
func eval(x [][]float64, f func(w *workspace, m, n int) float64) float64 {
	var w workspace
	m, n, ok := w.load(x)
	if !ok {
		return math.NaN()
	}
	slices.Sort(w.sorted)
	return f(&w, m, n)
}

func checkProb(p float64) {
	if !(p > 0 && p < 1) {
		panic("diagnostics: quantile probability outside (0, 1)")
	}
}

// workspace holds the buffers of the computations, reused across calls.
type workspace struct {
	sorted []float64    // all draws, sorted after load by eval or summarize
	split  []float64    // the split chains, m blocks of n draws
	trans  []float64    // a transform of split, same layout
	order  []ranked     // the split draws and their indices, sorted
	folded []ranked     // the folded split draws and their indices, sorted
	means  []float64    // one per split chain
	acov   []float64    // mean autocovariance over the split chains, lags 0…n−1
	rho    []float64    // autocorrelations after Geyer's truncation
	pad    []float64    // one zero-padded chain, then its circular autocovariance
	coef   []complex128 // one chain's Fourier coefficients
	power  []complex128 // the sum of the chains' power spectra
	fft    *fourier.FFT
}

type ranked struct {
	v float64
	i int
}

// grow returns s resliced (or reallocated) to length n.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// load copies the draws into the workspace and returns the number m of
// split chains and their length n; ok is false when a draw is not finite.
func (w *workspace) load(x [][]float64) (m, n int, ok bool) {
	if len(x) == 0 {
		panic("diagnostics: no chains")
	}
	N := len(x[0])
	if N == 0 {
		panic("diagnostics: no draws")
	}
	for _, c := range x {
		if len(c) != N {
			panic("diagnostics: chains of unequal length")
		}
	}
	m, n = 2*len(x), N/2
	w.sorted = grow(w.sorted, len(x)*N)
	w.split = grow(w.split, m*n)
	w.trans = grow(w.trans, m*n)
	w.order = grow(w.order, m*n)
	w.means = grow(w.means, m)
	for c, chain := range x {
		copy(w.sorted[c*N:], chain)
		copy(w.split[2*c*n:], chain[:n])
		copy(w.split[(2*c+1)*n:], chain[N-n:])
	}
	for _, v := range w.sorted {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return m, n, false
		}
	}
	return m, n, true
}

func (w *workspace) summarize(x [][]float64) Summary {
	m, n, ok := w.load(x)
	if !ok {
		nan := math.NaN()
		return Summary{nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan}
	}
	var s Summary
	w.zScale()
	all := w.sorted
	if len(w.order) == len(all) {
		// An even number of draws per chain: the split draws are all
		// draws, and order has sorted them.
		for i, o := range w.order {
			all[i] = o.v
		}
	} else {
		slices.Sort(all)
	}
	s.Mean, s.SD = stat.MeanStdDev(all, nil)
	s.Q05, s.Q50, s.Q95 = quantile7(all, 0.05), quantile7(all, 0.5), quantile7(all, 0.95)

	s.RhatBulk = w.rhat(w.trans, m, n)
	s.ESSBulk = w.ess(w.trans, m, n)
	w.foldScores(s.Q50)
	s.RhatTail = w.rhat(w.trans, m, n)
	s.Rhat = math.Max(s.RhatBulk, s.RhatTail)

	s.ESSMean = w.ess(w.split, m, n)
	s.MCSEMean = s.SD / math.Sqrt(s.ESSMean)
	e05, e95 := w.essQuantile(0.05, m, n), w.essQuantile(0.95, m, n)
	s.ESSTail = math.Min(e05, e95)
	s.MCSEQ05, s.MCSEQ95 = mcseQuantile(all, 0.05, e05), mcseQuantile(all, 0.95, e95)
	return s
}

// essQuantile returns the ESS of the split indicators 1{θ ≤ q_p}.
func (w *workspace) essQuantile(p float64, m, n int) float64 {
	q := quantile7(w.sorted, p)
	for i, v := range w.split {
		w.trans[i] = 0
		if v <= q {
			w.trans[i] = 1
		}
	}
	return w.ess(w.trans, m, n)
}

// zScale sets trans to the rank-normalised split draws,
// Φ⁻¹((r − 3/8)/(S + 1/4)), r the rank of a draw among the S split draws,
// tied draws sharing their average rank. It leaves order sorted by draw.
func (w *workspace) zScale() {
	w.sortSplit()
	w.normalScores(w.order)
}

// sortSplit sets order to the split draws and their indices, sorted by draw.
func (w *workspace) sortSplit() {
	for i, v := range w.split {
		w.order[i] = ranked{v, i}
	}
	slices.SortFunc(w.order, func(a, b ranked) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
}

// foldScores sets trans to the rank-normalised folded split draws
// |θ − med|, given order sorted by draw (by zScale or sortSplit). The
// folded values are sorted by merging those above med, in order, with
// those below, in reverse order, instead of sorting again.
func (w *workspace) foldScores(med float64) {
	ord := w.order
	w.folded = grow(w.folded, len(ord))
	k, _ := slices.BinarySearchFunc(ord, med, func(r ranked, t float64) int { return cmp.Compare(r.v, t) })
	lo, hi := k-1, k // next below med (walking down), next at or above (walking up)
	for o := range w.folded {
		if hi < len(ord) && (lo < 0 || math.Abs(ord[hi].v-med) <= math.Abs(ord[lo].v-med)) {
			w.folded[o] = ranked{math.Abs(ord[hi].v - med), ord[hi].i}
			hi++
		} else {
			w.folded[o] = ranked{math.Abs(ord[lo].v - med), ord[lo].i}
			lo--
		}
	}
	w.normalScores(w.folded)
}

// normalScores sets trans[o.i] = Φ⁻¹((r − 3/8)/(S + 1/4)) for the entries o
// of ord, sorted by value, r the rank of o.v (the average rank of ties).
func (w *workspace) normalScores(ord []ranked) {
	S := len(ord)
	for lo := 0; lo < S; {
		hi := lo + 1
		for hi < S && ord[hi].v == ord[lo].v {
			hi++
		}
		r := float64(lo+1+hi) / 2 // the mean of ranks lo+1, …, hi
		z := distuv.UnitNormal.Quantile((r - 3.0/8) / (float64(S) + 0.25))
		for _, o := range ord[lo:hi] {
			w.trans[o.i] = z
		}
		lo = hi
	}
}

// constant reports whether all of v are equal (to within one ulp of 1, as
// posterior's test).
func constant(v []float64) bool {
	return floats.Max(v)-floats.Min(v) < 0x1p-52
}

// rhat returns √((n − 1)/n + B/(nW)) for the m chains of n draws in v, B/n
// the variance of the chain means and W the mean of the chain variances.
func (w *workspace) rhat(v []float64, m, n int) float64 {
	if n < 2 || constant(v) {
		return math.NaN()
	}
	var within float64
	for j := range m {
		mu, vr := stat.MeanVariance(v[j*n:(j+1)*n], nil)
		w.means[j] = mu
		within += vr
	}
	within /= float64(m)
	between := float64(n) * stat.Variance(w.means[:m], nil)
	return math.Sqrt((between/within + float64(n) - 1) / float64(n))
}

// ess returns the effective sample size mn/τ̂ of the m chains of n draws in
// v. The autocorrelation at lag t combines the chains as
// ρ̂_t = 1 − (W − mean_j γ̂_{j,t})/var⁺, with γ̂_{j,t} the autocovariance of
// chain j (divisor n), W = mean_j γ̂_{j,0} n/(n−1) and
// var⁺ = W (n−1)/n + var_j(chain means). The sum τ̂ = −1 + 2 Σ_t ρ̂_t runs
// over Geyer's initial monotone sequence: pairs ρ̂_{2k} + ρ̂_{2k+1} while
// positive, each pair capped by the one before. τ̂ is kept ≥ 1/log₁₀(mn).
func (w *workspace) ess(v []float64, m, n int) float64 {
	if n < 3 || constant(v) {
		return math.NaN()
	}
	acov := w.meanAutocov(v, m, n)
	nf := float64(n)
	meanVar := acov[0] * nf / (nf - 1)
	varPlus := meanVar * (nf - 1) / nf
	if m > 1 {
		varPlus += stat.Variance(w.means[:m], nil)
	}
	corr := func(t int) float64 { return 1 - (meanVar-acov[t])/varPlus }

	rho := grow(w.rho, n)
	clear(rho)
	even, odd := 1.0, corr(1)
	rho[0], rho[1] = even, odd
	t := 0
	for t < n-5 && even+odd > 0 { // false for NaN, too
		t += 2
		even, odd = corr(t), corr(t+1)
		if even+odd >= 0 {
			rho[t], rho[t+1] = even, odd
		}
	}
	last := t
	if even > 0 {
		rho[last] = even
	}
	for t := 2; t <= last-2; t += 2 {
		if rho[t]+rho[t+1] > rho[t-2]+rho[t-1] {
			rho[t] = (rho[t-2] + rho[t-1]) / 2
			rho[t+1] = rho[t]
		}
	}
	sum := rho[0]
	if last > 0 {
		sum = floats.Sum(rho[:last])
	}
	S := float64(m * n)
	tau := max(-1+2*sum+rho[last], 1/math.Log10(S))
	w.rho = rho
	return S / tau
}

// meanAutocov returns the mean over the m chains of n draws in v of their
// autocovariances γ̂_{j,t} = Σ_i (v_{j,i} − v̄_j)(v_{j,i+t} − v̄_j)/n, lags
// t = 0…n−1, and leaves the chain means v̄_j in means. It sums the chains'
// power spectra (FFT of the centred chain, zero-padded to at least 2n − 1
// against circular wrap-around) and transforms back once.
func (w *workspace) meanAutocov(v []float64, m, n int) []float64 {
	size := 2 * smooth(n)
	if w.fft == nil {
		w.fft = fourier.NewFFT(size)
	} else if w.fft.Len() != size {
		w.fft.Reset(size)
	}
	w.pad = grow(w.pad, size)
	w.coef = grow(w.coef, size/2+1)
	w.power = grow(w.power, size/2+1)
	clear(w.power)
	for j := range m {
		c := v[j*n : (j+1)*n]
		mean := stat.Mean(c, nil)
		w.means[j] = mean
		for i, x := range c {
			w.pad[i] = x - mean
		}
		clear(w.pad[n:])
		for k, z := range w.fft.Coefficients(w.coef, w.pad) {
			w.power[k] += complex(real(z)*real(z)+imag(z)*imag(z), 0)
		}
	}
	ac := w.fft.Sequence(w.pad, w.power)
	w.acov = grow(w.acov, n)
	// The unnormalised transforms scale by size.
	floats.ScaleTo(w.acov, 1/float64(size*n*m), ac[:n])
	return w.acov
}

// smooth returns the least integer ≥ n whose only prime factors are 2, 3
// and 5, a length the FFT handles fast.
func smooth(n int) int {
	for k := max(n, 1); ; k++ {
		r := k
		for _, p := range []int{2, 3, 5} {
			for r%p == 0 {
				r /= p
			}
		}
		if r == 1 {
			return k
		}
	}
}

// quantile7 returns the p-quantile of the sorted x by Hyndman & Fan's
// definition 7 (R's and NumPy's default): with h = (S − 1)p, the linear
// interpolation (1 − f) x_(⌊h⌋) + f x_(⌊h⌋+1), f = h − ⌊h⌋, 0-based order
// statistics. (gonum's stat.Quantile offers definitions 1 and 4.)
func quantile7(x []float64, p float64) float64 {
	h := 1 + float64(len(x)-1)*p // 1-based, as R computes it
	lo := math.Floor(h)
	i := int(lo) - 1
	if f := h - lo; f > 0 && x[i+1] != x[i] {
		return (1-f)*x[i] + f*x[i+1]
	}
	return x[i]
}

// mcseQuantile returns the MCSE of the p-quantile of the sorted draws x
// given the ESS of its indicator (see MCSEQuantile).
func mcseQuantile(x []float64, p, ess float64) float64 {
	if math.IsNaN(ess) {
		return math.NaN()
	}
	S := float64(len(x))
	b := distuv.Beta{Alpha: ess*p + 1, Beta: ess*(1-p) + 1}
	lo := max(int(math.Floor(b.Quantile(distuv.UnitNormal.CDF(-1))*S)), 1)
	hi := min(int(math.Ceil(b.Quantile(distuv.UnitNormal.CDF(1))*S)), len(x))
	return (x[hi-1] - x[lo-1]) / 2
}
