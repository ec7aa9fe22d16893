package claims

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

// The calibration test measures the claims' spurious verdicts where the
// truth is known. Each world is a synthetic experiment whose per-trial
// values are written as runner.Result rows and read back by TrialsOf, so
// that comparisons pair trials within and across sweep points exactly as
// in reports, and each claim shape is built by the claims' own check
// builders (atPoints, someWhereEach, grows, growsMore, flat, bestBeats,
// nearAtTop). A world puts its claim at the boundary in the least
// favourable way for the direction measured: for "all" to hold, one
// comparison at its boundary and the rest clearly true; for "all" to
// fail, every comparison at its boundary; "any" the mirror image. The
// fraction of worlds held is the spurious-hold rate, the fraction failed
// the spurious-fail rate.

// law is the distribution of one scheme's per-trial values, with mean 1:
// draw maps the trial's standard normal z (correlated with the other
// schemes' and points' of the trial) and an independent uniform u to a
// value.
type law struct {
	name string
	draw func(z, u float64) float64
}

func logNormal(sigma float64) law {
	return law{fmt.Sprintf("log-normal σ=%g", sigma), func(z, _ float64) float64 { return math.Exp(sigma*z - sigma*sigma/2) }}
}

var (
	logNormal1 = logNormal(1)
	chiSquare1 = law{"χ²₁", func(z, _ float64) float64 { return z * z }}
	// light is the law of the arm a heavy one is compared with.
	light = logNormal(0.25)
	// pareto25 is Pareto with tail index 2.5 (finite variance, infinite
	// third moment): x_m·(1 − Φ(z))^(−1/2.5) with x_m = 0.6.
	pareto25 = law{"Pareto α=2.5", func(z, _ float64) float64 {
		const a = 2.5
		return (a - 1) / a * math.Pow(distuv.UnitNormal.CDF(-z), -1/a)
	}}
	// contaminated is light, except that a fraction contamination of the
	// values (drawn independently of everything else) are 50× larger, as
	// a diverging run's: mean 1 overall.
	contaminated = law{"light, 5% ×50", func(z, u float64) float64 {
		v := light.draw(z, u) / (1 - contamination + contamination*outlierFactor)
		if u < contamination {
			v *= outlierFactor
		}
		return v
	}}
)

const (
	contamination = 0.05
	outlierFactor = 50
)

// calShape is a claim shape: the schemes' true means at each sweep point
// (in units of their laws' unit means) and the check builder.
type calShape struct {
	name    string
	xs      []float64
	mean    map[string][]float64
	spread  bool
	formula func(t *Trials) *node
	// oneScheme: the shape compares scheme a with itself (across points),
	// so a heavy a is on both sides of its comparison.
	oneScheme bool
}

// world is a shape whose schemes follow the laws given (law of a scheme
// not in heavy: base).
type world struct {
	shape *calShape
	base  law
	heavy map[string]law
}

func (w world) lawOf(s string) law {
	if l, ok := w.heavy[s]; ok {
		return l
	}
	return w.base
}

