package diagnostics

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// ar1 returns c chains of n draws of a stationary AR(1) with coefficient
// rho and unit marginal variance, plus shift[c] on chain c (if given).
func ar1(rng *rand.Rand, c, n int, rho float64, shift ...float64) [][]float64 {
	x := make([][]float64, c)
	sd := math.Sqrt(1 - rho*rho)
	for k := range x {
		x[k] = make([]float64, n)
		v := rng.NormFloat64()
		for i := range x[k] {
			if i > 0 {
				v = rho*v + sd*rng.NormFloat64()
			}
			x[k][i] = v
		}
		if k < len(shift) {
			for i := range x[k] {
				x[k][i] += shift[k]
			}
		}
	}
	return x
}

// The ESS of an AR(1) tends to S(1 − ρ)/(1 + ρ). Over 60 seeds, the
// relative error of the estimate from 4 × 20000 draws had standard
// deviation 1.1%, 1.8% and 5.0% for ρ = 0, 0.5 and 0.9 (bias under 0.6%);
// the tolerances are five of those.
func TestESSOfAR1(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ rho, tol float64 }{{0, 0.055}, {0.5, 0.09}, {0.9, 0.25}} {
		x := ar1(rng, 4, 20000, c.rho)
		want := 80000 * (1 - c.rho) / (1 + c.rho)
		for name, got := range map[string]float64{"mean": ESSMean(x), "bulk": ESSBulk(x)} {
			if math.Abs(got/want-1) > c.tol {
				t.Errorf("ρ = %g: %s ESS = %.0f, want %.0f within %g%%", c.rho, name, got, want, 100*c.tol)
			}
		}
		if r := Rhat(x); r > 1.01 {
			t.Errorf("ρ = %g, mixing chains: R̂ = %.4f > 1.01", c.rho, r)
		}
	}
}

// One chain is split in two, so a single chain that drifts is caught: its
// halves disagree. The same number of draws without the drift passes.
func TestOneChainIsSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := ar1(rng, 1, 4000, 0)
	if r := Rhat(x); r > 1.01 {
		t.Fatalf("stationary chain: R̂ = %.4f", r)
	}
	for i := range x[0] {
		x[0][i] += float64(i) / 4000 // a drift of one sd over the chain
	}
	if r := Rhat(x); r < 1.05 {
		t.Errorf("drifting chain: R̂ = %.4f, want it flagged", r)
	}
}

// Chains that agree in location but not in scale pass the bulk R̂ and fail
// the tail (folded) one: the reason the paper folds.
func TestTailRhatSeesScale(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := ar1(rng, 4, 2000, 0)
	for i := range x[3] {
		x[3][i] *= 3
	}
	s := Summarize(x)
	if s.RhatBulk > 1.01 || s.RhatTail < 1.05 || s.Rhat != s.RhatTail {
		t.Errorf("chain 4 three times wider: bulk R̂ %.4f, tail R̂ %.4f, R̂ %.4f", s.RhatBulk, s.RhatTail, s.Rhat)
	}
}

func TestUndefined(t *testing.T) {
	constant := [][]float64{{2, 2, 2, 2, 2, 2, 2, 2}, {2, 2, 2, 2, 2, 2, 2, 2}}
	s := Summarize(constant)
	if s.Mean != 2 || s.SD != 0 || s.Q05 != 2 || s.Q95 != 2 {
		t.Errorf("constant draws: %+v", s)
	}
	for name, v := range map[string]float64{"rhat": s.Rhat, "ess_bulk": s.ESSBulk, "ess_tail": s.ESSTail, "mcse_mean": s.MCSEMean, "mcse_q05": s.MCSEQ05} {
		if !math.IsNaN(v) {
			t.Errorf("constant draws: %s = %v, want NaN", name, v)
		}
	}
	if f := Recommended.Failures(s); len(f) != 3 || f[0] != "R̂ undefined" {
		t.Errorf("constant draws fail %q", f)
	}
	bad := [][]float64{{1, 2, math.Inf(1), 4, 5, 6}}
	if s := Summarize(bad); !math.IsNaN(s.Mean) || !math.IsNaN(s.Rhat) {
		t.Errorf("non-finite draw: %+v", s)
	}
	// Too short to split into chains of ≥ 3 draws: no ESS, but R̂ exists.
	short := [][]float64{{1, 3, 2, 5}, {4, 1, 2, 0}}
	if s := Summarize(short); !math.IsNaN(s.ESSBulk) || math.IsNaN(s.Rhat) {
		t.Errorf("2 chains × 4 draws: ESS %v, R̂ %v", s.ESSBulk, s.Rhat)
	}
}

func TestShapePanics(t *testing.T) {
	for name, x := range map[string][][]float64{
		"no chains": nil, "no draws": {{}}, "ragged": {{1, 2, 3}, {1, 2}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			Summarize(x)
		}()
	}
}

