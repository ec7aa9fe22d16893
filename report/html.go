package report

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"slices"
	"strings"

	"github.com/wcmc-project/wcmc/claims"
)

// esc escapes text for HTML element content and attribute values. The
// output is also well-formed XML (html.EscapeString uses numeric
// references for quotes).
func esc(s string) string { return html.EscapeString(s) }

// css is the report's only style sheet; it has no '<' or '&', so the
// document stays well-formed XML. Figures take the text's width; tables
// wider than the page scroll sideways rather than squeezing their cells;
// identifiers (metric and claim names) never break inside a word.
const css = `
body { font-family: system-ui, sans-serif; max-width: 64rem; margin: 2rem auto; padding: 0 1rem; color: #222; line-height: 1.45; }
h1 { font-size: 1.5rem; } h2 { margin-top: 2.5rem; border-bottom: 1px solid #ccc; } h4 { margin-bottom: 0.3rem; }
a { color: #0b5cad; }
nav.toc { background: #f7f7f7; border: 1px solid #ddd; border-radius: 4px; padding: 0.6rem 1rem; margin: 1rem 0; }
nav.toc ol { margin: 0.2rem 0; padding-left: 1.4rem; } nav.toc li { margin: 0.1rem 0; }
nav.toc .sub { font-size: 0.88rem; color: #555; }
.top { font-size: 0.8rem; font-weight: normal; margin-left: 0.6rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.88rem; }
caption { text-align: left; font-size: 0.88rem; color: #444; padding-bottom: 0.2rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td code, th code, .id { white-space: nowrap; }
figure { display: block; margin: 1rem 0; }
figure svg { width: 100%; height: auto; }
figure.main { max-width: 56rem; }
.protocols { display: flex; flex-wrap: wrap; gap: 1rem; }
.protocols figure { flex: 1 1 28rem; margin: 0.5rem 0; }
details { margin: 0.5rem 0 1.5rem 0; } summary { cursor: pointer; color: #0b5cad; }
figcaption { font-size: 0.85rem; color: #555; }
blockquote { margin: 0.5rem 0; padding-left: 1rem; border-left: 3px solid #bbb; color: #444; }
code { font-size: 0.85rem; overflow-wrap: break-word; }
.v { font-weight: bold; padding: 0 0.3rem; border-radius: 3px; white-space: nowrap; }
.v-holds { background: #d4f0d4; } .v-fails { background: #f6d0d0; }
.v-inconclusive { background: #f3ecc8; } .v-not-evaluated { background: #e4e4e4; }
.claim { margin: 1rem 0 1.5rem 0; }
.generated { color: #555; }
`

// verdictSpan renders a verdict as a coloured label.
func verdictSpan(v claims.Verdict) string {
	cls := "v-" + strings.ReplaceAll(v.String(), " ", "-")
	return fmt.Sprintf(`<span class="v %s">%s</span>`, cls, esc(v.String()))
}

// htmlBottomLine writes the bottom line: the paper's statements with their
// verdicts, then the findings.
func htmlBottomLine(w *bufio.Writer, l layout) {
	if len(l.bottom) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("<h2 id=\"bottom-line\">Bottom line</h2>\n<p>%s</p>\n<div class=\"scroll\"><table>\n", esc(bottomLegend))
	htmlRow(w, "th", escAll(bottomHeader))
	for _, b := range l.bottom {
		htmlRow(w, "td", []string{esc(b.figure), fmt.Sprintf("<a class=\"id\" href=\"#%s\">%s</a>: “%s”", esc(b.id), esc(b.id), esc(b.quote)),
			bottomCell(b.paper), bottomCell(b.converged), bottomCell(b.fresh)})
	}
	p("</table></div>\n")
	if len(l.findings) > 0 {
		p("<p>What a reader must know:</p>\n<ul>\n")
		for _, f := range l.findings {
			p("<li>%s</li>\n", esc(f))
		}
		p("</ul>\n")
	}
}

// bottomCell renders a bottom-line verdict cell with the verdict's colour.
func bottomCell(s string) string {
	prefix, v, found := strings.Cut(s, ": ")
	if !found {
		v, prefix = s, ""
	} else {
		prefix += ": "
	}
	for _, vd := range claims.Verdicts {
		if vd.String() == v {
			return esc(prefix) + verdictSpan(vd)
		}
	}
	return esc(s)
}

// figureID is the id of a figure element.
func figureID(experiment, metric string) string { return "fig-" + experiment + "-" + metric }

// sectionID is the id of an experiment's section.
func sectionID(experiment string) string { return "exp-" + experiment }

