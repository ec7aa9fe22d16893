package diagnostics

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"gonum.org/v1/gonum/mat"
)

// SummarizeChains returns the Summary of every column of the draws: chain c
// is the matrix chains[c] with one draw per row (draws × d, the project's
// samples-as-rows layout), and column j of every chain holds parameter j.
// Parameters are summarised in parallel; the result does not depend on the
// number of cores. It returns an error if there are no chains or the
// chains differ in shape.
func SummarizeChains(chains []*mat.Dense) ([]Summary, error) {
	if len(chains) == 0 {
		return nil, fmt.Errorf("diagnostics: no chains")
	}
	N, d := chains[0].Dims()
	for c, m := range chains[1:] {
		if r, k := m.Dims(); r != N || k != d {
			return nil, fmt.Errorf("diagnostics: chain %d has %d×%d draws, chain 1 has %d×%d (want equal shapes)", c+2, r, k, N, d)
		}
	}
	out := make([]Summary, d)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), d) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var w workspace
			x := make([][]float64, len(chains))
			for c := range x {
				x[c] = make([]float64, N)
			}
			for j := range jobs {
				for c, m := range chains {
					mat.Col(x[c], j, m)
				}
				out[j] = w.summarize(x)
			}
		}()
	}
	for j := range d {
		jobs <- j
	}
	close(jobs)
	wg.Wait()
	return out, nil
}

// Names returns the parameter names base[1], …, base[d] (1-based, as the R
// package posterior names the elements of a vector).
func Names(base string, d int) []string {
	out := make([]string, d)
	for j := range out {
		out[j] = fmt.Sprintf("%s[%d]", base, j+1)
	}
	return out
}

// CSVHeader is the header row of WriteCSV.
var CSVHeader = []string{"param", "mean", "sd", "q05", "q50", "q95", "mcse_mean", "ess_bulk", "ess_tail", "rhat"}

// WriteCSV writes one row per parameter under CSVHeader, numbers in the
// shortest form that reads back exactly (NaN for undefined values). It
// panics if names and rows differ in length.
func WriteCSV(w io.Writer, names []string, rows []Summary) error {
	if len(names) != len(rows) {
		panic("diagnostics: names and rows differ in length")
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for i, s := range rows {
		rec := []string{names[i], g(s.Mean), g(s.SD), g(s.Q05), g(s.Q50), g(s.Q95), g(s.MCSEMean), g(s.ESSBulk), g(s.ESSTail), g(s.Rhat)}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadCSV reads back what WriteCSV wrote: the parameter names and, per
// row, the Summary fields the table holds (the others are zero). It
// returns an error naming the line when the header is not CSVHeader or a
// number does not read.
func ReadCSV(r io.Reader) (names []string, rows []Summary, err error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(CSVHeader)
	header, err := cr.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("header: %w", err)
	}
	if strings.Join(header, ",") != strings.Join(CSVHeader, ",") {
		return nil, nil, fmt.Errorf("header %q, want %q", strings.Join(header, ","), strings.Join(CSVHeader, ","))
	}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return names, rows, nil
		}
		if err != nil {
			return nil, nil, err
		}
		var v [9]float64
		for i := range v {
			if v[i], err = strconv.ParseFloat(rec[i+1], 64); err != nil {
				return nil, nil, fmt.Errorf("line %d, %s: %q is not a number", line, CSVHeader[i+1], rec[i+1])
			}
		}
		names = append(names, rec[0])
		rows = append(rows, Summary{Mean: v[0], SD: v[1], Q05: v[2], Q50: v[3], Q95: v[4], MCSEMean: v[5], ESSBulk: v[6], ESSTail: v[7], Rhat: v[8]})
	}
}

// WriteTable writes the columns of WriteCSV as an aligned table for
// reading: four significant digits, ESS rounded to whole draws, R̂ to four
// decimals. It panics if names and rows differ in length.
func WriteTable(w io.Writer, names []string, rows []Summary) error {
	if len(names) != len(rows) {
		panic("diagnostics: names and rows differ in length")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(CSVHeader, "\t")+"\t")
	for i, s := range rows {
		fmt.Fprintf(tw, "%s\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.2g\t%s\t%s\t%.4f\t\n",
			names[i], s.Mean, s.SD, s.Q05, s.Q50, s.Q95, s.MCSEMean, whole(s.ESSBulk), whole(s.ESSTail), s.Rhat)
	}
	return tw.Flush()
}

func whole(x float64) string {
	if math.IsNaN(x) {
		return "NaN"
	}
	return strconv.FormatFloat(math.Round(x), 'f', 0, 64)
}

// Thresholds are the limits past which draws should not be trusted.
type Thresholds struct {
	MaxRhat float64 // R̂ above MaxRhat fails
	MinESS  float64 // a bulk or tail ESS below MinESS fails
}

// Recommended is Vehtari et al.'s (2021) rule: use the draws only when
// R̂ ≤ 1.01 and the bulk and tail ESS are ≥ 400 (for four chains, 100 per
// chain).
var Recommended = Thresholds{MaxRhat: 1.01, MinESS: 400}

// Failures says in words what s fails, e.g. "R̂ 1.052 > 1.01" or
// "bulk ESS 57 < 400"; undefined (NaN) values fail. It returns nil when s
// passes.
func (t Thresholds) Failures(s Summary) []string {
	var out []string
	check := func(what string, x float64, ok bool, msg string) {
		switch {
		case math.IsNaN(x):
			out = append(out, what+" undefined")
		case !ok:
			out = append(out, msg)
		}
	}
	check("R̂", s.Rhat, s.Rhat <= t.MaxRhat, fmt.Sprintf("R̂ %.4g > %g", s.Rhat, t.MaxRhat))
	check("bulk ESS", s.ESSBulk, s.ESSBulk >= t.MinESS, fmt.Sprintf("bulk ESS %s < %g", whole(s.ESSBulk), t.MinESS))
	check("tail ESS", s.ESSTail, s.ESSTail >= t.MinESS, fmt.Sprintf("tail ESS %s < %g", whole(s.ESSTail), t.MinESS))
	return out
}