func (w world) String() string {
	if len(w.heavy) == 0 {
		return w.base.name
	}
	var parts []string
	for _, s := range sortedKeys(w.heavy) {
		parts = append(parts, s+": "+w.heavy[s].name)
	}
	return strings.Join(parts, ", ") + "; others " + w.base.name
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// result draws n trials of w as a runner.Result of metric "kl" (no floor):
// scheme s at point p of trial t has the value mean[s][p]·draw(z, u) with
// z = ½·u_t + ½·v_tp + √½·e_tsp, the normals u_t shared by the trial's
// tasks (common random numbers across points), v_tp by the schemes of one
// task, e_tsp their own; so values are correlated 0.5 within a task and
// 0.25 across its points.
func (w world) result(rng *rand.Rand, n int) *runner.Result {
	sh := w.shape
	res := &runner.Result{Spec: runner.Spec{ID: "calibration", X: "x", Metrics: []string{"kl"}}, Trials: n}
	names := sortedKeys(sh.mean)
	us := make([]float64, n)
	for i := range us {
		us[i] = rng.NormFloat64()
	}
	for p, x := range sh.xs {
		for tr := range n {
			task := runner.TaskResult{TaskKey: runner.TaskKey{Point: p, X: x, Trial: tr}}
			v := rng.NormFloat64()
			for _, s := range names {
				z := 0.5*us[tr] + 0.5*v + math.Sqrt(0.5)*rng.NormFloat64()
				task.Rows = append(task.Rows, runner.Row{Scheme: s, Metric: "kl", Value: sh.mean[s][p] * w.lawOf(s).draw(z, rng.Float64())})
			}
			res.Tasks = append(res.Tasks, task)
		}
	}
	return res
}

func constant(k int, v float64) []float64 {
	out := make([]float64, k)
	for i := range out {
		out[i] = v
	}
	return out
}

// clearly is the factor by which a comparison that is "clearly" true or
// false sits beyond its boundary.
const clearly = 4

// The shapes, each at its boundary. a and b are the schemes of a
// comparison a < b; "clearly" means a factor clear beyond the boundary.
var (
	shapeOne = &calShape{
		name: "one comparison: a < b", xs: []float64{1},
		mean:    map[string][]float64{"a": {1}, "b": {1}},
		formula: func(t *Trials) *node { return atPoints(t, [][2]string{{"a", "b"}}, everywhere, false, "") },
	}
	shapeAllOneAtBoundary = &calShape{
		name: "all: a < b at 4 points, 3 clearly", xs: []float64{1, 2, 3, 4},
		mean:    map[string][]float64{"a": constant(4, 1), "b": {1, clearly, clearly, clearly}},
		formula: func(t *Trials) *node { return atPoints(t, [][2]string{{"a", "b"}}, everywhere, false, "") },
	}
	shapeAllAtBoundary = &calShape{
		name: "all: a < b at 4 points, all at boundary", xs: []float64{1, 2, 3, 4},
		mean:    map[string][]float64{"a": constant(4, 1), "b": constant(4, 1)},
		formula: func(t *Trials) *node { return atPoints(t, [][2]string{{"a", "b"}}, everywhere, false, "") },
	}
	shapeAnyOneAtBoundary = &calShape{
		name: "any: a < b at some of 3 points, 2 clearly not", xs: []float64{1, 2, 3},
		mean:    map[string][]float64{"a": constant(3, 1), "b": {1, 1. / clearly, 1. / clearly}},
		formula: func(t *Trials) *node { return someWhereEach(t, "a", []string{"b"}) },
	}
	shapeAnyAtBoundary = &calShape{
		name: "any: a < b at some of 3 points, all at boundary", xs: []float64{1, 2, 3},
		mean:    map[string][]float64{"a": constant(3, 1), "b": constant(3, 1)},
		formula: func(t *Trials) *node { return someWhereEach(t, "a", []string{"b"}) },
	}
	shapeBestBeats = &calShape{
		name: "all of any: 2×(better of w1, w2) < o at 2 points", xs: []float64{1, 2},
		mean:    map[string][]float64{"w1": constant(2, 1), "w2": constant(2, 1), "o": constant(2, 2)},
		formula: func(t *Trials) *node { return bestBeats(t, []string{"w1", "w2"}, []string{"o"}, 2) },
	}
	shapeNear = &calShape{
		name: "equivalence: a, b within ×1.25", xs: []float64{1},
		mean:    map[string][]float64{"a": {1.25}, "b": {1}},
		formula: func(t *Trials) *node { return nearAtTop(t, "a", "b", 0, NearFactor) },
	}
	shapeFlat = &calShape{
		name: "flat: max < 1.25×min over 3 points", xs: []float64{1, 2, 3},
		mean:    map[string][]float64{"s": {1, 1.1, 1.25}},
		formula: func(t *Trials) *node { return flat(t, []string{"s"}, NearFactor) },
	}
	shapeGrows = &calShape{
		name: "across points: a(first) < a(last)", xs: []float64{1, 2},
		mean:    map[string][]float64{"a": {1, 1}},
		formula: func(t *Trials) *node { return grows(t, []string{"a"}) }, oneScheme: true,
	}
	shapeGrowsMore = &calShape{
		name: "growth: a grows more than b", xs: []float64{1, 2},
		mean: map[string][]float64{"a": {1, 2}, "b": {1, 2}},
		formula: func(t *Trials) *node {
			return growsMore(t, [][2]string{{"a", "b"}}, fromFirst, "the first point")
		},
	}
	shapeSpread = &calShape{
		name: "spread: spread(a) < spread(b)", xs: []float64{1}, spread: true,
		mean:    map[string][]float64{"a": {1}, "b": {1}},
		formula: func(t *Trials) *node { return atPoints(t, [][2]string{{"a", "b"}}, everywhere, true, "") },
	}
)

// calCase is one row of the calibration: a world at n trials, over reps
// independent draws.
type calCase struct {
	w       world
	n, reps int
	// belowMin decides comparisons with fewer trials than they need
	// (MinTrials, MinSpreadTrials), to measure what those minimums avoid.
	belowMin bool
}

// run returns how many of the c.reps draws of the world the claim held
// and failed. Draw r is seeded from (seed, r) and its bootstrap from the
// shape and r, so the counts are the same on any number of cores.
func (c calCase) run(seed uint64) (held, failed int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for r := range next {
				rng := rand.New(rand.NewPCG(seed, uint64(r)))
				t := TrialsOf(c.w.result(rng, c.n), "kl", scheme.Default)
				f := c.w.shape.formula(t)
				if c.belowMin {
					for _, l := range f.leaves() {
						if l.leaf.con != nil && l.leaf.cmp.N >= 2 && l.leaf.cmp.N < l.leaf.minTrials {
							l.leaf.fixed, l.leaf.cmp.Note = false, ""
						}
					}
				}
				o := evaluateWith(f, fmt.Sprint(c.w.shape.name, r), calResamples)
				mu.Lock()
				switch o.Verdict {
				case Holds:
					held++
				case Fails:
					failed++
				}
				mu.Unlock()
			}
		})
	}
	for r := range c.reps {
		next <- r
	}
	close(next)
	wg.Wait()
	return held, failed
}

