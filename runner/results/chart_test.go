package results_test

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/experiment"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/results"
	"github.com/wcmc-project/wcmc/scheme"
)

// protocolSpec is a spec whose results name WVCMC under three protocols,
// and its summary: two sweep points, four trials each.
func protocolSpec(t *testing.T, withDefault bool) (runner.Spec, runner.Values, []results.SummaryRow) {
	t.Helper()
	wv := []string{scheme.WVCMCOMA, scheme.Under(scheme.WVCMCOMA, scheme.Paper), scheme.Under(scheme.WVCMCOMA, scheme.Converged)}
	if !withDefault {
		wv = wv[1:]
	}
	spec := runner.Spec{ID: "demo", Figure: "Fig. 9", Description: "a demo", X: "snr_db", XLabel: "SNR (dB)",
		Metrics: []string{"err2", "err2_fresh"}, MetricLabel: map[string]string{"err2": "second-order test error, in-sample"},
		Schemes: append([]string{scheme.GCMC, scheme.WGCMCOMA}, wv...),
		Params:  []runner.Param{{Name: "snr_db", Kind: runner.Float, Default: "-10,5,30"}},
		Trials:  4, Run: func(runner.Task) (runner.TaskOutput, error) { return runner.TaskOutput{}, nil }}
	v, _, err := runner.Resolve(spec, nil, false, 4)
	if err != nil {
		t.Fatal(err)
	}
	var rows []results.SummaryRow
	for _, s := range spec.Schemes {
		for p, x := range v.XList() {
			for _, m := range spec.Metrics {
				rows = append(rows, results.SummaryRow{Scheme: s, XName: spec.X, X: x, Point: p, Metric: m,
					Mean: 0.1 * float64(p+1), SD: 0.01, Q05: 0.05, Q95: 0.5, N: 4})
			}
		}
	}
	return spec, v, rows
}

// Each metric has a main figure (the default protocol) and one figure per
// other protocol; without the default protocol, the first run is main.
func TestFiguresPerProtocol(t *testing.T) {
	spec, _, rows := protocolSpec(t, true)
	var got []string
	for _, f := range results.Figures(spec, rows) {
		got = append(got, f.Base+":"+string(f.Protocol))
		if f.Main != (f.Protocol == scheme.Default) {
			t.Errorf("%s: Main %v", f.Base, f.Main)
		}
	}
	want := []string{"demo:default", "demo.paper:paper", "demo.converged:converged",
		"demo.err2_fresh:default", "demo.err2_fresh.paper:paper", "demo.err2_fresh.converged:converged"}
	if !slices.Equal(got, want) {
		t.Errorf("figures %q, want %q", got, want)
	}

	spec, _, rows = protocolSpec(t, false)
	figs := results.Figures(spec, rows)
	if figs[0].Base != "demo" || figs[0].Protocol != scheme.Paper || !figs[0].Main || figs[1].Base != "demo.converged" {
		t.Errorf("without the default protocol: %+v", figs[:2])
	}

	// No variational scheme: one figure per metric.
	spec.Schemes = spec.Schemes[:2]
	var plain []results.SummaryRow
	for _, r := range rows {
		if slices.Contains(spec.Schemes, r.Scheme) {
			plain = append(plain, r)
		}
	}
	if figs := results.Figures(spec, plain); len(figs) != 2 || figs[0].Protocol != "" || figs[1].Base != "demo.err2_fresh" {
		t.Errorf("without WVCMC: %+v", figs)
	}

	// A MainOnly metric has its main figure only.
	spec, _, rows = protocolSpec(t, true)
	spec.MainOnly = []string{"err2_fresh"}
	got = nil
	for _, f := range results.Figures(spec, rows) {
		got = append(got, f.Base+":"+string(f.Protocol))
	}
	want = []string{"demo:default", "demo.paper:paper", "demo.converged:converged", "demo.err2_fresh:default"}
	if !slices.Equal(got, want) {
		t.Errorf("with err2_fresh MainOnly: figures %q, want %q", got, want)
	}
}

