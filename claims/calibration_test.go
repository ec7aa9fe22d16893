package claims

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
)

// The calibration test checks the claims' error control where the truth
// is known: synthetic worlds of skewed trials in which every comparison
// of a claim sits exactly on its boundary (equal means, or a ratio of
// means exactly at the degree factor). A claim there must be held with
// probability at most (1 − Level)/2 and failed with at most as much; the
// test asserts each rate ≤ 1 − Level within 3 Monte Carlo standard errors
// (issue 16), which leaves room for the bootstrap's own error on skewed
// data. It also reports the power at a stated effect.

// dist draws one trial's values of two schemes, with unit means, from
// correlated standard normals (ρ = 0.5: schemes of one trial share its
// samples and channel).
type dist struct {
	name string
	draw func(z float64) float64 // value with mean 1 from a standard normal z
}

var (
	logNormal1 = dist{"log-normal σ=1", func(z float64) float64 { return math.Exp(z - 0.5) }}
	chiSquare1 = dist{"χ²₁", func(z float64) float64 { return z * z }}
)

// pair draws (u, v) standard normals with correlation rho.
func pair(rng *rand.Rand, rho float64) (float64, float64) {
	u := rng.NormFloat64()
	return u, rho*u + math.Sqrt(1-rho*rho)*rng.NormFloat64()
}

// world builds the trials of one synthetic experiment: scale[s][p] is the
// true mean of scheme s at point p; at each point every scheme's value is
// scale·draw(z) with the schemes' z correlated (ρ = 0.5) within a trial
// and independent across trials and points.
func world(rng *rand.Rand, d dist, n int, xs []float64, scale map[string][]float64) *Trials {
	t := &Trials{Metric: "err2", XName: "x", x: map[int]float64{}, vals: map[string]map[int][]trialValue{}, used: map[string]bool{}}
	names := sortedKeys(scale)
	for p, x := range xs {
		for tr := range n {
			u := rng.NormFloat64()
			for _, s := range names {
				z := 0.5*u + math.Sqrt(0.75)*rng.NormFloat64()
				t.add(s, p, x, tr, scale[s][p]*d.draw(z))
			}
		}
	}
	t.sortTrials()
	return t
}

func sortedKeys(m map[string][]float64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func constant(k int, v float64) []float64 {
	out := make([]float64, k)
	for i := range out {
		out[i] = v
	}
	return out
}

// shape is one claim shape with its boundary world and a world at a
// stated effect size.
type shape struct {
	name     string
	xs       []float64
	boundary map[string][]float64
	effect   map[string][]float64 // the claim holds by the stated effect
	effectIs string
	spread   bool // a comparison of spreads (decided from MinSpreadTrials)
	formula  func(t *Trials) *node
}

var shapes = []shape{
	{
		name: "all: a < b at 4 points", xs: []float64{1, 2, 3, 4},
		boundary: map[string][]float64{"a": constant(4, 1), "b": constant(4, 1)},
		effect:   map[string][]float64{"a": constant(4, 1), "b": constant(4, 2)}, effectIs: "b/a = 2",
		formula: func(t *Trials) *node { return atPoints(t, [][2]string{{"a", "b"}}, everywhere, false, "") },
	},
	{
		name: "all of any: 2×(better of w1, w2) < o at 2 points", xs: []float64{1, 2},
		boundary: map[string][]float64{"w1": constant(2, 1), "w2": constant(2, 1), "o": constant(2, 2)},
		effect:   map[string][]float64{"w1": constant(2, 1), "w2": constant(2, 1.5), "o": constant(2, 4)}, effectIs: "o/(2·w1) = 2",
		formula: func(t *Trials) *node { return bestBeats(t, []string{"w1", "w2"}, []string{"o"}, 2) },
	},
	{
		name: "all of any: best < s at some of 3 points, 2 schemes", xs: []float64{1, 2, 3},
		boundary: map[string][]float64{"best": constant(3, 1), "s1": constant(3, 1), "s2": constant(3, 1)},
		effect:   map[string][]float64{"best": constant(3, 1), "s1": {1, 1, 2}, "s2": {2, 1, 1}},
		effectIs: "one point each at ratio 2",
		formula:  func(t *Trials) *node { return someWhereEach(t, "best", []string{"s1", "s2"}) },
	},
	{
		name: "equivalence: a, b within ×1.25 of each other", xs: []float64{1},
		boundary: map[string][]float64{"a": {1.25}, "b": {1}},
		effect:   map[string][]float64{"a": {1}, "b": {1}}, effectIs: "equal means",
		formula: func(t *Trials) *node { return nearAtTop(t, "a", "b", 0, NearFactor) },
	},
	{
		name: "flat: max < 1.25×min over 3 points", xs: []float64{1, 2, 3},
		boundary: map[string][]float64{"s": {1, 1.1, 1.25}},
		effect:   map[string][]float64{"s": constant(3, 1)}, effectIs: "a flat curve",
		formula: func(t *Trials) *node { return flat(t, []string{"s"}, NearFactor) },
	},
	{
		name: "across points: s(first) < s(last)", xs: []float64{1, 2},
		boundary: map[string][]float64{"s": {1, 1}},
		effect:   map[string][]float64{"s": {1, 2}}, effectIs: "ratio 2",
		formula: func(t *Trials) *node { return grows(t, []string{"s"}) },
	},
	{
		name: "growth: a grows more than b", xs: []float64{1, 2},
		boundary: map[string][]float64{"a": {1, 2}, "b": {1, 2}},
		effect:   map[string][]float64{"a": {1, 4}, "b": {1, 2}}, effectIs: "growths 4 vs 2",
		formula: func(t *Trials) *node {
			return growsMore(t, [][2]string{{"a", "b"}}, fromFirst, "the first point")
		},
	},
	{
		name: "spread: spread(a) < spread(b)", xs: []float64{1}, spread: true,
		boundary: map[string][]float64{"a": {1}, "b": {1}},
		effect:   map[string][]float64{"a": {1}, "b": {2}}, effectIs: "spread ratio 2",
		formula: func(t *Trials) *node { return atPoints(t, [][2]string{{"a", "b"}}, everywhere, true, "") },
	},
}

// rates runs the formula on worlds of shape sh with n trials and returns
// the fractions held and failed.
func rates(sh shape, d dist, scale map[string][]float64, n, worlds int, seed uint64) (held, failed float64) {
	var h, f int
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := range next {
				rng := rand.New(rand.NewPCG(seed, uint64(w)))
				t := world(rng, d, n, sh.xs, scale)
				o := evaluateWith(sh.formula(t), fmt.Sprint(sh.name, w), calResamples)
				mu.Lock()
				switch o.Verdict {
				case Holds:
					h++
				case Fails:
					f++
				}
				mu.Unlock()
			}
		}()
	}
	for w := range worlds {
		next <- w
	}
	close(next)
	wg.Wait()
	return float64(h) / float64(worlds), float64(f) / float64(worlds)
}

