package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wcmc-project/wcmc/claims"
)

// Title is the heading of a report on the paper's experiments;
// BeyondTitle that of a report on experiments beyond it only.
const (
	Title       = "Reproducing Liu & Simeone, “Channel-Driven Monte Carlo Sampling for Bayesian Distributed Learning in Wireless Data Centers”, Section VI"
	BeyondTitle = "Beyond Liu & Simeone, “Channel-Driven Monte Carlo Sampling for Bayesian Distributed Learning in Wireless Data Centers”: the project's claims"
)

// mdCell escapes text for a Markdown table cell: pipes escaped, line
// breaks flattened.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "\\", "\\\\")
	s = strings.ReplaceAll(s, "|", "\\|")
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", " ")
}

// mdText flattens line breaks of running text.
func mdText(s string) string { return strings.Join(strings.Fields(s), " ") }

// mdRow writes one Markdown table row.
func mdRow(w io.Writer, cells ...string) {
	escaped := make([]string, len(cells))
	for i, c := range cells {
		escaped[i] = mdCell(c)
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(escaped, " | "))
}

// mdHeader writes a Markdown table header.
func mdHeader(w io.Writer, cells ...string) {
	mdRow(w, cells...)
	seps := make([]string, len(cells))
	for i := range seps {
		seps[i] = "---"
	}
	fmt.Fprintf(w, "|%s|\n", strings.Join(seps, "|"))
}

// WriteMarkdown writes the report as Markdown (REPORT.md). Figures are
// linked as the SVG files next to it.
func (r *Report) WriteMarkdown(out io.Writer) error {
	w := bufio.NewWriter(out)
	l := r.layout()
	fmt.Fprintf(w, "# %s\n\n", l.title)
	fmt.Fprintf(w, "**%s** %s.\n\n", l.question, l.headline)
	if len(l.bottom) > 0 {
		fmt.Fprintf(w, "## Bottom line\n\n")
		markdownBottomLine(w, l, func(id string) string { return fmt.Sprintf("[%s](#%s)", id, id) })
	}
	fmt.Fprintf(w, "%s\n\n%s\n\n", l.generated, l.compute)
	if l.command != "" {
		fmt.Fprintf(w, "Command: `%s`\n\n", l.command)
	}
	fmt.Fprintf(w, "Settings:\n\n")
	for _, s := range l.settings {
		fmt.Fprintf(w, "- %s\n", mdText(s))
	}
	fmt.Fprintln(w)
	markdownTOC(w, l)

	fmt.Fprintf(w, "## Claims\n\n%s\n\n", protocolLegend)
	mdHeader(w, append([]string{"Claim", "Figure", "Metric"}, protocolNames()...)...)
	for _, c := range l.claims {
		cells := []string{fmt.Sprintf("[%s](#%s)", c.id, c.id) + additionMark(c.addition), c.figure, c.metric}
		for _, v := range c.verdicts {
			cell := "–"
			if v != nil {
				cell = "**" + v.String() + "**"
			}
			cells = append(cells, cell)
		}
		mdRow(w, cells...)
	}
	fmt.Fprintf(w, "\n### How verdicts are decided\n\n")
	for _, s := range methodParts() {
		fmt.Fprintf(w, "- %s\n", s)
	}
	fmt.Fprintln(w)

	fmt.Fprintf(w, "## Experiments\n\n%s\n\n", countsLegend)
	mdHeader(w, append(append([]string{"Experiment", "Figure", "Trials", "Computed", "Wall time"}, protocolNames()...), "Status")...)
	for _, e := range l.experiments {
		cells := []string{fmt.Sprintf("[%s](#%s)", e.id, anchor(e.title)), e.figure, e.trials, e.computed, e.wall}
		mdRow(w, append(append(cells, e.counts...), e.status)...)
	}
	fmt.Fprintln(w)

	for _, s := range l.sections {
		markdownSection(w, s)
	}
	return w.Flush()
}

// markdownBottomLine writes the bottom line: the paper's statements with
// their verdicts, each claim's ID written by ref, then the findings.
func markdownBottomLine(w *bufio.Writer, l layout, ref func(id string) string) {
	fmt.Fprintf(w, "%s\n\n", bottomLegend)
	mdHeader(w, bottomHeader...)
	for _, b := range l.bottom {
		mdRow(w, b.figure, fmt.Sprintf("%s: “%s”", ref(b.id), b.quote), b.paper, b.converged, b.fresh)
	}
	fmt.Fprintln(w)
	if len(l.findings) > 0 {
		fmt.Fprintf(w, "What a reader must know:\n\n")
		for _, f := range l.findings {
			fmt.Fprintf(w, "- %s\n", mdText(f))
		}
		fmt.Fprintln(w)
	}
}

// anchor returns the GitHub-style anchor of a heading.
func anchor(h string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(h) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
			b.WriteRune(c)
		case c == ' ':
			b.WriteRune('-')
		case c > 127 && c != '—' && c != '–':
			b.WriteRune(c)
		}
	}
	return b.String()
}

