package report

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wcmc-project/wcmc/claims"
	"github.com/wcmc-project/wcmc/diagnostics"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/results"
	"github.com/wcmc-project/wcmc/scheme"
)

// The report is laid out once (layout) and rendered twice, as Markdown
// (WriteMarkdown) and as HTML (WriteHTML): the layout holds every piece of
// text in the order a reader meets it, the renderers only add markup and
// escaping.

// layout is a report ready to render.
type layout struct {
	title       string          // Title, or BeyondTitle without the paper's experiments
	question    string          // what the headline answers: "Does it reproduce?"
	headline    string          // totalsLine: "N claims over M experiments, …"
	counts      []protocolCount // the verdict counts of each judged protocol
	generated   string          // Meta.generatedLine
	compute     string          // computeLine
	command     string          // Meta.Command
	settings    []string        // Meta.settings
	bottom      []bottomRow     // the bottom line: the paper's statements and verdicts
	findings    []string        // what a reader must know (findings)
	claims      []claimRow      // the claims table
	experiments []experimentRow // the experiments table
	sections    []sectionLayout
}

// protocolCount is the number of claims of each verdict under a protocol.
type protocolCount struct {
	protocol scheme.Protocol
	verdicts map[claims.Verdict]int
}

// claimRow is a line of the claims table: the verdict under each protocol
// of judgedUnder, nil where the claim is not judged under it.
type claimRow struct {
	id, figure, metric string
	addition           bool // the project's, not counted
	verdicts           []*claims.Verdict
}

// additionMark follows the ID of a project's addition in the claims
// table.
func additionMark(addition bool) string {
	if addition {
		return " (the project's addition, not counted)"
	}
	return ""
}

// experimentRow is a line of the experiments table and of the verdict
// table.
type experimentRow struct {
	id, figure, title      string
	trials, computed, wall string   // see runFacts
	counts                 []string // per protocol: Counts.cell
	status                 string
	numClaims              int
	ran, failed            bool
}

// sectionLayout is the part of the report about one experiment.
type sectionLayout struct {
	id, title, description string
	notRun                 string // why it did not run; "" if it ran
	ran                    bool
	facts                  string // "Seed …, N trials per point, computed …, wall time …."
	params                 string // "name=value …"
	notes                  []string
	figures                []figureGroup
	grids                  []gridLayout
	convergence            *convergenceLayout // nil: no chain diagnostics recorded
	figure                 string             // the paper's figure, for "Claims about …"
	claims                 []claimLayout
}

// figureGroup is the figures of one metric: the main one and those of the
// other protocols.
type figureGroup struct {
	metric, label string
	main          Figure
	others        []Figure
}

// figureCaption says what a figure shows: its metric's axis label and the
// protocol of its WVCMC curves.
func figureCaption(label string, f Figure) string {
	s := label
	if r, n := utf8.DecodeRuneInString(s); n > 0 {
		s = string(unicode.ToUpper(r)) + s[n:]
	}
	if f.Protocol != "" {
		s += "; WVCMC under the " + protocolTitle(f.Protocol) + " protocol"
	}
	return s + " (" + f.File + ")."
}

// protocolTitle names a protocol in running text.
func protocolTitle(p scheme.Protocol) string {
	if p == scheme.Paper {
		return "paper SGD"
	}
	return string(p)
}

// othersSummary is the heading of a metric's other protocols' figures.
func (g figureGroup) othersSummary() string {
	names := make([]string, len(g.others))
	for i, f := range g.others {
		names[i] = protocolTitle(f.Protocol)
	}
	if len(names) == 1 {
		return "WVCMC under the " + names[0] + " protocol"
	}
	return "WVCMC under the " + strings.Join(names, " and ") + " protocols"
}

