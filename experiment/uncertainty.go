package experiment

import (
	"maps"
	"slices"
	"strings"

	"github.com/wcmc-project/wcmc/metric"
	"github.com/wcmc-project/wcmc/runner"
)

// The uncertainty metrics (metric.Uncertainty) beside eq: err2, which
// cannot tell a good posterior from a point mass at its mean when the
// posterior is far from the origin: the mean error in posterior standard
// deviations, the relative covariance error, the reference mass in the
// samples' central 90% intervals and the relative 2-Wasserstein distance of
// Gaussian fits; and err2_scaled, err2 with each entry's error in the
// scale of its two coordinates, which entries of the reference second
// moment near zero cannot dominate. Each has a _fresh twin where
// err2_fresh exists, measured the same way on the learned map's output for
// fresh signals.

// uncertaintyMetrics are the metric names of metric.Uncertainty's fields,
// in their order.
var uncertaintyMetrics = []string{"mean_err", "cov_err", "coverage90", "w2", "err2_scaled"}

// uncertaintyLabels are the axis labels of uncertaintyMetrics.
var uncertaintyLabels = map[string]string{
	"mean_err":    "RMS error of the mean, in posterior standard deviations",
	"cov_err":     "relative covariance error (Frobenius norm)",
	"coverage90":  "posterior mass in the samples' central 90% intervals (ideal 0.9)",
	"w2":          "2-Wasserstein distance of Gaussian fits / √tr C",
	"err2_scaled": "second-order test error, each entry in the scale of its two coordinates",
}

// coverageMetrics are plotted on a linear y axis (runner.Spec.LinearY):
// coverage90 lies in [0, 1] with 0.9 ideal, a value to read off directly.
var coverageMetrics = []string{"coverage90", "coverage90_fresh"}

// withUncertainty returns metrics followed by the uncertainty metrics, each
// followed by its _fresh twin when fresh is set; labels gains their labels,
// the twins' ending in freshNote (e.g. "on fresh signals").
func withUncertainty(metrics []string, labels map[string]string, fresh bool, freshNote string) ([]string, map[string]string) {
	out := slices.Clone(metrics)
	l := maps.Clone(labels)
	if l == nil {
		l = map[string]string{}
	}
	for _, m := range uncertaintyMetrics {
		out = append(out, m)
		l[m] = uncertaintyLabels[m]
		if fresh {
			l[m] += ", in-sample"
			out = append(out, m+"_fresh")
			l[m+"_fresh"] = uncertaintyLabels[m] + ", " + freshNote
		}
	}
	return out, l
}

// uncertaintyOf returns the uncertainty metrics (and their _fresh twins)
// among metrics: those drawn under the main protocol only
// (runner.Spec.MainOnly), since the paper's claims read err2 and KL.
func uncertaintyOf(metrics []string) []string {
	var out []string
	for _, m := range metrics {
		if slices.Contains(uncertaintyMetrics, strings.TrimSuffix(m, "_fresh")) {
			out = append(out, m)
		}
	}
	return out
}

// linearY returns the metrics of metrics plotted on a linear y axis.
func linearY(metrics []string) []string {
	var out []string
	for _, m := range metrics {
		if slices.Contains(coverageMetrics, m) {
			out = append(out, m)
		}
	}
	return out
}

// idealValues returns the ideal values of the metrics of metrics
// (runner.Spec.Ideal): 0.9 for coverage90 and its twin.
func idealValues(metrics []string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range linearY(metrics) {
		out[m] = 0.9
	}
	return out
}

// shareBounds returns the bounds of the metrics of metrics that are
// shares (runner.Spec.Bounds): [0, 1] for coverage90 and its twin.
func shareBounds(metrics []string) map[string][2]float64 {
	out := map[string][2]float64{}
	for _, m := range linearY(metrics) {
		out[m] = [2]float64{0, 1}
	}
	return out
}

// uncertaintyRows returns the rows of u for scheme, the metric names
// ending in suffix ("" or "_fresh"), at checkpoint x (0 off a trajectory).
func uncertaintyRows(scheme, suffix string, u metric.Uncertainty, x float64) []runner.Row {
	vals := []float64{u.MeanErr, u.CovErr, u.Coverage90, u.W2, u.Err2Scaled}
	rows := make([]runner.Row, len(vals))
	for i, v := range vals {
		rows[i] = runner.Row{Scheme: scheme, Metric: uncertaintyMetrics[i] + suffix, Value: v, X: x}
	}
	return rows
}
