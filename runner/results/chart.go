package results

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
	"gonum.org/v1/plot/vg"

	"github.com/wcmc-project/wcmc/figure"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

// Band selects what the shaded band around each mean shows.
type Band int

const (
	// BandCI is the 95% confidence interval of the mean over the trials,
	// mean ± t_{0.975, n−1} s/√n (Student t, s the sample standard
	// deviation); none at a point with fewer than two trials.
	BandCI Band = iota
	// BandSpread is the spread of the trials: their empirical 5% and 95%
	// quantiles (the q05 and q95 of ID.summary.csv).
	BandSpread
)

// Bands names the bands as ParseBand reads them.
var Bands = []string{"ci", "spread"}

// ParseBand reads a band's name: "ci" or "spread".
func ParseBand(s string) (Band, error) {
	for i, n := range Bands {
		if s == n {
			return Band(i), nil
		}
	}
	return 0, fmt.Errorf("unknown band %q (known: %s)", s, strings.Join(Bands, ", "))
}

func (b Band) String() string { return Bands[b] }

// describe says what the band shows, for a caption.
func (b Band) describe() string {
	if b == BandSpread {
		return "5–95% range of the trials"
	}
	return "95% confidence interval of the mean"
}

// Options are the choices a figure leaves to its reader.
type Options struct {
	// Band is the band around each mean; BandCI when zero. A trajectory
	// experiment's figures (Spec.Trajectory) always draw medians with the
	// 5–95% range of the trials.
	Band Band
	// Removed, when set, is told the path of each temporary file that an
	// earlier, killed write of the same files left and that is removed
	// before writing.
	Removed func(path string)
}

// ciLevel is the coverage of BandCI.
const ciLevel = 0.95

// interval returns the band of a summary row.
func (b Band) interval(r SummaryRow) (lo, hi float64) {
	if b == BandSpread {
		return r.Q05, r.Q95
	}
	if r.N < 2 {
		return math.NaN(), math.NaN() // no band
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(r.N - 1)}.Quantile(1 - (1-ciLevel)/2)
	h := t * r.SD / math.Sqrt(float64(r.N))
	return r.Mean - h, r.Mean + h
}

// paperNames are the schemes' names in the paper's figures.
var paperNames = map[string]string{
	scheme.GCMC:       "GCMC",
	scheme.WGCMCOMA:   "WGCMC-OMA",
	scheme.WGCMCNOMA:  "WGCMC-NOMA",
	scheme.WVCMCOMA:   "WVCMC-OMA",
	scheme.WVCMCNOMA:  "WVCMC-NOMA",
	scheme.Noiseless:  "noiseless CMC",
	scheme.BestSingle: "best single worker",
	scheme.SGLD:       "SGLD",
	// The digital baselines (not in the paper, docs/BEYOND.md note 16).
	scheme.DigitalGCMC:      "digital GCMC",
	scheme.DigitalWGCMCOMA:  "digital WGCMC-OMA",
	scheme.DigitalWGCMCNOMA: "digital WGCMC-NOMA",
	scheme.DigitalWVCMCOMA:  "digital WVCMC-OMA",
	scheme.DigitalWVCMCNOMA: "digital WVCMC-NOMA",
	// The CSI-aware schemes (docs/MATH.md note 20).
	scheme.WGCMCOMACSI:  "WGCMC-OMA, CSI-aware",
	scheme.WGCMCNOMACSI: "WGCMC-NOMA, CSI-aware",
}

// protocolNames are the protocols' short names in legends.
var protocolNames = map[scheme.Protocol]string{
	scheme.Paper:     "paper SGD",
	scheme.Converged: "converged",
	scheme.Default:   "default",
}