// groupFigures groups a section's figures by metric, the one under the
// paper's protocol shown first where there is one, then the metric's main
// figure, then the others.
func groupFigures(spec runner.Spec, figs []Figure) []figureGroup {
	var out []figureGroup
	for _, m := range spec.Metrics {
		g := figureGroup{metric: m, label: results.MetricLabel(spec, m)}
		var main, paper *Figure
		var others []Figure
		for i, f := range figs {
			switch {
			case f.Metric != m:
			case f.Main:
				main = &figs[i]
			case f.Protocol == scheme.Paper:
				paper = &figs[i]
			default:
				others = append(others, f)
			}
		}
		if main == nil {
			continue
		}
		g.main = *main
		if paper != nil {
			g.main = *paper
			others = append([]Figure{*main}, others...)
		}
		g.others = others
		out = append(out, g)
	}
	return out
}

// gridLayout is the summary table of one metric: a row per sweep point, a
// column per scheme.
type gridLayout struct {
	label   string
	trials  int
	xname   string
	schemes []string
	rows    [][]string // the sweep value, then a cell per scheme
	skewed  bool       // a cell's mean lies outside its 5–95% band (marked skewMark)
}

// claimLayout is a claim and its outcome under each protocol.
type claimLayout struct {
	claim    claims.Claim
	outcomes []outcomeLayout
}

// outcomeLayout is the verdict of a claim under one protocol, the numbers
// of its deciding comparison (see decidingCells) and the comparisons shown.
type outcomeLayout struct {
	protocol    scheme.Protocol
	verdict     claims.Verdict
	est, ci, n  string
	reason      string
	other       string // the other reading's verdict, "" when none
	otherReason string
	comparisons []comparisonRow
	omitted     map[claims.Verdict]int // comparisons not shown, by verdict
}

// comparisonRow is a line of a claim's comparison table.
type comparisonRow struct {
	at, test, values, ratio, interval string
	verdict                           claims.Verdict
	note                              string // resultNote
}

// layout lays out the report.
func (r *Report) layout() layout {
	m := r.Meta
	l := layout{title: Title, question: "Does it reproduce?", headline: r.totalsLine(), generated: m.generatedLine(), compute: r.computeLine(),
		command: m.Command, settings: r.settings(), bottom: bottomRows(r.Sections), findings: findings(r.Sections)}
	if r.NumClaims() == 0 && r.NumAdditions() > 0 {
		l.title, l.question, l.headline = BeyondTitle, "What holds?", r.additionsLine()
	}
	t := r.Totals()
	for _, p := range judgedUnder {
		if t.Judged(p) > 0 {
			l.counts = append(l.counts, protocolCount{protocol: p, verdicts: t[p]})
		}
	}
	for _, s := range r.Sections {
		for _, c := range s.Claims {
			row := claimRow{id: c.Claim.ID, figure: c.Claim.Figure, metric: c.Claim.Metric, addition: c.Claim.Addition}
			for _, p := range judgedUnder {
				var v *claims.Verdict
				if o, ok := c.Under(p); ok {
					v = &o.Verdict
				}
				row.verdicts = append(row.verdicts, v)
			}
			l.claims = append(l.claims, row)
		}
		l.experiments = append(l.experiments, experimentRowOf(s))
		l.sections = append(l.sections, sectionLayoutOf(s, m.ChainLimits))
	}
	return l
}

func experimentRowOf(s Section) experimentRow {
	trials, computed, wt := runFacts(s)
	return experimentRow{id: s.Spec.ID, figure: s.Spec.Figure, title: title(s.Spec), trials: trials, computed: computed,
		wall: wt, counts: verdictCounts(s.Claims).cells(), status: status(s), numClaims: numPaperClaims(s.Claims),
		ran: s.Result != nil, failed: s.Failed}
}