// calResamples is the bootstrap size of the calibration: a quarter of
// Resamples to keep the test to seconds. The decisions need only the
// count of replicates beyond the observed statistic (p ≤ 0.005 ⇔ at most
// 4 of 1000), and a p-value compared with a Holm threshold α/m still gets
// 2m/α resamples, as in reports, so the verdicts' error is the same; only
// the interval endpoints, which no verdict reads, are coarser.
const calResamples = Resamples / 4

// mcSE is the Monte Carlo standard error of a rate p measured on reps
// draws.
func mcSE(p float64, reps int) float64 { return math.Sqrt(p * (1 - p) / float64(reps)) }

// The rates Method states, per direction: "held" is a claim at its
// boundary found to hold, "failed" found to fail.

// longReps is the number of draws per row of TestCalibrationLong, which
// measured the heavy-tail rates Method states.
const longReps = 4000

// statedHeavy holds the rates at which Method states a heavy arm against a
// light one (log-normal σ = 0.25) is spuriously found the smaller, at
// n = 20, 50, 100 (measured by TestCalibrationLong): the samples that miss
// the arm's rare large values, which carry much of its mean, show a
// smaller mean with a spread too small to doubt it. The other direction
// stays within the nominal α.
var statedHeavy = []struct {
	l     law
	rates map[int]float64
}{
	{logNormal(2), map[int]float64{20: 0.078, 50: 0.055, 100: 0.049}},
	{pareto25, map[int]float64{20: 0.033, 50: 0.021, 100: 0.021}},
	{logNormal1, map[int]float64{20: 0.018, 50: 0.017, 100: 0.008}},
}

// boundContaminated is the stated bound on the rate at which an arm whose
// trials are 50× larger with probability 5% is spuriously found the
// smaller: the samples with no such trial (0.95^n of them) show a mean
// 3.45× too small, which nothing computed from them can reveal, plus the
// nominal rate.
func boundContaminated(n int) float64 { return math.Pow(1-contamination, float64(n)) + alpha }

// boundContaminatedSelf is the stated bound on the rate at which such an
// arm compared with itself across sweep points is spuriously decided,
// each way (samples with no such trial at one point and several at the
// other; the re-check removes those with one).
const boundContaminatedSelf = 0.02

