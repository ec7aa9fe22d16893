package diagnostics

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// readCSV reads a CSV file: its header and its rows.
func readCSV(t *testing.T, path string) (header []string, rows [][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs[0], recs[1:]
}

func parse(t *testing.T, s string) float64 {
	t.Helper()
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// readDraws reads testdata/draws-NAME.csv (one column per chain) as chains.
func readDraws(t *testing.T, name string) [][]float64 {
	t.Helper()
	header, rows := readCSV(t, filepath.Join("testdata", "draws-"+name+".csv"))
	x := make([][]float64, len(header))
	for _, r := range rows {
		for c, s := range r {
			x[c] = append(x[c], parse(t, s))
		}
	}
	return x
}

// referenceTol is the relative tolerance of the comparison with posterior
// (absolute where posterior's value is 0). Both compute the same formulas in
// float64 from the very same doubles and differ only in rounding (FFT
// algorithm and length, summation order, the normal and beta quantile
// routines): the largest difference is 1.9e-14. A change of definition
// shows up far above 1e-12: the rank offset 1/2 instead of 3/8 moves
// values by 4e-8 and more, Geyer's monotone step, the split point of an
// odd chain, Φ(−1) in the quantile MCSE and the ESS cap by 3e-5 to 6.
const referenceTol = 1e-12

func TestAgainstPosteriorPackage(t *testing.T) {
	header, rows := readCSV(t, filepath.Join("testdata", "reference.csv"))
	if len(rows) < 7 {
		t.Fatalf("reference.csv has %d data sets", len(rows))
	}
	worst := 0.0
	for _, r := range rows {
		name := r[0]
		x := readDraws(t, name)
		s := Summarize(x)
		got := map[string]float64{
			"mean": s.Mean, "sd": s.SD, "q05": s.Q05, "q50": s.Q50, "q95": s.Q95,
			"rhat": s.Rhat, "rhat_bulk": s.RhatBulk, "rhat_tail": s.RhatTail,
			"ess_bulk": s.ESSBulk, "ess_tail": s.ESSTail, "ess_basic": s.ESSMean,
			"mcse_mean": s.MCSEMean, "mcse_q05": s.MCSEQ05, "mcse_q95": s.MCSEQ95,
			// The exported one-quantity functions, too.
			"ess_q05": ESSQuantile(x, 0.05), "ess_q95": ESSQuantile(x, 0.95),
		}
		single := map[string]float64{
			"rhat": Rhat(x), "rhat_bulk": RhatBulk(x), "rhat_tail": RhatTail(x),
			"ess_bulk": ESSBulk(x), "ess_tail": ESSTail(x), "ess_basic": ESSMean(x),
			"mcse_mean": MCSEMean(x), "mcse_q05": MCSEQuantile(x, 0.05), "mcse_q95": MCSEQuantile(x, 0.95),
		}
		for k, col := range header[1:] {
			want := parse(t, r[k+1])
			g, ok := got[col]
			if !ok {
				continue
			}
			d := math.Abs(g-want) / math.Max(math.Abs(want), 1e-300)
			if want == 0 {
				d = math.Abs(g)
			}
			worst = math.Max(worst, d)
			if !(d <= referenceTol) {
				t.Errorf("%s: %s = %.17g, posterior %.17g (relative difference %.2g)", name, col, g, want, d)
			}
			if one, ok := single[col]; ok && math.Float64bits(one) != math.Float64bits(g) {
				t.Errorf("%s: %s alone = %.17g, in Summarize %.17g", name, col, one, g)
			}
		}
	}
	t.Logf("largest relative difference from posterior: %.2g", worst)
}