func sectionLayoutOf(s Section, limits diagnostics.Thresholds) sectionLayout {
	l := sectionLayout{id: s.Spec.ID, title: title(s.Spec), description: results.Describe(s.Spec, s.Result), notRun: s.NotRun,
		ran: s.Result != nil, figure: s.Spec.Figure}
	if !s.Spec.PaperFigure() {
		// Experiments beyond the paper share the figure "Beyond": their
		// claims are headed by the experiment's ID.
		l.figure = s.Spec.ID
	}
	if res := s.Result; res != nil {
		quick := ""
		if res.Quick {
			quick = ", smoke-sized (--quick)"
		}
		l.facts = fmt.Sprintf("Seed %d, %d trials per point%s, computed %s, %s.", res.Seed, res.Trials, quick,
			res.Start.UTC().Format("2006-01-02 15:04:05Z"), WallTime(res))
		if m := MixedArithmetic(res); m != "" {
			l.facts += " " + strings.ToUpper(m[:1]) + m[1:] + "."
		}
		l.params = strings.Join(paramList(res), " ")
		for _, n := range res.Notes {
			l.notes = append(l.notes, n.String())
		}
		l.figures = groupFigures(s.Spec, s.Figures)
		for _, metric := range s.Spec.Metrics {
			g := grid(s, metric)
			if len(g.schemes) == 0 {
				continue
			}
			gl := gridLayout{label: results.MetricLabel(s.Spec, metric), trials: res.Trials, xname: s.Spec.X}
			for _, sc := range g.schemes {
				gl.schemes = append(gl.schemes, results.SchemeLabel(sc))
			}
			for p, x := range g.xs {
				row := []string{runner.FormatX(x)}
				for _, sc := range g.schemes {
					cell, skewed := g.text(sc, p, res.Trials)
					row = append(row, cell)
					gl.skewed = gl.skewed || skewed
				}
				gl.rows = append(gl.rows, row)
			}
			l.grids = append(l.grids, gl)
		}
		l.convergence = convergenceLayoutOf(res, limits)
	}
	for _, c := range s.Claims {
		cl := claimLayout{claim: c.Claim}
		for _, o := range c.Outcomes {
			est, ci, n := decidingCells(o)
			ol := outcomeLayout{protocol: o.Protocol, verdict: o.Verdict, est: est, ci: shownInterval(ci), n: n, reason: o.Reason}
			if o.Other != nil {
				ol.other, ol.otherReason = o.Other.Verdict.String(), o.Other.Reason
			}
			var cs []claims.Comparison
			cs, ol.omitted = shown(o)
			for _, cmp := range cs {
				ol.comparisons = append(ol.comparisons, comparisonRow{at: cmp.At, test: cmp.Test, values: values(cmp),
					ratio: ratio(cmp), interval: shownInterval(cmp.Interval()), verdict: cmp.Verdict, note: resultNote(cmp)})
			}
			cl.outcomes = append(cl.outcomes, ol)
		}
		l.claims = append(l.claims, cl)
	}
	return l
}

// claimCount says how many claims a section has: "4 claims", or "2
// claims and 2 of the project's" when it has additions (not counted).
func (s sectionLayout) claimCount() string {
	n := 0
	for _, c := range s.claims {
		if !c.claim.Addition {
			n++
		}
	}
	out := countOf(n, "claim")
	if a := len(s.claims) - n; a > 0 {
		out += fmt.Sprintf(" and %d of the project's", a)
	}
	return out
}

// shownInterval writes an interval that was not computed (too few trials
// for the bootstrap: its bounds are NaN) as a dash.
func shownInterval(s string) string {
	if strings.Contains(s, "NaN") {
		return "–"
	}
	return s
}

// readingLine says how a claim's words are read, and whether the claim
// is the project's rather than the paper's.
func readingLine(c claims.Claim) string {
	var s string
	if c.Reading != "" {
		s = "Read " + c.Reading + "."
	}
	if c.Addition {
		s += " Not a statement of the paper: the project's addition, not counted among the paper's claims."
	}
	return strings.TrimSpace(s)
}

// otherCell is the outcome table's cell for the other reading: its
// verdict, or "–" when the claim has one reading.
func otherCell(o outcomeLayout) string {
	if o.other == "" {
		return "–"
	}
	return o.other
}