// calRow is a world at n trials with the stated rates of its spurious
// verdicts: bounds, or, where heldMeasured, the held rate measured by
// TestCalibrationLong, which a new measurement must reproduce within
// Monte Carlo error.
type calRow struct {
	calCase
	held, failed float64
	heldMeasured bool
}

// nominal returns the rows of the skewed families (log-normal σ = 1, χ²₁
// on every arm) for every shape at n trials (and nSpread for spreads),
// with the nominal bound α in both directions.
func nominal(n, nSpread, reps int) []calRow {
	var rows []calRow
	for _, sh := range []*calShape{shapeOne, shapeAllOneAtBoundary, shapeAllAtBoundary, shapeAnyOneAtBoundary, shapeAnyAtBoundary,
		shapeBestBeats, shapeNear, shapeFlat, shapeGrows, shapeGrowsMore, shapeSpread} {
		for _, l := range []law{logNormal1, chiSquare1} {
			m := n
			if sh.spread {
				m = nSpread
			}
			rows = append(rows, calRow{calCase{w: world{shape: sh, base: l}, n: m, reps: reps}, alpha, alpha, false})
		}
	}
	return rows
}

// heavyTailed returns the rows of a heavy arm a against light arms, on
// the shapes given, at n trials (20, 50 or 100), with their stated rates:
// on one comparison, the heavy arm is spuriously found the smaller (a < b
// held) at its stated rate, and the larger at most at the nominal α; with
// more comparisons, "all" holds at most as often as its boundary one; a
// heavy arm compared with itself across points is decided at most at its
// stated rate each way.
func heavyTailed(shapes []*calShape, n, reps int) []calRow {
	var rows []calRow
	for _, sh := range shapes {
		for _, h := range statedHeavy {
			r := calRow{calCase{w: world{shape: sh, base: light, heavy: map[string]law{"a": h.l}}, n: n, reps: reps}, h.rates[n], alpha, sh == shapeOne}
			if sh.oneScheme {
				r.failed = r.held
			}
			rows = append(rows, r)
		}
		r := calRow{calCase{w: world{shape: sh, base: light, heavy: map[string]law{"a": contaminated}}, n: n, reps: reps}, boundContaminated(n), alpha, false}
		if sh.oneScheme {
			r.held, r.failed = boundContaminatedSelf, boundContaminatedSelf
		}
		rows = append(rows, r)
	}
	return rows
}

// check runs the rows and logs each rate with its Monte Carlo standard
// error. A row fails when a rate exceeds its stated bound by more than 3
// standard errors of a rate at the bound (a one-sided test at 0.13%), or,
// for a measured rate, departs from it by more than 3 standard errors of
// the difference of two measurements (this one's and TestCalibrationLong's).
func check(t *testing.T, rows []calRow) {
	t.Logf("%-50s | %-42s | %4s | %-23s | %-23s | %s", "shape", "laws", "n", "held (stated)", "failed (stated)", "reps")
	for i, r := range rows {
		h, f := r.run(uint64(1000 + i))
		ph, pf := float64(h)/float64(r.reps), float64(f)/float64(r.reps)
		kind := "≤"
		if r.heldMeasured {
			kind = "≈"
		}
		t.Logf("%-50s | %-42s | %4d | %.4f ± %.4f (%s%.3f) | %.4f ± %.4f (≤%.3f) | %d",
			r.w.shape.name, r.w, r.n, ph, mcSE(ph, r.reps), kind, r.held, pf, mcSE(pf, r.reps), r.failed, r.reps)
		where := fmt.Sprintf("%s, %s, n=%d", r.w.shape.name, r.w, r.n)
		switch lim := r.held + 3*mcSE(r.held, r.reps); {
		case r.heldMeasured:
			if d := 3 * math.Sqrt(r.held*(1-r.held)*(1/float64(r.reps)+1/float64(longReps))); math.Abs(ph-r.held) > d {
				t.Errorf("%s: held %.4f, not the stated %.3f (±%.4f)", where, ph, r.held, d)
			}
		case ph > lim:
			t.Errorf("%s: held %.4f, above the stated %.3f (+3 SE: %.4f)", where, ph, r.held, lim)
		}
		if lim := r.failed + 3*mcSE(r.failed, r.reps); pf > lim {
			t.Errorf("%s: failed %.4f, above the stated %.3f (+3 SE: %.4f)", where, pf, r.failed, lim)
		}
	}
}