// A protocol's figure shows the schemes that learn no map and WVCMC under
// that protocol, named as the paper does; the caption names the protocol
// and the band.
func TestChartLegendAndCaption(t *testing.T) {
	spec, v, rows := protocolSpec(t, true)
	figs := results.Figures(spec, rows)
	for _, c := range []struct {
		f     results.Figure
		names []string
	}{
		{figs[0], []string{"GCMC", "WGCMC-OMA", "WVCMC-OMA"}},
		{figs[1], []string{"GCMC", "WGCMC-OMA", "WVCMC-OMA (paper SGD)"}},
		{figs[2], []string{"GCMC", "WGCMC-OMA", "WVCMC-OMA (converged)"}},
	} {
		ch := results.Chart(&runner.Result{Spec: spec, Values: v}, rows, c.f, results.Options{})
		var names []string
		for _, s := range ch.Series {
			names = append(names, s.Name)
		}
		if !slices.Equal(names, c.names) {
			t.Errorf("%s: legend %q, want %q", c.f.Base, names, c.names)
		}
		if !strings.Contains(ch.Caption, string(c.f.Protocol)) || !strings.Contains(ch.Caption, "95% confidence interval of the mean") ||
			!strings.Contains(ch.Caption, "mean over 4 trials") {
			t.Errorf("%s: caption %q", c.f.Base, ch.Caption)
		}
		if !slices.Equal(ch.XTicks, []float64{-10, 5, 30}) {
			t.Errorf("%s: x ticks %v, want the swept points", c.f.Base, ch.XTicks)
		}
		var buf bytes.Buffer
		if _, err := ch.Encode(&buf, "svg"); err != nil {
			t.Fatal(err)
		}
		texts := buf.String()
		for _, n := range c.names {
			if !strings.Contains(texts, n) {
				t.Errorf("%s: the SVG lacks the legend entry %q", c.f.Base, n)
			}
		}
		for _, bad := range []string{"wvcmc", "eq:"} {
			if strings.Contains(texts, bad) {
				t.Errorf("%s: the SVG shows %q", c.f.Base, bad)
			}
		}
		for _, want := range []string{"second-order test error, in-sample", "SNR (dB)", "−10", "5", "30"} {
			if !strings.Contains(texts, want) {
				t.Errorf("%s: the SVG lacks %q", c.f.Base, want)
			}
		}
	}
	spread := results.Chart(&runner.Result{Spec: spec, Values: v}, rows, figs[0], results.Options{Band: results.BandSpread})
	if !strings.Contains(spread.Caption, "5–95% range of the trials") || spread.Series[0].Lo[0] != 0.05 || spread.Series[0].Hi[0] != 0.5 {
		t.Errorf("spread band: caption %q, band [%g, %g]", spread.Caption, spread.Series[0].Lo[0], spread.Series[0].Hi[0])
	}
}

// The confidence band is mean ± t_{0.975, n−1} s/√n, absent with one
// trial or, on a log axis, where it reaches zero.
func TestChartConfidenceBand(t *testing.T) {
	spec, v, rows := protocolSpec(t, true)
	for i := range rows {
		rows[i].Mean, rows[i].SD = 1, 0.5
		switch rows[i].Point {
		case 1:
			rows[i].N = 1
		case 2:
			rows[i].SD = 5
		}
	}
	ch := results.Chart(&runner.Result{Spec: spec, Values: v}, rows, results.Figures(spec, rows)[0], results.Options{})
	s := ch.Series[0]
	const t3 = 3.182446305284263 // t_{0.975, 3}
	if h := t3 * 0.5 / 2; math.Abs(s.Lo[0]-(1-h)) > 1e-12 || math.Abs(s.Hi[0]-(1+h)) > 1e-12 {
		t.Errorf("band [%v, %v], want 1 ∓ %v", s.Lo[0], s.Hi[0], h)
	}
	for _, p := range []int{1, 2} {
		if !math.IsNaN(s.Lo[p]) || !math.IsNaN(s.Hi[p]) {
			t.Errorf("point %d: band [%v, %v], want none", p, s.Lo[p], s.Hi[p])
		}
	}
	if !strings.Contains(ch.Caption, "1–4 trials") || !strings.Contains(ch.Caption, "none at one trial, nor where it reaches zero") {
		t.Errorf("caption %q", ch.Caption)
	}
}