// SchemeLabel returns the name of a result's scheme as the paper writes it,
// with the protocol of a variational scheme run under one other than the
// default: "wgcmc-oma" → "WGCMC-OMA", "wvcmc-oma.paper" → "WVCMC-OMA (paper
// SGD)". An unknown name is returned as it is.
//
// A scheme on the mean-centred link (scheme.CentredPrefix) is labelled
// as its counterpart, followed by ", centred".
func SchemeLabel(name string) string {
	base, p, ok := scheme.Split(name)
	if !ok {
		return name
	}
	bare, centred := strings.CutPrefix(base, scheme.CentredPrefix)
	label, known := paperNames[bare]
	if !known {
		label = bare
	}
	if centred {
		label += ", centred"
	}
	if p != scheme.Default {
		label += " (" + protocolNames[p] + ")"
	}
	return label
}

// styleOrder fixes each scheme's line style, whatever the figure it is in:
// a scheme looks the same in every figure, under every protocol.
var styleOrder = []string{scheme.GCMC, scheme.WGCMCOMA, scheme.WGCMCNOMA, scheme.WVCMCOMA,
	scheme.WVCMCNOMA, scheme.Noiseless, scheme.BestSingle, scheme.SGLD}

// styleOf returns the style of a result's scheme, or nil for a scheme of
// no fixed style. A digital baseline, "digital-" and the name of its
// analog counterpart, has the counterpart's colour and marker on a fine
// dotted line; a scheme on the mean-centred link (scheme.CentredPrefix)
// has them on a long-dashed line, a CSI-aware one (scheme.CSIAwareSuffix)
// on a dash-dotted line.
func styleOf(name string) *figure.Style {
	base, _, _ := scheme.Split(name)
	digital := scheme.IsDigital(base)
	aware := scheme.IsCSIAware(base)
	base, centred := strings.CutPrefix(base, scheme.CentredPrefix)
	base = strings.TrimSuffix(base, scheme.CSIAwareSuffix)
	i := slices.Index(styleOrder, strings.TrimPrefix(base, "digital-"))
	if i < 0 {
		return nil
	}
	s := figure.StyleOf(i)
	switch {
	case digital:
		s.Dashes = []vg.Length{vg.Points(1), vg.Points(2.5)}
	case centred:
		s.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	case aware:
		s.Dashes = []vg.Length{vg.Points(5), vg.Points(2), vg.Points(1), vg.Points(2)}
	}
	return &s
}

// MetricLabel returns the axis label of metric (Spec.MetricLabel, or the
// metric's name).
func MetricLabel(spec runner.Spec, metric string) string {
	if l := spec.MetricLabel[metric]; l != "" {
		return l
	}
	return metric
}

// Figure is one figure file of a result: the curves of one metric, with
// the variational schemes under one protocol.
type Figure struct {
	Metric string
	// Protocol is that of the WVCMC curves; "" when the figure has none.
	Protocol scheme.Protocol
	// Main marks the metric's main figure, FigureBase: the default
	// protocol when it was run, else the first run in scheme.Protocols
	// order. The other protocols' figures add ".protocol" to the name.
	Main bool
	Base string // file name without extension
}

// FigureBase returns the file name, without extension, of the main figure
// of metric: ID for the main metric (the first of Spec.Metrics), ID.<metric>
// for the others.
func FigureBase(spec runner.Spec, metric string) string {
	if metric == spec.Metrics[0] {
		return spec.ID
	}
	return spec.ID + "." + metric
}

// runProtocols returns the protocols under which some variational scheme
// has a summary row, in scheme.Protocols order.
func runProtocols(summary []SummaryRow) []scheme.Protocol {
	seen := map[scheme.Protocol]bool{}
	for _, r := range summary {
		if base, p, ok := scheme.Split(r.Scheme); ok && scheme.IsVariational(base) {
			seen[p] = true
		}
	}
	var out []scheme.Protocol
	for _, p := range scheme.Protocols {
		if seen[p] {
			out = append(out, p)
		}
	}
	return out
}