// sentenceEnd matches the end of a sentence followed by the next one.
var sentenceEnd = regexp.MustCompile(`\. +([A-Z(])`)

// methodParts splits claims.Method into its sentences, for a list.
func methodParts() []string {
	s := sentenceEnd.ReplaceAllString(claims.Method, ".\n$1")
	return strings.Split(s, "\n")
}

// Texts both renderers use.
const countsLegend = "Claims per protocol: hold/fail/inconclusive/not evaluated."

// caption says what a summary table's cells are.
func (g gridLayout) caption() string {
	c := fmt.Sprintf("mean [5%%, 95%%] over %d trials (– : not applicable", g.trials)
	if g.skewed {
		c += "; " + skewMark + " : the mean lies outside its 5–95% band, a few trials dominate it"
	}
	return c + ")"
}

// skewMark marks a summary cell whose mean lies outside its own 5–95%
// band: a few extreme trials (a diverged run, an overfitted map) carry the
// mean, and the band says more about a typical trial than the mean does.
const skewMark = "‡"

// omittedLine says how many comparisons a table leaves out, by verdict:
// "30 other comparisons not listed: 2 fail, 28 hold."
func omittedLine(omitted map[claims.Verdict]int) string {
	n := 0
	var parts []string
	for _, v := range claims.Verdicts {
		if k := omitted[v]; k > 0 {
			n += k
			parts = append(parts, fmt.Sprintf("%d %s", k, verdictVerb(v, k)))
		}
	}
	return countOf(n, "other comparison") + " not listed: " + strings.Join(parts, ", ") + "."
}

// verdictVerb is a verdict as a predicate of k comparisons: "hold", "fails",
// "inconclusive", "not evaluated".
func verdictVerb(v claims.Verdict, k int) string {
	switch v {
	case claims.Holds:
		return verb(k, "holds", "hold")
	case claims.Fails:
		return verb(k, "fails", "fail")
	}
	return v.String()
}

// The column heads of a claim's outcome table and of its comparison table.
var (
	outcomeHeader    = []string{"Protocol", "Verdict", "Ratio", intervalHeader, "Trials", "Other reading", "Why"}
	comparisonHeader = []string{"At", "Test", "Values (mean, n)", "Ratio", intervalHeader, "Result"}
)

// summaryGrid arranges one metric's summary as rows of sweep points and
// columns of schemes (in the spec's order, schemes without values left
// out).
type summaryGrid struct {
	xname   string
	xs      []float64
	schemes []string
	cell    map[string]map[int]results.SummaryRow // scheme → point
}

func grid(s Section, metric string) summaryGrid {
	g := summaryGrid{xname: s.Spec.X, xs: s.Result.Values.XList(), cell: map[string]map[int]results.SummaryRow{}}
	for _, r := range s.Summary {
		if r.Metric != metric {
			continue
		}
		if g.cell[r.Scheme] == nil {
			g.cell[r.Scheme] = map[int]results.SummaryRow{}
		}
		g.cell[r.Scheme][r.Point] = r
	}
	for _, sc := range s.Spec.Schemes {
		if len(g.cell[sc]) > 0 {
			g.schemes = append(g.schemes, sc)
		}
	}
	return g
}

// text returns the cell of scheme at point p: "mean [q05, q95]", with
// "n=…" when n differs from trials, or "–" when absent; skewed reports a
// mean outside [q05, q95], which the cell marks with skewMark.
func (g summaryGrid) text(scheme string, p, trials int) (cell string, skewed bool) {
	r, ok := g.cell[scheme][p]
	if !ok {
		return "–", false
	}
	s := fmt.Sprintf("%s [%s, %s]", claims.Num(r.Mean), claims.Num(r.Q05), claims.Num(r.Q95))
	if skewed = r.Mean > r.Q95 || r.Mean < r.Q05; skewed {
		s += " " + skewMark
	}
	if r.N != trials {
		s += fmt.Sprintf(" n=%d", r.N)
	}
	return s, skewed
}