// A bounded metric's bands are clipped to its range, and the caption says
// so.
func TestChartBandClippedToBounds(t *testing.T) {
	spec, v, rows := protocolSpec(t, true)
	m := spec.Metrics[0]
	spec.Bounds = map[string][2]float64{m: {0, 1}}
	spec.LogX = false
	spec.LinearY = append(spec.LinearY, m)
	for i := range rows {
		rows[i].Mean, rows[i].SD, rows[i].N = 0.9, 0.5, 2
	}
	ch := results.Chart(&runner.Result{Spec: spec, Values: v}, rows, results.Figures(spec, rows)[0], results.Options{})
	for _, s := range ch.Series {
		for i := range s.Lo {
			if s.Lo[i] < 0 || s.Hi[i] > 1 {
				t.Errorf("%s: band [%v, %v] outside [0, 1]", s.Name, s.Lo[i], s.Hi[i])
			}
		}
	}
	if !strings.Contains(ch.Caption, "Bands clipped to the metric's range [0, 1]") {
		t.Errorf("caption %q", ch.Caption)
	}
}

func TestSchemeLabel(t *testing.T) {
	for name, want := range map[string]string{
		"gcmc": "GCMC", "wgcmc-noma": "WGCMC-NOMA", "wvcmc-noma": "WVCMC-NOMA", "cmc-noiseless": "noiseless CMC",
		"best-single": "best single worker", "sgld": "SGLD", "wvcmc-oma.paper": "WVCMC-OMA (paper SGD)",
		"wvcmc-noma.converged": "WVCMC-NOMA (converged)", "other": "other", "wvcmc-oma.unknown": "wvcmc-oma.unknown",
		"wgcmc-oma-csi": "WGCMC-OMA, CSI-aware", "wgcmc-noma-csi": "WGCMC-NOMA, CSI-aware",
	} {
		if got := results.SchemeLabel(name); got != want {
			t.Errorf("SchemeLabel(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestParseBand(t *testing.T) {
	for _, name := range results.Bands {
		b, err := results.ParseBand(name)
		if err != nil || b.String() != name {
			t.Errorf("ParseBand(%q) = %v, %v", name, b, err)
		}
	}
	if _, err := results.ParseBand("iqr"); err == nil || !strings.Contains(err.Error(), "ci, spread") {
		t.Errorf("ParseBand(iqr): %v", err)
	}
}

// Every experiment's axis labels are words: no equation labels of the
// paper's source, no metric identifiers.
func TestAxisLabelsInWords(t *testing.T) {
	for _, spec := range experiment.All() {
		for _, m := range spec.Metrics {
			l := results.MetricLabel(spec, m)
			if strings.Contains(l, "eq:") || strings.Contains(l, "err2") || strings.Contains(l, "_") {
				t.Errorf("%s: the label of %s is %q", spec.ID, m, l)
			}
		}
		if spec.XLabel == "" || strings.Contains(spec.XLabel, "_") {
			t.Errorf("%s: x label %q", spec.ID, spec.XLabel)
		}
	}
}

// A metric without summary rows (added to the experiment after a stored
// result was computed) has no figure; a metric with an ideal value
// (Spec.Ideal) gets a guide line at it and a caption sentence saying so.
func TestFiguresOfAbsentMetricsAndIdealValues(t *testing.T) {
	spec, v, rows := protocolSpec(t, true)
	spec.Metrics = append(spec.Metrics, "coverage90", "w2")
	spec.LinearY = []string{"coverage90"}
	spec.Ideal = map[string]float64{"coverage90": 0.9}
	for _, r := range rows {
		if r.Metric == "err2" {
			r.Metric = "coverage90"
			rows = append(rows, r)
		}
	}
	for _, f := range results.Figures(spec, rows) {
		if f.Metric == "w2" {
			t.Errorf("a figure of w2, which has no rows: %+v", f)
		}
	}
	main := results.Figure{Metric: "coverage90", Protocol: scheme.Default, Main: true, Base: "demo.coverage90"}
	ch := results.Chart(&runner.Result{Spec: spec, Values: v}, rows, main, results.Options{})
	if ch.Guide == nil || ch.Guide.Y != 0.9 || ch.LogY || !strings.Contains(ch.Caption, "Thin black line: the ideal value, 0.9.") {
		t.Errorf("coverage90: guide %+v, log y %v, caption %q", ch.Guide, ch.LogY, ch.Caption)
	}
	main.Metric, main.Base = "err2", "demo"
	if ch := results.Chart(&runner.Result{Spec: spec, Values: v}, rows, main, results.Options{}); ch.Guide != nil || strings.Contains(ch.Caption, "ideal") {
		t.Errorf("err2 has no ideal value: guide %+v, caption %q", ch.Guide, ch.Caption)
	}
}