// Figures lists the figures of a result, metric by metric (Spec.Metrics
// order; a metric without summary rows, e.g. one added to the experiment
// after a stored result was computed, has none): the main one, holding every scheme that learns no map and the
// variational schemes under the default protocol (or, without it, the
// first protocol run), then, unless the metric is in Spec.MainOnly, one
// per other protocol run, named FigureBase.protocol (e.g. gauss-snr.paper,
// gauss-snr.err2_fresh.converged).
// Splitting the protocols keeps a figure to the paper's curves: ten
// overlapping curves and bands are unreadable.
func Figures(spec runner.Spec, summary []SummaryRow) []Figure {
	ps := runProtocols(summary)
	main := scheme.Default
	if len(ps) > 0 && !slices.Contains(ps, scheme.Default) {
		main = ps[0]
	}
	var out []Figure
	for _, m := range spec.Metrics {
		if !slices.ContainsFunc(summary, func(r SummaryRow) bool { return r.Metric == m }) {
			continue
		}
		base := FigureBase(spec, m)
		if len(ps) == 0 {
			out = append(out, Figure{Metric: m, Main: true, Base: base})
			continue
		}
		out = append(out, Figure{Metric: m, Protocol: main, Main: true, Base: base})
		if slices.Contains(spec.MainOnly, m) {
			continue
		}
		for _, p := range ps {
			if p != main {
				out = append(out, Figure{Metric: m, Protocol: p, Base: base + "." + string(p)})
			}
		}
	}
	return out
}

// shows reports whether figure f draws the result's scheme name.
func (f Figure) shows(name string) bool {
	base, p, ok := scheme.Split(name)
	if !ok || !scheme.IsVariational(base) {
		return true
	}
	return p == f.Protocol
}

// describeMetric returns the description d of spec's experiment as a
// figure of metric states it: the phrase naming the experiment's first
// metric ("err2" in "probit regression (…): err2 vs SNR", after the colon
// when there is one) replaced by metric's name when the figure shows
// another.
func describeMetric(d string, spec runner.Spec, metric string) string {
	if len(spec.Metrics) == 0 || metric == spec.Metrics[0] {
		return d
	}
	start := 0
	if c := strings.Index(d, ": "); c >= 0 {
		start = c + 2
	}
	vs := strings.Index(d[start:], " vs ")
	if vs < 0 {
		return d
	}
	return d[:start] + metric + d[start+vs:]
}

// Describe returns the one-line description of spec as run in res: with
// the sizes and settings of res's values (Spec.Describe), so that a
// --quick or --set run is not described at the defaults. It returns
// spec.Description, at the defaults, when res is nil (the experiment did
// not run) or the spec has no Describe.
func Describe(spec runner.Spec, res *runner.Result) string {
	if res == nil || spec.Describe == nil {
		return spec.Description
	}
	return spec.Describe(res.Values)
}

// Chart builds figure f of res from its summary rows: one series per
// scheme it shows (Spec.Schemes order), in the paper's names and each
// scheme's own style, of the mean with the band of opts (for a trajectory
// experiment, the median with the 5–95% range of the trials, capped as
// trajectorySeries says); on a log y axis unless the metric is in
// Spec.LinearY; a linear x axis labelled at the swept points. The title
// marks a smoke-sized run (--quick); the caption states the description
// and settings at the run's values (Describe, Spec.Caption), the protocol
// of the WVCMC curves and what lines and bands show.
func Chart(res *runner.Result, summary []SummaryRow, f Figure, opts Options) figure.Chart {
	spec, v := res.Spec, res.Values
	title := spec.ID
	if spec.Figure != "" {
		title = spec.Figure + " — " + spec.ID
	}
	if !f.Main && f.Protocol != "" {
		title += ", WVCMC: " + protocolNames[f.Protocol]
	}
	if res.Quick {
		title += " (--quick run)"
	}
	xlabel := spec.XLabel
	if xlabel == "" {
		xlabel = spec.X
	}
	c := figure.Chart{Title: title, XLabel: xlabel, YLabel: MetricLabel(spec, f.Metric), LogX: spec.LogX,
		LogY: !slices.Contains(spec.LinearY, f.Metric)}
	ideal, hasIdeal := spec.Ideal[f.Metric]
	if hasIdeal {
		c.Guide = &figure.Guide{Y: ideal, Label: "ideal " + runner.FormatX(ideal)}
	}
	if !spec.LogX {
		c.XTicks = v.XList()
	}
	var bands string
	if spec.Trajectory {
		bands = trajectorySeries(&c, res, f)
	} else {
		bands = meanSeries(&c, spec, summary, f, opts)
	}
	var first []string
	if d := describeMetric(Describe(spec, res), spec, f.Metric); d != "" {
		first = append(first, d+".")
	}
	if res.Quick {
		first = append(first, "A smoke-sized run (--quick).")
	}
	var lines []string
	if len(first) > 0 {
		lines = append(lines, strings.Join(first, " "))
	}
	var last []string
	if spec.Caption != nil {
		if s := spec.Caption(v); s != "" {
			last = append(last, "Settings: "+s+".")
		}
	}
	// The settings name the default protocol's optimiser; say which
	// protocol the curves follow when there is a choice.
	if f.Protocol != "" && (f.Protocol != scheme.Default || len(runProtocols(summary)) > 1) {
		last = append(last, "WVCMC: "+protocolNames[f.Protocol]+" protocol.")
	}
	if bands != "" {
		last = append(last, bands)
	}
	if hasIdeal {
		last = append(last, "Thin black line: the ideal value, "+runner.FormatX(ideal)+".")
	}
	if len(last) > 0 {
		lines = append(lines, strings.Join(last, " "))
	}
	c.Caption = strings.Join(lines, "\n")
	return c
}