// WriteHTML writes the report as a self-contained HTML page (report.html):
// figures are inlined as SVG, the style sheet is embedded, and nothing is
// loaded from elsewhere. The page is also well-formed XML.
func (r *Report) WriteHTML(out io.Writer) error {
	w := bufio.NewWriter(out)
	l := r.layout()
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
	p("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n")
	p("<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n", esc("wcmc reproduction report"), css)
	p("<h1>%s</h1>\n", esc(l.title))
	p("<p><strong>%s</strong> %s.</p>\n", esc(l.question), esc(l.headline))
	for _, c := range l.counts {
		v := c.verdicts
		p("<p>%s: %s %d · %s %d · %s %d · %s %d</p>\n", esc(string(c.protocol)), verdictSpan(claims.Holds), v[claims.Holds], verdictSpan(claims.Fails), v[claims.Fails],
			verdictSpan(claims.Inconclusive), v[claims.Inconclusive], verdictSpan(claims.NotEvaluated), v[claims.NotEvaluated])
	}
	htmlBottomLine(w, l)
	p("<p class=\"generated\">%s</p>\n<p>%s</p>\n", esc(l.generated), esc(l.compute))
	if l.command != "" {
		p("<p>Command: <code>%s</code></p>\n", esc(l.command))
	}
	p("<p>Settings:</p>\n<ul>\n")
	for _, s := range l.settings {
		p("<li>%s</li>\n", esc(s))
	}
	p("</ul>\n")
	htmlTOC(w, l)

	p("<h2 id=\"claims\">Claims%s</h2>\n<p>%s</p>\n<div class=\"scroll\"><table>\n<tr><th>Claim</th><th>Figure</th><th>Metric</th>", topLink, esc(protocolLegend))
	for _, pr := range judgedUnder {
		p("<th>%s</th>", esc(string(pr)))
	}
	p("</tr>\n")
	for _, c := range l.claims {
		p("<tr><td><a class=\"id\" href=\"#%s\">%s</a>%s</td><td class=\"id\">%s</td><td><code>%s</code></td>", esc(c.id), esc(c.id), esc(additionMark(c.addition)), esc(c.figure), esc(c.metric))
		for _, v := range c.verdicts {
			if v != nil {
				p("<td>%s</td>", verdictSpan(*v))
			} else {
				p("<td>–</td>")
			}
		}
		p("</tr>\n")
	}
	p("</table></div>\n<h3 id=\"method\">How verdicts are decided</h3>\n<ul>\n")
	for _, s := range methodParts() {
		p("<li>%s</li>\n", esc(s))
	}
	p("</ul>\n")

	p("<h2 id=\"experiments\">Experiments%s</h2>\n<p>%s</p>\n<div class=\"scroll\"><table>\n<tr><th>Experiment</th><th>Figure</th><th>Trials</th><th>Computed</th><th>Wall time</th>", topLink, esc(countsLegend))
	for _, pr := range judgedUnder {
		p("<th>%s</th>", esc(string(pr)))
	}
	p("<th>Status</th></tr>\n")
	for _, e := range l.experiments {
		p("<tr><td><a class=\"id\" href=\"#%s\">%s</a></td><td class=\"id\">%s</td><td class=\"num\">%s</td><td>%s</td><td class=\"num\">%s</td>",
			esc(sectionID(e.id)), esc(e.id), esc(e.figure), esc(e.trials), esc(e.computed), esc(e.wall))
		for _, c := range e.counts {
			p("<td class=\"num\">%s</td>", esc(c))
		}
		p("<td>%s</td></tr>\n", esc(e.status))
	}
	p("</table></div>\n")

	for _, s := range l.sections {
		htmlSection(w, s)
	}
	p("</body>\n</html>\n")
	return w.Flush()
}

// htmlRow writes a table row of header (th) or data (td) cells, the cells
// at the indices in num right-aligned as numbers; the cells are HTML.
func htmlRow(w io.Writer, tag string, cells []string, num ...int) {
	fmt.Fprint(w, "<tr>")
	for i, c := range cells {
		if slices.Contains(num, i) {
			fmt.Fprintf(w, "<%s class=\"num\">%s</%s>", tag, c, tag)
		} else {
			fmt.Fprintf(w, "<%s>%s</%s>", tag, c, tag)
		}
	}
	fmt.Fprint(w, "</tr>\n")
}

// escAll escapes each of cells.
func escAll(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = esc(c)
	}
	return out
}

// topLink returns to the table of contents.
const topLink = `<a class="top" href="#contents">↑ contents</a>`

// htmlTOC writes the table of contents: the claims, the method, the
// experiments, and each experiment's section with its figures and claims.
func htmlTOC(w *bufio.Writer, l layout) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("<nav class=\"toc\" id=\"contents\"><strong>Contents</strong>\n<ol>\n")
	p("<li><a href=\"#claims\">Claims</a> (<a href=\"#method\">how verdicts are decided</a>)</li>\n")
	p("<li><a href=\"#experiments\">Experiments</a></li>\n")
	for _, s := range l.sections {
		p("<li><a href=\"#%s\">%s</a>", esc(sectionID(s.id)), esc(s.title))
		var sub []string
		for _, g := range s.figures {
			sub = append(sub, fmt.Sprintf("<a href=\"#%s\">%s</a>", esc(figureID(s.id, g.metric)), esc(g.metric)))
		}
		if len(s.claims) > 0 {
			sub = append(sub, fmt.Sprintf("<a href=\"#%s\">%s</a>", esc(claimsID(s.id)), esc(s.claimCount())))
		}
		if len(sub) > 0 {
			p(" <span class=\"sub\">— %s</span>", strings.Join(sub, " · "))
		}
		p("</li>\n")
	}
	p("</ol>\n</nav>\n")
}