// TestCalibration checks every shape on the skewed families at the fewest
// trials that decide (MinTrials; MinSpreadTrials for spreads), the
// heavy-tailed and contaminated arms on one comparison at n = 20, 50 and
// 100, and on "all" with one comparison at its boundary and across sweep
// points at n = 20, on 1000 draws each (skipped with -short): at the
// nominal α = 0.5% the Monte Carlo standard error is 0.22%, so a rate
// above 1.17% fails. WCMC_CALIBRATION=long runs the longer table
// (TestCalibrationLong).
func TestCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("calibrates on 1000 draws per row (-short)")
	}
	const reps = 1000
	rows := nominal(MinTrials, MinSpreadTrials, reps)
	for _, n := range []int{20, 50, 100} {
		rows = append(rows, heavyTailed([]*calShape{shapeOne}, n, reps)...)
	}
	rows = append(rows, heavyTailed([]*calShape{shapeAllOneAtBoundary, shapeGrows}, 20, reps)...)
	check(t, rows)
}

// TestCalibrationLong is the calibration on 4000 draws per row: every
// shape on the skewed families at n = 20, 50, 100 (spreads at 20, 40,
// 100), one comparison at n = 10 (below MinTrials, not asserted), and the
// heavy-tailed and contaminated arms on one comparison, on "all" with one
// comparison at its boundary and across sweep points, at n = 20, 50, 100;
// and, not asserted, what MinTrials and MinSpreadTrials avoid: one
// comparison at n = 10 and spreads at n = 20, decided regardless. It runs
// only with WCMC_CALIBRATION=long (about 10 minutes on 2 cores).
func TestCalibrationLong(t *testing.T) {
	if os.Getenv("WCMC_CALIBRATION") != "long" {
		t.Skip("set WCMC_CALIBRATION=long to run the long calibration")
	}
	const reps = longReps
	var below []calRow
	for _, l := range []law{logNormal1, chiSquare1} {
		below = append(below,
			calRow{calCase{w: world{shape: shapeOne, base: l}, n: 10, reps: reps, belowMin: true}, 1, 1, false},
			calRow{calCase{w: world{shape: shapeSpread, base: l}, n: 20, reps: reps, belowMin: true}, 1, 1, false})
	}
	check(t, below)
	var rows []calRow
	for _, n := range [][2]int{{20, 40}, {50, 50}, {100, 100}} {
		rows = append(rows, nominal(n[0], n[1], reps)...)
	}
	for _, n := range []int{20, 50, 100} {
		rows = append(rows, heavyTailed([]*calShape{shapeOne, shapeAllOneAtBoundary, shapeGrows}, n, reps)...)
	}
	check(t, rows)
}

// Method formats, states the one nominal rate, and states the heavy-tail
// rates the calibration checks.
func TestMethodStatesRates(t *testing.T) {
	if strings.Contains(Method, "%!") {
		t.Errorf("Method has a formatting error: %s", Method)
	}
	if want := fmt.Sprintf("nominal probability %.1f%% each", 100*alpha); !strings.Contains(Method, want) || strings.Contains(Method, "error of 1%") {
		t.Errorf("Method does not state the nominal rate %q alone", want)
	}
	for _, h := range statedHeavy {
		if want := fmt.Sprintf("%.1f%%, %.1f%% and %.1f%%", 100*h.rates[20], 100*h.rates[50], 100*h.rates[100]); !strings.Contains(Method, want) {
			t.Errorf("Method does not state the rates %s of %s", want, h.l.name)
		}
	}
	if want := fmt.Sprintf("–%.0f%% of samples each way", 100*boundContaminatedSelf); !strings.Contains(Method, "0.95^n") || !strings.Contains(Method, want) {
		t.Errorf("Method does not state the bounds of the contaminated arm (0.95^n, %q)", want)
	}
}
