package results

import (
	"slices"

	"wcmc/figure"
	"wcmc/runner"
)

// FigureBase returns the file name, without extension, of the figure of
// metric: ID for the main metric (the first of Spec.Metrics), ID.<metric>
// for the others. WriteFiles writes FigureBase + ".png" and ".svg".
func FigureBase(spec runner.Spec, metric string) string {
	if metric == spec.Metrics[0] {
		return spec.ID
	}
	return spec.ID + "." + metric
}

// Chart builds the figure of one metric from summary rows: one series per
// scheme (Spec.Schemes order) of the mean with the 5–95% band, on a log y
// axis unless the metric is in Spec.LinearY.
func Chart(spec runner.Spec, v runner.Values, summary []SummaryRow, metric string) figure.Chart {
	title := spec.ID
	if spec.Figure != "" {
		title = spec.Figure + ": " + spec.ID
	}
	if metric != spec.Metrics[0] {
		title += " (" + metric + ")"
	}
	if spec.Caption != nil {
		if c := spec.Caption(v); c != "" {
			title += "\n" + c
		}
	}
	ylabel := spec.MetricLabel[metric]
	if ylabel == "" {
		ylabel = metric
	}
	xlabel := spec.XLabel
	if xlabel == "" {
		xlabel = spec.X
	}
	c := figure.Chart{Title: title, XLabel: xlabel, YLabel: ylabel, LogX: spec.LogX,
		LogY: !slices.Contains(spec.LinearY, metric)}
	for _, s := range spec.Schemes {
		var ser figure.Series
		for _, r := range summary {
			if r.Scheme == s && r.Metric == metric {
				ser.X = append(ser.X, r.X)
				ser.Mean = append(ser.Mean, r.Mean)
				ser.Lo = append(ser.Lo, r.Q05)
				ser.Hi = append(ser.Hi, r.Q95)
			}
		}
		if len(ser.X) > 0 {
			ser.Name = s
			c.Series = append(c.Series, ser)
		}
	}
	return c
}