// calResamples is the bootstrap size of the calibration: a quarter of
// Resamples to keep the test to seconds. The decisions need only the
// count of replicates beyond the observed statistic (p ≤ 0.005 ⇔ at most
// 4 of 1000), and a p-value compared with a Holm threshold α/m still gets
// 4m/α resamples, as in reports, so the verdicts' error is the same; only
// the interval endpoints, which no verdict reads, are coarser.
const calResamples = Resamples / 4

// TestCalibration runs 1000 boundary worlds per shape and distribution at
// the fewest trials that decide (MinTrials; MinSpreadTrials for spreads):
// a spurious rate of 1 − Level = 1% has a Monte Carlo standard error of
// 0.31% there, so each rate must be ≤ 1% + 3 × 0.31% = 1.94%. Power is
// measured on 200 worlds at n = 40 (the trials of the probit and MNIST
// experiments), at effects of a factor 2 (the paper's "vastly").
func TestCalibration(t *testing.T) {
	const (
		worlds      = 1000
		powerWorlds = 200
		nPower      = 40
	)
	bound := (1 - Level) + 3*math.Sqrt((1-Level)*Level/worlds)
	start := time.Now()
	for si, sh := range shapes {
		n := MinTrials
		if sh.spread {
			n = MinSpreadTrials
		}
		for di, d := range []dist{logNormal1, chiSquare1} {
			h, f := rates(sh, d, sh.boundary, n, worlds, uint64(100*si+di))
			t.Logf("%-52s %-15s boundary, n=%d: held %.3f, failed %.3f", sh.name, d.name, n, h, f)
			if h > bound || f > bound {
				t.Errorf("%s, %s: spurious rates held %.3f, failed %.3f; want ≤ %.4f", sh.name, d.name, h, f, bound)
			}
			ph, _ := rates(sh, d, sh.effect, nPower, powerWorlds, uint64(100*si+di+50))
			t.Logf("%-52s %-15s power at %s, n=%d: %.2f", sh.name, d.name, sh.effectIs, nPower, ph)
		}
	}
	t.Logf("calibration took %v", time.Since(start).Round(time.Millisecond))
}

// The mean of a log-normal (σ = 1) is hard to bound from 20–40 trials
// whatever the method (no test of a mean controls its level over all
// skewed distributions): a sample without the rare large values has a low
// mean and a small spread at once. The bootstrap-t is at its weakest when
// one scheme is that skewed and the other nearly constant; this logs its
// spurious-hold rate there (not asserted: the guarantee holds for the
// families the calibration asserts on, not for every distribution).
func TestCalibrationStress(t *testing.T) {
	skewed := dist{"log-normal σ=1 vs σ=0.1", nil}
	for _, n := range []int{MinTrials, 40, 100} {
		var held, failed int
		const worlds = 1000
		for w := range worlds {
			rng := rand.New(rand.NewPCG(9, uint64(w)))
			tr := &Trials{Metric: "err2", XName: "x", x: map[int]float64{}, vals: map[string]map[int][]trialValue{}, used: map[string]bool{}}
			for i := range n {
				tr.add("a", 0, 1, i, math.Exp(rng.NormFloat64()-0.5))
				tr.add("b", 0, 1, i, math.Exp(0.1*rng.NormFloat64()-0.005))
			}
			tr.sortTrials()
			switch evaluateWith(lessLeaf(tr, 0, "a", "b"), fmt.Sprint(w), calResamples).Verdict {
			case Holds:
				held++
			case Fails:
				failed++
			}
		}
		t.Logf("%s, n=%d, equal means: held %.3f, failed %.3f", skewed.name, n, float64(held)/worlds, float64(failed)/worlds)
	}
}
