package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"wcmc/claims"
	"wcmc/runner"
	"wcmc/scheme"
)

// Title is the heading of every report.
const Title = "Reproducing Liu & Simeone, “Channel-Driven Monte Carlo Sampling for Bayesian Distributed Learning in Wireless Data Centers”, Section VI"

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
	for i := range cells {
		cells[i] = mdCell(cells[i])
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
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
	m := r.Meta
	fmt.Fprintf(w, "# %s\n\n", Title)
	fmt.Fprintf(w, "**Does it reproduce?** %s.\n\n", r.totalsLine())
	fmt.Fprintf(w, "%s\n\n%s\n\n", m.generatedLine(), r.computeLine())
	if m.Command != "" {
		fmt.Fprintf(w, "Command: `%s`\n\n", m.Command)
	}
	fmt.Fprintf(w, "Settings: %s.\n\n", mdText(strings.Join(m.settings(), " · ")))

	fmt.Fprintf(w, "## Claims\n\n%s\n\n", protocolLegend)
	mdHeader(w, append([]string{"Claim", "Figure", "Metric"}, protocolNames()...)...)
	for _, s := range r.Sections {
		for _, c := range s.Claims {
			cells := []string{fmt.Sprintf("[%s](#%s)", c.Claim.ID, c.Claim.ID), c.Claim.Figure, c.Claim.Metric}
			for _, p := range scheme.Protocols {
				cell := "–"
				if o, ok := c.Under(p); ok {
					cell = "**" + o.Verdict.String() + "**"
				}
				cells = append(cells, cell)
			}
			mdRow(w, cells...)
		}
	}
	fmt.Fprintf(w, "\n### How verdicts are decided\n\n%s\n\n", claims.Method)

	fmt.Fprintf(w, "## Experiments\n\nClaims per protocol: hold/fail/inconclusive/not evaluated.\n\n")
	mdHeader(w, append(append([]string{"Experiment", "Figure", "Trials", "Computed", "Wall time"}, protocolNames()...), "Status")...)
	for _, s := range r.Sections {
		trials, computed, wt := runFacts(s)
		vc := verdictCounts(s.Claims)
		cells := []string{fmt.Sprintf("[%s](#%s)", s.Spec.ID, anchor(title(s.Spec))), s.Spec.Figure, trials, computed, wt}
		for _, p := range scheme.Protocols {
			cells = append(cells, vc.cell(p))
		}
		mdRow(w, append(cells, status(s))...)
	}
	fmt.Fprintln(w)

	for _, s := range r.Sections {
		r.markdownSection(w, s)
	}
	return w.Flush()
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

func (r *Report) markdownSection(w *bufio.Writer, s Section) {
	fmt.Fprintf(w, "## %s\n\n%s\n\n", title(s.Spec), mdText(s.Spec.Description))
	if s.Result == nil {
		fmt.Fprintf(w, "**Not run**: %s\n\n", mdText(s.NotRun))
	} else {
		res := s.Result
		fmt.Fprintf(w, "Seed %d, %d trials per point%s, computed %s, wall time %s.\n\n", res.Seed, res.Trials,
			map[bool]string{true: ", smoke-sized (--quick)", false: ""}[res.Quick],
			res.Start.UTC().Format("2006-01-02 15:04:05Z"), fmtDur(wall(res)))
		fmt.Fprintf(w, "Parameters: `%s`\n\n", strings.Join(paramList(res), " "))
		if len(res.Notes) > 0 {
			fmt.Fprintf(w, "Not applicable:\n\n")
			for _, n := range res.Notes {
				fmt.Fprintf(w, "- %s\n", mdText(n.String()))
			}
			fmt.Fprintln(w)
		}
		for _, f := range s.Figures {
			if f.SVG == nil {
				fmt.Fprintf(w, "(figure %s unavailable: %s)\n\n", f.File, mdText(f.Err))
				continue
			}
			fmt.Fprintf(w, "![%s (%s)](%s)\n\n", s.Spec.ID, f.Metric, f.File)
		}
		for _, metric := range s.Spec.Metrics {
			g := grid(s, metric)
			if len(g.schemes) == 0 {
				continue
			}
			label := s.Spec.MetricLabel[metric]
			if label == "" {
				label = metric
			}
			fmt.Fprintf(w, "**%s** — mean [5%%, 95%%] over %d trials (– : not applicable)\n\n", mdText(label), res.Trials)
			mdHeader(w, append([]string{s.Spec.X}, g.schemes...)...)
			for p, x := range g.xs {
				cells := []string{runner.FormatX(x)}
				for _, sc := range g.schemes {
					cells = append(cells, g.text(sc, p, res.Trials))
				}
				mdRow(w, cells...)
			}
			fmt.Fprintln(w)
		}
	}
	if len(s.Claims) == 0 {
		return
	}
	fmt.Fprintf(w, "### Claims about %s\n\n", s.Spec.Figure)
	for _, c := range s.Claims {
		cl := c.Claim
		fmt.Fprintf(w, "#### %s\n\n", cl.ID)
		fmt.Fprintf(w, "> “%s”\n> — %s (%s; source: %s)\n\n", mdText(cl.Quote), cl.Section, cl.Figure, mdText(cl.Source))
		fmt.Fprintf(w, "Metric `%s`. Threshold: %s\n\n", cl.Metric, mdText(cl.Threshold))
		mdHeader(w, "Protocol", "Verdict", "Ratio", intervalHeader, "Trials", "Trials to decide", "Why")
		for _, o := range c.Outcomes {
			est, ci, n, toDecide := decidingCells(o)
			mdRow(w, string(o.Protocol), "**"+o.Verdict.String()+"**", est, ci, n, toDecide, o.Reason)
		}
		fmt.Fprintln(w)
		for _, o := range c.Outcomes {
			cs, omitted := shown(o)
			if len(cs) == 0 {
				continue
			}
			fmt.Fprintf(w, "Comparisons under %s:\n\n", o.Protocol)
			mdHeader(w, "At", "Test", "Values (mean, n)", "Ratio", intervalHeader, "Result")
			for _, cmp := range cs {
				mdRow(w, cmp.At, cmp.Test, values(cmp), ratio(cmp), cmp.Interval(), result(cmp))
			}
			if omitted > 0 {
				fmt.Fprintf(w, "\n(%s not listed, all holding.)\n", countOf(omitted, "other comparison"))
			}
			fmt.Fprintln(w)
		}
	}
}

// intervalHeader heads the interval columns.
var intervalHeader = fmt.Sprintf("%.0f%% interval", 100*claims.Level)

// protocolNames returns the protocols' names in report order.
func protocolNames() []string {
	out := make([]string, len(scheme.Protocols))
	for i, p := range scheme.Protocols {
		out[i] = string(p)
	}
	return out
}

// WriteVerdictTable writes the short Markdown verdict table for a README:
// per experiment the number of claims and, per protocol, the counts of
// each verdict (hold/fail/inconclusive/not evaluated), a total row, and
// lines stating the protocols, the settings, the experiments' recorded
// wall time and the generation date.
func (r *Report) WriteVerdictTable(out io.Writer) error {
	w := bufio.NewWriter(out)
	cols := []string{"Figure", "Experiment", "Claims"}
	for _, p := range scheme.Protocols {
		cols = append(cols, string(p)+" (hold/fail/inc./n.e.)")
	}
	mdHeader(w, cols...)
	row := func(fig, name string, n int, vc Counts) {
		cells := []string{fig, name, fmt.Sprint(n)}
		for _, p := range scheme.Protocols {
			cells = append(cells, vc.cell(p))
		}
		mdRow(w, cells...)
	}
	for _, s := range r.Sections {
		name := s.Spec.ID
		switch {
		case s.Result == nil && s.Failed:
			name += " (could not run)"
		case s.Result == nil:
			name += " (not run)"
		}
		row(s.Spec.Figure, name, len(s.Claims), verdictCounts(s.Claims))
	}
	row("", "**total**", r.NumClaims(), r.Totals())
	fmt.Fprintf(w, "\n%s\n\n%s. %s Generated %s.\n", protocolLegend, mdText(strings.Join(r.Meta.settings(), " · ")), r.computeLine(),
		r.Meta.Generated.UTC().Format(time.RFC3339))
	return w.Flush()
}