// markdownTOC writes the table of contents, linking the headings by
// their GitHub anchors.
func markdownTOC(w *bufio.Writer, l layout) {
	fmt.Fprintf(w, "**Contents:** [Claims](#claims) ([how verdicts are decided](#how-verdicts-are-decided)) · [Experiments](#experiments)\n\n")
	for _, s := range l.sections {
		fmt.Fprintf(w, "- [%s](#%s)", s.title, anchor(s.title))
		if len(s.claims) > 0 {
			h := "Claims about " + s.figure
			fmt.Fprintf(w, " — [%s](#%s)", s.claimCount(), anchor(h))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

func markdownSection(w *bufio.Writer, s sectionLayout) {
	fmt.Fprintf(w, "## %s\n\n%s\n\n", s.title, mdText(s.description))
	if !s.ran {
		fmt.Fprintf(w, "**Not run**: %s\n\n", mdText(s.notRun))
	} else {
		fmt.Fprintf(w, "%s\n\n", s.facts)
		fmt.Fprintf(w, "Parameters: `%s`\n\n", s.params)
		if len(s.notes) > 0 {
			fmt.Fprintf(w, "Not applicable:\n\n")
			for _, n := range s.notes {
				fmt.Fprintf(w, "- %s\n", mdText(n))
			}
			fmt.Fprintln(w)
		}
		for _, g := range s.figures {
			if f := g.main; f.SVG == nil {
				fmt.Fprintf(w, "(figure %s unavailable: %s)\n\n", f.File, mdText(f.Err))
			} else {
				fmt.Fprintf(w, "![%s: %s](%s)\n\n*%s*\n\n", s.id, g.label, f.File, figureCaption(g.label, f))
			}
			if len(g.others) > 0 {
				var links []string
				for _, f := range g.others {
					links = append(links, fmt.Sprintf("[%s](%s)", protocolTitle(f.Protocol), f.File))
				}
				fmt.Fprintf(w, "%s: %s.\n\n", g.othersSummary(), strings.Join(links, ", "))
			}
		}
		for _, g := range s.grids {
			fmt.Fprintf(w, "**%s** — %s\n\n", mdText(g.label), g.caption())
			mdHeader(w, append([]string{g.xname}, g.schemes...)...)
			for _, row := range g.rows {
				mdRow(w, row...)
			}
			fmt.Fprintln(w)
		}
		markdownConvergence(w, s.convergence)
	}
	if len(s.claims) == 0 {
		return
	}
	fmt.Fprintf(w, "### Claims about %s\n\n", s.figure)
	for _, c := range s.claims {
		cl := c.claim
		fmt.Fprintf(w, "#### %s\n\n", cl.ID)
		fmt.Fprintf(w, "> “%s”\n> — %s\n\n", mdText(cl.Quote), mdText(source(cl)))
		fmt.Fprintf(w, "Metric `%s`. %s Threshold: %s\n\n", cl.Metric, readingLine(cl), mdText(cl.Threshold))
		if o := cl.Other; o != nil {
			fmt.Fprintf(w, "Other reading, %s (not counted): %s\n\n", o.Name, mdText(o.Threshold))
		}
		mdHeader(w, outcomeHeader...)
		for _, o := range c.outcomes {
			mdRow(w, string(o.protocol), "**"+o.verdict.String()+"**", o.est, o.ci, o.n, otherCell(o), o.reason)
		}
		fmt.Fprintln(w)
		for _, o := range c.outcomes {
			if o.other != "" {
				fmt.Fprintf(w, "- Other reading under %s: %s — %s\n", o.protocol, o.other, mdText(o.otherReason))
			}
		}
		if cl.Other != nil {
			fmt.Fprintln(w)
		}
		for _, o := range c.outcomes {
			if len(o.comparisons) == 0 {
				continue
			}
			fmt.Fprintf(w, "Comparisons under %s:\n\n", o.protocol)
			mdHeader(w, comparisonHeader...)
			for _, cmp := range o.comparisons {
				mdRow(w, cmp.at, cmp.test, cmp.values, cmp.ratio, cmp.interval, cmp.verdict.String()+cmp.note)
			}
			if len(o.omitted) > 0 {
				fmt.Fprintf(w, "\n(%s)\n", omittedLine(o.omitted))
			}
			fmt.Fprintln(w)
		}
	}
}

// intervalHeader heads the interval columns.
var intervalHeader = fmt.Sprintf("%.0f%% interval", 100*claims.Level)

// protocolNames returns the protocols' names in report order.
func protocolNames() []string {
	out := make([]string, len(judgedUnder))
	for i, p := range judgedUnder {
		out[i] = string(p)
	}
	return out
}

// WriteVerdictTable writes the Markdown verdict tables for a README: the
// bottom line (the paper's statements with their verdicts, and the
// findings), then per experiment the number of claims and, per protocol,
// the counts of each verdict (hold/fail/inconclusive/not evaluated), a
// total row, and lines stating the protocols, the settings, the
// experiments' recorded wall time and the generation date.
func (r *Report) WriteVerdictTable(out io.Writer) error {
	w := bufio.NewWriter(out)
	if l := r.layout(); len(l.bottom) > 0 {
		markdownBottomLine(w, l, func(id string) string { return "`" + id + "`" })
		fmt.Fprintf(w, "Claims per experiment and protocol:\n\n")
	}
	cols := []string{"Figure", "Experiment", "Claims"}
	for _, p := range judgedUnder {
		cols = append(cols, string(p)+" (hold/fail/inc./n.e.)")
	}
	mdHeader(w, cols...)
	row := func(fig, name string, n int, counts []string) {
		mdRow(w, append([]string{fig, name, fmt.Sprint(n)}, counts...)...)
	}
	for _, e := range r.layout().experiments {
		name := e.id
		switch {
		case !e.ran && e.failed:
			name += " (could not run)"
		case !e.ran:
			name += " (not run)"
		}
		row(e.figure, name, e.numClaims, e.counts)
	}
	row("", "**total**", r.NumClaims(), r.Totals().cells())
	fmt.Fprintf(w, "\n%s\n\n%s. %s Generated %s.\n", protocolLegend, mdText(strings.Join(r.settings(), " · ")), r.computeLine(),
		r.Meta.Generated.UTC().Format(time.RFC3339))
	return w.Flush()
}
