// Package report renders the reproduction report of the paper's
// experiments: REPORT.md, a self-contained report.html (figures inlined
// as SVG, no external assets) and claims.csv. At the top, every claim with
// its verdict under each protocol it is judged under, side by side, and
// the totals, the wcmc version, the settings, the seed and the wall time;
// then, per figure, the plots, the summary table, and the claims with
// their verdicts and the numbers they compared.
//
// A report is a pure function of its inputs: rendering the same results
// with the same Meta gives byte-identical files, so only Meta.Generated
// and Meta.Wall differ between two reports of the same stored results.
package report

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"wcmc/claims"
	"wcmc/internal/atomicfile"
	"wcmc/runner"
	"wcmc/scheme"
)

// Run is one experiment of a report: its result, or why it has none.
type Run struct {
	Spec   runner.Spec
	Result *runner.Result // nil when the experiment did not run
	// NotRun says why Result is nil (e.g. missing data, or the error that
	// stopped it).
	NotRun string
	// Failed marks an experiment that could not run because of an error,
	// as opposed to one deliberately not run (data absent).
	Failed bool
}

// Meta describes the invocation that produced the report.
type Meta struct {
	Command   string   // the command line, e.g. "wcmc reproduce --quick"
	Version   string   // runner.Version
	Seed      uint64   // the run seed
	Quick     bool     // smoke-sized runs
	Trials    int      // trials override (0: each experiment's default)
	Sets      []string // --set overrides, "name=value"
	Settings  []string // further settings worth stating, e.g. "MNIST data: ../shared/data/mnist (split t10k)"
	Generated time.Time
	Wall      time.Duration // wall time of the whole invocation
}

// Figure is one plot of an experiment, read from DIR/ID.svg or
// DIR/ID.<metric>.svg.
type Figure struct {
	Metric string
	File   string // base name, e.g. "gauss-snr.err2_fresh.svg"
	SVG    []byte // the <svg> element, ready to inline; nil if unusable
	Err    string // why SVG is nil
}

// Checked is a claim and its outcomes, one per protocol it is judged
// under, in Claim.Protocols() order.
type Checked struct {
	Claim    claims.Claim
	Outcomes []claims.Outcome
}

// Under returns the outcome of c under protocol p, if c is judged under
// it.
func (c Checked) Under(p scheme.Protocol) (claims.Outcome, bool) {
	for _, o := range c.Outcomes {
		if o.Protocol == p {
			return o, true
		}
	}
	return claims.Outcome{}, false
}

// Section is the part of the report about one experiment.
type Section struct {
	Run
	Summary []runner.SummaryRow
	Figures []Figure
	Claims  []Checked
}

// Report is a rendered-ready reproduction report.
type Report struct {
	Meta     Meta
	Sections []Section
}

// New evaluates the claims of every run on its per-trial results, under
// each protocol a claim is judged under, and reads its figures from dir.
// Claims of experiments without a result are NotEvaluated, with the reason
// the experiment did not run.
func New(dir string, meta Meta, runs []Run) *Report {
	r := &Report{Meta: meta}
	for _, run := range runs {
		s := Section{Run: run}
		if run.Result != nil {
			s.Summary = runner.Summarize(run.Result)
			for i, m := range run.Spec.Metrics {
				name := run.Spec.ID + ".svg"
				if i > 0 {
					name = run.Spec.ID + "." + m + ".svg"
				}
				s.Figures = append(s.Figures, readFigure(filepath.Join(dir, name), m))
			}
		}
		for _, c := range claims.For(run.Spec.ID) {
			ch := Checked{Claim: c}
			for _, p := range c.Protocols() {
				o := claims.Outcome{Protocol: p, Verdict: claims.NotEvaluated, Reason: "experiment not run: " + run.NotRun, Deciding: -1}
				if run.Result != nil {
					o = c.Evaluate(run.Result, p)
				}
				ch.Outcomes = append(ch.Outcomes, o)
			}
			s.Claims = append(s.Claims, ch)
		}
		r.Sections = append(r.Sections, s)
	}
	return r
}

// Counts are verdict counts per protocol.
type Counts map[scheme.Protocol]map[claims.Verdict]int