// meanSeries sets the series of c from the summary rows: the mean of each
// scheme figure f shows with the band of opts. It returns the caption's
// sentence on the lines and bands ("" without rows).
func meanSeries(c *figure.Chart, spec runner.Spec, summary []SummaryRow, f Figure, opts Options) string {
	minN, maxN := math.MaxInt, 0
	cut := false     // a confidence interval left out for reaching zero
	clipped := false // a band clipped to the metric's bounds
	bounds, bounded := spec.Bounds[f.Metric]
	for _, s := range spec.Schemes {
		if !f.shows(s) {
			continue
		}
		ser := figure.Series{Name: SchemeLabel(s), Style: styleOf(s)}
		for _, r := range summary {
			if r.Scheme == s && r.Metric == f.Metric {
				lo, hi := opts.Band.interval(r)
				if c.LogY && opts.Band == BandCI && lo <= 0 {
					// An interval reaching zero has no lower edge on a log
					// axis; drawn to the axis it would swamp the figure.
					lo, hi = math.NaN(), math.NaN()
					cut = true
				}
				if bounded && (lo < bounds[0] || hi > bounds[1]) {
					lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
					clipped = true
				}
				ser.X = append(ser.X, r.X)
				ser.Mean = append(ser.Mean, r.Mean)
				ser.Lo = append(ser.Lo, lo)
				ser.Hi = append(ser.Hi, hi)
				minN, maxN = min(minN, r.N), max(maxN, r.N)
			}
		}
		if len(ser.X) > 0 {
			c.Series = append(c.Series, ser)
		}
	}
	if maxN == 0 {
		return ""
	}
	s := bandCaption(opts.Band, minN, maxN, cut)
	if clipped {
		s += fmt.Sprintf(" Bands clipped to the metric's range [%g, %g].", bounds[0], bounds[1])
	}
	return s
}

// bandCaption says what the lines and bands of a figure show.
func bandCaption(b Band, minN, maxN int, cut bool) string {
	n := fmt.Sprint(minN)
	if maxN != minN {
		n = fmt.Sprintf("%d–%d", minN, maxN)
	}
	trials := "trials"
	if maxN == 1 {
		trials = "trial"
	}
	s := fmt.Sprintf("Lines: mean over %s %s per point; bands: %s", n, trials, b.describe())
	switch {
	case b == BandCI && minN < 2 && cut:
		s += " (none at one trial, nor where it reaches zero)"
	case b == BandCI && minN < 2:
		s += " (none at one trial)"
	case cut:
		s += " (none where it reaches zero)"
	}
	return s + "."
}