// claimsID is the id of the heading of an experiment's claims.
func claimsID(experiment string) string { return "claims-" + experiment }

// htmlFigure writes one figure with its caption.
func htmlFigure(w *bufio.Writer, id, class, label string, f Figure) {
	fmt.Fprintf(w, "<figure id=\"%s\" class=\"%s\">\n", esc(id), class)
	if f.SVG != nil {
		w.Write(f.SVG)
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "<p>(figure unavailable: %s)</p>\n", esc(f.Err))
	}
	fmt.Fprintf(w, "<figcaption>%s</figcaption>\n</figure>\n", esc(figureCaption(label, f)))
}

func htmlSection(w *bufio.Writer, s sectionLayout) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("<section id=\"%s\">\n<h2>%s%s</h2>\n<p>%s</p>\n", esc(sectionID(s.id)), esc(s.title), topLink, esc(s.description))
	if !s.ran {
		p("<p><strong>Not run</strong>: %s</p>\n", esc(s.notRun))
	} else {
		p("<p>%s</p>\n", esc(s.facts))
		p("<p>Parameters: <code>%s</code></p>\n", esc(s.params))
		if len(s.notes) > 0 {
			p("<p>Not applicable:</p>\n<ul>\n")
			for _, n := range s.notes {
				p("<li>%s</li>\n", esc(n))
			}
			p("</ul>\n")
		}
		for _, g := range s.figures {
			htmlFigure(w, figureID(s.id, g.metric), "main", g.label, g.main)
			if len(g.others) == 0 {
				continue
			}
			p("<details>\n<summary>%s</summary>\n<div class=\"protocols\">\n", esc(g.othersSummary()))
			for _, f := range g.others {
				htmlFigure(w, figureID(s.id, g.metric)+"-"+string(f.Protocol), "", g.label, f)
			}
			p("</div>\n</details>\n")
		}
		for _, g := range s.grids {
			p("<div class=\"scroll\"><table>\n<caption>%s — %s</caption>\n", esc(g.label), esc(g.caption()))
			htmlRow(w, "th", escAll(append([]string{g.xname}, g.schemes...)))
			all := make([]int, len(g.schemes)+1)
			for i := range all {
				all[i] = i
			}
			for _, row := range g.rows {
				htmlRow(w, "td", escAll(row), all...)
			}
			p("</table></div>\n")
		}
		htmlConvergence(w, s.convergence)
	}
	if len(s.claims) > 0 {
		p("<h3 id=\"%s\">Claims about %s</h3>\n", esc(claimsID(s.id)), esc(s.figure))
	}
	for _, c := range s.claims {
		cl := c.claim
		p("<div class=\"claim\" id=\"%s\">\n<h4><span class=\"id\">%s</span>", esc(cl.ID), esc(cl.ID))
		for _, o := range c.outcomes {
			p(" %s %s", esc(string(o.protocol)), verdictSpan(o.verdict))
		}
		p("</h4>\n<blockquote>“%s”<br/>— %s</blockquote>\n", esc(cl.Quote), esc(source(cl)))
		p("<p>Metric <code>%s</code>. %s Threshold: %s</p>\n", esc(cl.Metric), esc(readingLine(cl)), esc(cl.Threshold))
		if o := cl.Other; o != nil {
			p("<p>Other reading, %s (not counted): %s</p>\n", esc(o.Name), esc(o.Threshold))
		}
		p("<div class=\"scroll\"><table>\n")
		htmlRow(w, "th", escAll(outcomeHeader))
		for _, o := range c.outcomes {
			htmlRow(w, "td", []string{esc(string(o.protocol)), verdictSpan(o.verdict), esc(o.est), esc(o.ci), esc(o.n), esc(otherCell(o)), esc(o.reason)}, 2, 3, 4)
		}
		p("</table></div>\n")
		if cl.Other != nil {
			p("<ul>\n")
			for _, o := range c.outcomes {
				if o.other != "" {
					p("<li>Other reading under %s: %s — %s</li>\n", esc(string(o.protocol)), esc(o.other), esc(o.otherReason))
				}
			}
			p("</ul>\n")
		}
		for _, o := range c.outcomes {
			if len(o.comparisons) == 0 {
				continue
			}
			p("<p>Comparisons under %s:</p>\n<div class=\"scroll\"><table>\n", esc(string(o.protocol)))
			htmlRow(w, "th", escAll(comparisonHeader))
			for _, cmp := range o.comparisons {
				htmlRow(w, "td", []string{esc(cmp.at), esc(cmp.test), esc(cmp.values), esc(cmp.ratio), esc(cmp.interval), verdictSpan(cmp.verdict) + esc(cmp.note)}, 3, 4)
			}
			p("</table></div>\n")
			if len(o.omitted) > 0 {
				p("<p>(%s)</p>\n", esc(omittedLine(o.omitted)))
			}
		}
		p("</div>\n")
	}
	p("</section>\n")
}