// Judged returns how many claims were judged under protocol p.
func (c Counts) Judged(p scheme.Protocol) int {
	n := 0
	for _, k := range c[p] {
		n += k
	}
	return n
}

// cell returns "h/f/i/n" of protocol p, or "–" when no claim is judged
// under it.
func (c Counts) cell(p scheme.Protocol) string {
	if c.Judged(p) == 0 {
		return "–"
	}
	v := c[p]
	return fmt.Sprintf("%d/%d/%d/%d", v[claims.Holds], v[claims.Fails], v[claims.Inconclusive], v[claims.NotEvaluated])
}

// Totals counts the claims of the report by protocol and verdict.
func (r *Report) Totals() Counts {
	var all []Checked
	for _, s := range r.Sections {
		all = append(all, s.Claims...)
	}
	return verdictCounts(all)
}

// NumClaims returns the number of claims in the report.
func (r *Report) NumClaims() int {
	n := 0
	for _, s := range r.Sections {
		n += len(s.Claims)
	}
	return n
}

// Files are the names of the report files in the output directory.
const (
	MarkdownFile = "REPORT.md"
	HTMLFile     = "report.html"
)

// Write writes dir/REPORT.md, dir/report.html and dir/claims.csv, each
// through a temporary file renamed into place, and returns their paths.
func Write(dir string, r *Report) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{{MarkdownFile, r.WriteMarkdown}, {HTMLFile, r.WriteHTML}, {CSVFile, r.WriteCSV}} {
		path := filepath.Join(dir, f.name)
		if err := atomicfile.Write(path, f.write); err != nil {
			return files, fmt.Errorf("writing %s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}

// readFigure reads an SVG file and prepares it for inlining.
func readFigure(path, metric string) Figure {
	f := Figure{Metric: metric, File: filepath.Base(path)}
	b, err := os.ReadFile(path)
	if err != nil {
		f.Err = err.Error()
		return f
	}
	svg, err := InlineSVG(b)
	if err != nil {
		f.Err = fmt.Sprintf("%s: %v", f.File, err)
		return f
	}
	f.SVG = svg
	return f
}

// InlineSVG returns the <svg> element of an SVG document, ready to inline
// in HTML: the XML prolog and anything before the root element are
// dropped. It checks that the document is well-formed XML whose root is
// svg, and refuses active or external content: script or foreignObject
// elements, on* event attributes, and links (href) other than to
// fragments within the document.
func InlineSVG(doc []byte) ([]byte, error) {
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict = true
	depth := 0
	start := int64(-1)
	for {
		off := d.InputOffset()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not well-formed SVG: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				if start >= 0 {
					return nil, errors.New("more than one root element")
				}
				if t.Name.Local != "svg" {
					return nil, fmt.Errorf("root element is <%s>, not <svg>", t.Name.Local)
				}
				start = off
			}
			name := strings.ToLower(t.Name.Local)
			if name == "script" || name == "foreignobject" {
				return nil, fmt.Errorf("refusing <%s> element", t.Name.Local)
			}
			for _, a := range t.Attr {
				an := strings.ToLower(a.Name.Local)
				if strings.HasPrefix(an, "on") {
					return nil, fmt.Errorf("refusing event attribute %s", a.Name.Local)
				}
				if an == "href" && !strings.HasPrefix(strings.TrimSpace(a.Value), "#") {
					return nil, fmt.Errorf("refusing external link %q", a.Value)
				}
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 0 && len(bytes.TrimSpace(t)) > 0 {
				return nil, errors.New("text outside the root element")
			}
		}
	}
	if start < 0 {
		return nil, errors.New("no <svg> element")
	}
	return bytes.TrimSpace(doc[start:]), nil
}

// verdictCounts counts the verdicts of claims by protocol.
func verdictCounts(cs []Checked) Counts {
	t := Counts{}
	for _, p := range scheme.Protocols {
		t[p] = map[claims.Verdict]int{}
	}
	for _, c := range cs {
		for _, o := range c.Outcomes {
			t[o.Protocol][o.Verdict]++
		}
	}
	return t
}

// wall returns the wall time of a result.
func wall(res *runner.Result) time.Duration { return res.Wall }

// runFacts are the trials, start time and wall time of a section's run, as
// shown in the experiments table ("–" for an experiment that did not run).
func runFacts(s Section) (trials, computed, wallTime string) {
	if s.Result == nil {
		return "–", "–", "–"
	}
	return fmt.Sprint(s.Result.Trials), s.Result.Start.UTC().Format("2006-01-02 15:04:05Z"), fmtDur(wall(s.Result))
}

// fmtDur formats a duration to a tenth of a second below a minute, to the
// second above.
func fmtDur(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// title returns "Fig. N — ID" or the ID alone.
func title(spec runner.Spec) string {
	if spec.Figure == "" {
		return spec.ID
	}
	return spec.Figure + " — " + spec.ID
}

// status returns a section's status line.
func status(s Section) string {
	switch {
	case s.Result != nil:
		return "ok"
	case s.Failed:
		return "failed: " + s.NotRun
	}
	return "not run: " + s.NotRun
}

// paramList returns the parameters of a result as "name=value" in
// declaration order.
func paramList(res *runner.Result) []string {
	m := res.Values.Map()
	var out []string
	for _, n := range res.Values.Names() {
		out = append(out, n+"="+m[n])
	}
	return out
}

// summaryGrid arranges one metric's summary as rows of sweep points and
// columns of schemes (in the spec's order, schemes without values left
// out).
type summaryGrid struct {
	xname   string
	xs      []float64
	schemes []string
	cell    map[string]map[int]runner.SummaryRow // scheme → point
}

func grid(s Section, metric string) summaryGrid {
	g := summaryGrid{xname: s.Spec.X, xs: s.Result.Values.XList(), cell: map[string]map[int]runner.SummaryRow{}}
	for _, r := range s.Summary {
		if r.Metric != metric {
			continue
		}
		if g.cell[r.Scheme] == nil {
			g.cell[r.Scheme] = map[int]runner.SummaryRow{}
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
// "n=…" when n differs from trials, or "–" when absent.
func (g summaryGrid) text(scheme string, p, trials int) string {
	r, ok := g.cell[scheme][p]
	if !ok {
		return "–"
	}
	s := fmt.Sprintf("%s [%s, %s]", claims.Num(r.Mean), claims.Num(r.Q05), claims.Num(r.Q95))
	if r.N != trials {
		s += fmt.Sprintf(" n=%d", r.N)
	}
	return s
}

// values formats the estimates of a comparison.
func values(c claims.Comparison) string {
	parts := make([]string, len(c.Values))
	for i, e := range c.Values {
		parts[i] = fmt.Sprintf("%s @ %s: %s", e.Scheme, e.At(), e)
	}
	return strings.Join(parts, "; ")
}

// ratio formats a comparison's estimate as a ratio.
func ratio(c claims.Comparison) string {
	r, _, _ := c.Ratio()
	return claims.Num(r)
}

// result formats a comparison's verdict with its pairing and note.
func result(c claims.Comparison) string { return c.Verdict.String() + resultNote(c) }

// resultNote is what result adds to the verdict.
func resultNote(c claims.Comparison) string {
	s := ""
	if !c.Paired {
		s += ", unpaired"
	}
	if c.Note != "" {
		s += " (" + c.Note + ")"
	}
	return s
}

// maxShown is the most comparisons a claim's table lists under one
// protocol; beyond it, the table lists the deciding comparison and those
// that do not hold, and says how many others hold.
const maxShown = 12

// shown returns the comparisons of o to list, and how many holding ones
// are left out.
func shown(o claims.Outcome) (cs []claims.Comparison, omitted int) {
	if len(o.Comparisons) <= maxShown {
		return o.Comparisons, 0
	}
	for i, c := range o.Comparisons {
		if (i == o.Deciding || c.Verdict != claims.Holds) && len(cs) < maxShown {
			cs = append(cs, c)
		}
	}
	return cs, len(o.Comparisons) - len(cs)
}

// decidingCells returns the estimate, interval, trials and trials to
// decide of an outcome's deciding comparison, "" where there is none.
func decidingCells(o claims.Outcome) (est, ci, n, toDecide string) {
	d, ok := o.DecidingComparison()
	if !ok {
		return "", "", "", ""
	}
	if o.TrialsToDecide > 0 {
		toDecide = strconv.Itoa(o.TrialsToDecide)
	}
	return ratio(d), d.Interval(), strconv.Itoa(d.N), toDecide
}

// CSVFile is the name of the claims table in the output directory.
const CSVFile = "claims.csv"

// CSVHeader is the header of claims.csv.
var CSVHeader = []string{"claim", "figure", "metric", "protocol", "verdict", "estimate", "ci_low", "ci_high", "trials", "trials_to_decide"}

// WriteCSV writes claims.csv: one row per claim and protocol it is judged
// under, with the verdict and, from the deciding comparison, the estimate
// and its Level interval as ratios (above 1 supports the claim) and the
// trials; trials_to_decide only for an inconclusive claim whose effect
// says how many trials would decide it.
func (r *Report) WriteCSV(out io.Writer) error {
	w := csv.NewWriter(out)
	w.Write(CSVHeader)
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, s := range r.Sections {
		for _, c := range s.Claims {
			for _, o := range c.Outcomes {
				row := []string{c.Claim.ID, c.Claim.Figure, c.Claim.Metric, string(o.Protocol), o.Verdict.Code(), "", "", "", "", ""}
				if d, ok := o.DecidingComparison(); ok && o.Verdict != claims.NotEvaluated {
					est, lo, hi := d.Ratio()
					row[5], row[6], row[7], row[8] = f(est), f(lo), f(hi), strconv.Itoa(d.N)
					if o.Verdict == claims.Inconclusive && o.TrialsToDecide > 0 {
						row[9] = strconv.Itoa(o.TrialsToDecide)
					}
				}
				w.Write(row)
			}
		}
	}
	w.Flush()
	return w.Error()
}

// settings returns the report's settings line items.
func (m Meta) settings() []string {
	out := []string{"wcmc " + m.Version, fmt.Sprintf("seed %d", m.Seed)}
	if m.Quick {
		out = append(out, "smoke-sized (--quick)")
	} else {
		out = append(out, "the paper's sizes")
	}
	if m.Trials > 0 {
		out = append(out, fmt.Sprintf("%d trials per point", m.Trials))
	} else {
		out = append(out, "each experiment's default trials")
	}
	for _, s := range m.Sets {
		out = append(out, "--set "+s)
	}
	return append(out, m.Settings...)
}

// totalsLine returns "N claims over M experiments, each judged under two
// protocols — paper: a hold, b fail, c inconclusive, d not evaluated; …".
func (r *Report) totalsLine() string {
	t := r.Totals()
	var parts []string
	for _, p := range scheme.Protocols {
		if t.Judged(p) == 0 {
			continue
		}
		v := t[p]
		parts = append(parts, fmt.Sprintf("%s: %d hold, %d fail, %d inconclusive, %d not evaluated", p,
			v[claims.Holds], v[claims.Fails], v[claims.Inconclusive], v[claims.NotEvaluated]))
	}
	return fmt.Sprintf("%s over %s, each judged under two of the protocols — %s",
		countOf(r.NumClaims(), "claim"), countOf(len(r.Sections), "experiment"), strings.Join(parts, "; "))
}

// protocolLegend says what the protocols are, for the tables.
const protocolLegend = "Protocols: paper = the paper's SGD (its η and t_m, no holdout); converged = an optimiser run to a stationary point (no holdout); " +
	"default = L-BFGS with held-out early stopping. In-sample claims are judged under paper and converged, fresh-signal claims under converged and default (– : not judged under that protocol)."

// computeLine states the summed wall time of the experiments, as recorded
// when each ran (the same when stored results are reused).
func (r *Report) computeLine() string {
	var d time.Duration
	n := 0
	for _, s := range r.Sections {
		if s.Result != nil {
			d += wall(s.Result)
			n++
		}
	}
	return fmt.Sprintf("The %s run took %s of wall time in all, as recorded when each was computed.", countOf(n, "experiment"), fmtDur(d))
}

// countOf writes n with the noun in the singular when n is 1 and in the
// plural (noun + "s") otherwise: "1 experiment", "10 experiments".
func countOf(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// generatedLine is the only line of a report that depends on when it was
// made.
func (m Meta) generatedLine() string {
	return fmt.Sprintf("Generated %s, wall time %s.", m.Generated.UTC().Format(time.RFC3339), fmtDur(m.Wall))
}