func TestQuantile7(t *testing.T) {
	x := []float64{1, 2, 4, 8, 16}
	for _, c := range []struct{ p, want float64 }{{0.05, 1.2}, {0.5, 4}, {0.95, 14.4}, {0.3, 2.4}} {
		if got := quantile7(x, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("quantile7(%g) = %v, want %v (R: quantile(c(1,2,4,8,16), %g))", c.p, got, c.want, c.p)
		}
	}
}

// SummarizeChains summarises each column as Summarize does, bit for bit,
// whatever the number of cores.
func TestSummarizeChains(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const chains, draws, d = 3, 600, 5
	ms := make([]*mat.Dense, chains)
	cols := make([][][]float64, d)
	for j := range cols {
		cols[j] = ar1(rng, chains, draws, 0.3*float64(j)-0.3, 0, float64(j)/10)
	}
	for c := range ms {
		ms[c] = mat.NewDense(draws, d, nil)
		for j := range d {
			ms[c].SetCol(j, cols[j][c])
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 4} {
		runtime.GOMAXPROCS(procs)
		got, err := SummarizeChains(ms)
		if err != nil {
			t.Fatal(err)
		}
		for j := range d {
			if want := Summarize(cols[j]); fmt.Sprint(got[j]) != fmt.Sprint(want) {
				t.Errorf("GOMAXPROCS %d, column %d: %+v, Summarize %+v", procs, j, got[j], want)
			}
		}
	}
	if _, err := SummarizeChains(nil); err == nil {
		t.Error("no chains: no error")
	}
	_, err := SummarizeChains([]*mat.Dense{ms[0], mat.NewDense(draws-1, d, nil)})
	if err == nil || !strings.Contains(err.Error(), "chain 2 has 599×5") {
		t.Errorf("unequal chains: error %v", err)
	}
}

func TestWriteCSVAndTable(t *testing.T) {
	rows := []Summary{
		{Mean: 0.1, SD: 1, Q05: -1.6, Q50: 0.1, Q95: 1.7, MCSEMean: 0.02, ESSBulk: 1883.23, ESSTail: 1897.1, Rhat: 1.00003},
		{Mean: math.NaN(), Rhat: math.NaN(), ESSBulk: math.NaN()},
	}
	names := Names("theta", 2)
	var b bytes.Buffer
	if err := WriteCSV(&b, names, rows); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recs[0], ","); got != "param,mean,sd,q05,q50,q95,mcse_mean,ess_bulk,ess_tail,rhat" {
		t.Errorf("header %q", got)
	}
	if got := strings.Join(recs[1], ","); got != "theta[1],0.1,1,-1.6,0.1,1.7,0.02,1883.23,1897.1,1.00003" {
		t.Errorf("row 1 %q", got)
	}
	if recs[2][0] != "theta[2]" || recs[2][1] != "NaN" || recs[2][9] != "NaN" {
		t.Errorf("row 2 %q", recs[2])
	}
	// ReadCSV reads every number back exactly, NaN included.
	b.Reset()
	WriteCSV(&b, names, rows)
	gotNames, gotRows, err := ReadCSV(&b)
	if err != nil || !slices.Equal(gotNames, names) || len(gotRows) != 2 ||
		gotRows[0] != rows[0] || !math.IsNaN(gotRows[1].Mean) || !math.IsNaN(gotRows[1].Rhat) || gotRows[1].SD != 0 {
		t.Errorf("ReadCSV: %q %+v, %v", gotNames, gotRows, err)
	}
	for _, bad := range []string{"param,mean\ntheta[1],1\n", strings.Join(CSVHeader, ",") + "\ntheta[1],x,1,1,1,1,1,1,1,1\n"} {
		if _, _, err := ReadCSV(strings.NewReader(bad)); err == nil {
			t.Errorf("ReadCSV(%q): no error", bad)
		}
	}
	b.Reset()
	if err := WriteTable(&b, names, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 3 || len(lines[0]) != len(lines[1]) || !strings.Contains(lines[1], " 1883 ") || !strings.HasSuffix(lines[1], "1.0000") {
		t.Errorf("table:\n%s", b.String())
	}
}

func TestFailures(t *testing.T) {
	ok := Summary{Rhat: 1.01, ESSBulk: 400, ESSTail: 400}
	if f := Recommended.Failures(ok); f != nil {
		t.Errorf("at the thresholds: %q", f)
	}
	bad := Summary{Rhat: 1.052, ESSBulk: 57.2, ESSTail: 400}
	if f := strings.Join(Recommended.Failures(bad), "; "); f != "R̂ 1.052 > 1.01; bulk ESS 57 < 400" {
		t.Errorf("failures %q", f)
	}
}

// BenchmarkSummarizeChains: 4 chains × 20000 draws × 30 parameters.
func BenchmarkSummarizeChains(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	const chains, draws, d = 4, 20000, 30
	ms := make([]*mat.Dense, chains)
	for c := range ms {
		ms[c] = mat.NewDense(draws, d, nil)
		for j := range d {
			ms[c].SetCol(j, ar1(rng, 1, draws, 0.9)[0])
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := SummarizeChains(ms); err != nil {
			b.Fatal(err)
		}
	}
}
