package results

import (
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat"

	"github.com/wcmc-project/wcmc/runner"
)

// SummaryRow summarises the trials of one (scheme, x, metric): the mean,
// the sample standard deviation and the empirical 5% and 95% quantiles of
// the N values.
type SummaryRow struct {
	Scheme   string
	XName    string
	X        float64
	Point    int // index of X in the sweep list
	Metric   string
	Mean     float64
	SD       float64 // sample standard deviation (n − 1); 0 for one value; not in ID.summary.csv
	Q05, Q95 float64
	N        int
}

// Summarize returns one row per (scheme, x, metric) that has values,
// ordered by scheme (Spec.Schemes order), then x (sweep order), then metric
// (Spec.Metrics order). Mean is the sample mean; Q05 and Q95 are
// stat.Quantile with stat.Empirical on the sorted values: the smallest value
// at or above that fraction of the values. A NaN value makes the row's
// mean and quantiles NaN.
func Summarize(res *runner.Result) []SummaryRow {
	spec := res.Spec
	type key struct {
		scheme, metric string
		point          int
	}
	vals := map[key][]float64{}
	xs := res.Values.XList()
	for _, t := range res.Tasks {
		for _, r := range t.Rows {
			k := key{r.Scheme, r.Metric, t.Point}
			vals[k] = append(vals[k], r.Value)
		}
	}
	var out []SummaryRow
	for _, s := range spec.Schemes {
		for pi, x := range xs {
			for _, m := range spec.Metrics {
				v := vals[key{s, m, pi}]
				if len(v) == 0 {
					continue
				}
				row := SummaryRow{Scheme: s, XName: spec.X, X: x, Point: pi, Metric: m, N: len(v)}
				if slices.ContainsFunc(v, math.IsNaN) {
					row.Mean, row.SD, row.Q05, row.Q95 = math.NaN(), math.NaN(), math.NaN(), math.NaN()
				} else {
					sorted := slices.Clone(v)
					sort.Float64s(sorted)
					row.Mean = stat.Mean(v, nil)
					if len(v) > 1 {
						row.SD = stat.StdDev(v, nil)
					}
					row.Q05 = stat.Quantile(0.05, stat.Empirical, sorted, nil)
					row.Q95 = stat.Quantile(0.95, stat.Empirical, sorted, nil)
				}
				out = append(out, row)
			}
		}
	}
	return out
}
