// Package report renders the reproduction report of the paper's
// experiments: REPORT.md and a self-contained report.html (figures inlined
// as SVG, no external assets). At the top, every claim with its verdict
// and the totals, the wcmc version, the settings, the seed and the wall
// time; then, per figure, the plots, the summary table, and the claims
// with their verdicts and the numbers they compared.
//
// A report is a pure function of its inputs: rendering the same results
// with the same Meta gives byte-identical files, so only Meta.Generated
// and Meta.Wall differ between two reports of the same stored results.
package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"wcmc/claims"
	"wcmc/internal/atomicfile"
	"wcmc/runner"
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

// Checked is a claim and its outcome.
type Checked struct {
	Claim   claims.Claim
	Outcome claims.Outcome
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

// New evaluates the claims of every run on its summary and reads its
// figures from dir. Claims of experiments without a result are
// NotEvaluated, with the reason the experiment did not run.
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
			var o claims.Outcome
			if run.Result == nil {
				o = claims.Outcome{Verdict: claims.NotEvaluated, Reason: "experiment not run: " + run.NotRun}
			} else {
				o = c.Evaluate(s.Summary)
			}
			s.Claims = append(s.Claims, Checked{Claim: c, Outcome: o})
		}
		r.Sections = append(r.Sections, s)
	}
	return r
}

// Totals counts the claims by verdict.
func (r *Report) Totals() map[claims.Verdict]int {
	t := map[claims.Verdict]int{}
	for _, s := range r.Sections {
		for _, c := range s.Claims {
			t[c.Outcome.Verdict]++
		}
	}
	return t
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

// Write writes dir/REPORT.md and dir/report.html, each through a temporary
// file renamed into place, and returns their paths.
func Write(dir string, r *Report) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{{MarkdownFile, r.WriteMarkdown}, {HTMLFile, r.WriteHTML}} {
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

// verdictCounts counts the verdicts of a section's claims.
func verdictCounts(cs []Checked) map[claims.Verdict]int {
	t := map[claims.Verdict]int{}
	for _, c := range cs {
		t[c.Outcome.Verdict]++
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

// interval formats a comparison's confidence interval.
func interval(c claims.Comparison) string {
	return fmt.Sprintf("[%s, %s]", claims.Num(c.Lo), claims.Num(c.Hi))
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

// totalsLine returns "N claims: a hold, b fail, c inconclusive, d not evaluated".
func (r *Report) totalsLine() string {
	t := r.Totals()
	return fmt.Sprintf("%s over %s: %d hold, %d fail, %d inconclusive, %d not evaluated",
		countOf(r.NumClaims(), "claim"), countOf(len(r.Sections), "experiment"),
		t[claims.Holds], t[claims.Fails], t[claims.Inconclusive], t[claims.NotEvaluated])
}

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
