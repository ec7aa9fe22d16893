package report

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"strings"

	"wcmc/claims"
	"wcmc/runner"
	"wcmc/scheme"
)

// esc escapes text for HTML element content and attribute values. The
// output is also well-formed XML (html.EscapeString uses numeric
// references for quotes).
func esc(s string) string { return html.EscapeString(s) }

// css is the report's only style sheet; it has no '<' or '&', so the
// document stays well-formed XML.
const css = `
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; color: #222; line-height: 1.45; }
h1 { font-size: 1.5rem; } h2 { margin-top: 2.5rem; border-bottom: 1px solid #ccc; } h4 { margin-bottom: 0.3rem; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.88rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
figure { display: inline-block; margin: 0.5rem 1rem 0.5rem 0; }
figure svg { max-width: 100%; height: auto; }
figcaption { font-size: 0.8rem; color: #555; }
blockquote { margin: 0.5rem 0; padding-left: 1rem; border-left: 3px solid #bbb; color: #444; }
code { font-size: 0.85rem; word-break: break-word; }
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

// figureID is the id of a figure element.
func figureID(spec runner.Spec, metric string) string { return "fig-" + spec.ID + "-" + metric }

// sectionID is the id of an experiment's section.
func sectionID(spec runner.Spec) string { return "exp-" + spec.ID }

// WriteHTML writes the report as a self-contained HTML page (report.html):
// figures are inlined as SVG, the style sheet is embedded, and nothing is
// loaded from elsewhere. The page is also well-formed XML.
func (r *Report) WriteHTML(out io.Writer) error {
	w := bufio.NewWriter(out)
	m := r.Meta
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
	p("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n")
	p("<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n", esc("wcmc reproduction report"), css)
	p("<h1>%s</h1>\n", esc(Title))
	t := r.Totals()
	p("<p><strong>Does it reproduce?</strong> %s.</p>\n", esc(r.totalsLine()))
	for _, pr := range scheme.Protocols {
		if t.Judged(pr) == 0 {
			continue
		}
		v := t[pr]
		p("<p>%s: %s %d · %s %d · %s %d · %s %d</p>\n", esc(string(pr)), verdictSpan(claims.Holds), v[claims.Holds], verdictSpan(claims.Fails), v[claims.Fails],
			verdictSpan(claims.Inconclusive), v[claims.Inconclusive], verdictSpan(claims.NotEvaluated), v[claims.NotEvaluated])
	}
	p("<p class=\"generated\">%s</p>\n<p>%s</p>\n", esc(m.generatedLine()), esc(r.computeLine()))
	if m.Command != "" {
		p("<p>Command: <code>%s</code></p>\n", esc(m.Command))
	}
	p("<p>Settings: %s.</p>\n", esc(strings.Join(m.settings(), " · ")))

	p("<h2 id=\"claims\">Claims</h2>\n<p>%s</p>\n<table>\n<tr><th>Claim</th><th>Figure</th><th>Metric</th>", esc(protocolLegend))
	for _, pr := range scheme.Protocols {
		p("<th>%s</th>", esc(string(pr)))
	}
	p("</tr>\n")
	for _, s := range r.Sections {
		for _, c := range s.Claims {
			p("<tr><td><a href=\"#%s\">%s</a></td><td>%s</td><td><code>%s</code></td>", esc(c.Claim.ID), esc(c.Claim.ID), esc(c.Claim.Figure), esc(c.Claim.Metric))
			for _, pr := range scheme.Protocols {
				if o, ok := c.Under(pr); ok {
					p("<td>%s</td>", verdictSpan(o.Verdict))
				} else {
					p("<td>–</td>")
				}
			}
			p("</tr>\n")
		}
	}
	p("</table>\n<h3>How verdicts are decided</h3>\n<p>%s</p>\n", esc(claims.Method))

	p("<h2 id=\"experiments\">Experiments</h2>\n<p>Claims per protocol: hold/fail/inconclusive/not evaluated.</p>\n<table>\n<tr><th>Experiment</th><th>Figure</th><th>Trials</th><th>Computed</th><th>Wall time</th>")
	for _, pr := range scheme.Protocols {
		p("<th>%s</th>", esc(string(pr)))
	}
	p("<th>Status</th></tr>\n")
	for _, s := range r.Sections {
		trials, computed, wt := runFacts(s)
		vc := verdictCounts(s.Claims)
		p("<tr><td><a href=\"#%s\">%s</a></td><td>%s</td><td class=\"num\">%s</td><td>%s</td><td class=\"num\">%s</td>",
			esc(sectionID(s.Spec)), esc(s.Spec.ID), esc(s.Spec.Figure), esc(trials), esc(computed), esc(wt))
		for _, pr := range scheme.Protocols {
			p("<td class=\"num\">%s</td>", esc(vc.cell(pr)))
		}
		p("<td>%s</td></tr>\n", esc(status(s)))
	}
	p("</table>\n")

	for _, s := range r.Sections {
		r.htmlSection(w, s)
	}
	p("</body>\n</html>\n")
	return w.Flush()
}

func (r *Report) htmlSection(w *bufio.Writer, s Section) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("<section id=\"%s\">\n<h2>%s</h2>\n<p>%s</p>\n", esc(sectionID(s.Spec)), esc(title(s.Spec)), esc(s.Spec.Description))
	if s.Result == nil {
		p("<p><strong>Not run</strong>: %s</p>\n", esc(s.NotRun))
	} else {
		res := s.Result
		quick := ""
		if res.Quick {
			quick = ", smoke-sized (--quick)"
		}
		p("<p>Seed %d, %d trials per point%s, computed %s, wall time %s.</p>\n", res.Seed, res.Trials, esc(quick),
			esc(res.Start.UTC().Format("2006-01-02 15:04:05Z")), esc(fmtDur(wall(res))))
		p("<p>Parameters: <code>%s</code></p>\n", esc(strings.Join(paramList(res), " ")))
		if len(res.Notes) > 0 {
			p("<p>Not applicable:</p>\n<ul>\n")
			for _, n := range res.Notes {
				p("<li>%s</li>\n", esc(n.String()))
			}
			p("</ul>\n")
		}
		for _, f := range s.Figures {
			p("<figure id=\"%s\">\n", esc(figureID(s.Spec, f.Metric)))
			if f.SVG != nil {
				w.Write(f.SVG)
				p("\n")
			} else {
				p("<p>(figure unavailable: %s)</p>\n", esc(f.Err))
			}
			p("<figcaption>%s (%s)</figcaption>\n</figure>\n", esc(f.File), esc(f.Metric))
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
			p("<table>\n<caption>%s — mean [5%%, 95%%] over %d trials (– : not applicable)</caption>\n<tr><th>%s</th>", esc(label), res.Trials, esc(s.Spec.X))
			for _, sc := range g.schemes {
				p("<th>%s</th>", esc(sc))
			}
			p("</tr>\n")
			for pt, x := range g.xs {
				p("<tr><td class=\"num\">%s</td>", esc(runner.FormatX(x)))
				for _, sc := range g.schemes {
					p("<td class=\"num\">%s</td>", esc(g.text(sc, pt, res.Trials)))
				}
				p("</tr>\n")
			}
			p("</table>\n")
		}
	}
	if len(s.Claims) > 0 {
		p("<h3>Claims about %s</h3>\n", esc(s.Spec.Figure))
	}
	for _, c := range s.Claims {
		cl := c.Claim
		p("<div class=\"claim\" id=\"%s\">\n<h4>%s", esc(cl.ID), esc(cl.ID))
		for _, o := range c.Outcomes {
			p(" %s %s", esc(string(o.Protocol)), verdictSpan(o.Verdict))
		}
		p("</h4>\n<blockquote>“%s”<br/>— %s (%s; source: %s)</blockquote>\n", esc(cl.Quote), esc(cl.Section), esc(cl.Figure), esc(cl.Source))
		p("<p>Metric <code>%s</code>. Threshold: %s</p>\n", esc(cl.Metric), esc(cl.Threshold))
		p("<table>\n<tr><th>Protocol</th><th>Verdict</th><th>Ratio</th><th>%s</th><th>Trials</th><th>Trials to decide</th><th>Why</th></tr>\n", esc(intervalHeader))
		for _, o := range c.Outcomes {
			est, ci, n, toDecide := decidingCells(o)
			p("<tr><td>%s</td><td>%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td>%s</td></tr>\n",
				esc(string(o.Protocol)), verdictSpan(o.Verdict), esc(est), esc(ci), esc(n), esc(toDecide), esc(o.Reason))
		}
		p("</table>\n")
		for _, o := range c.Outcomes {
			cs, omitted := shown(o)
			if len(cs) == 0 {
				continue
			}
			p("<p>Comparisons under %s:</p>\n<table>\n<tr><th>At</th><th>Test</th><th>Values (mean, n)</th><th>Ratio</th><th>%s</th><th>Result</th></tr>\n",
				esc(string(o.Protocol)), esc(intervalHeader))
			for _, cmp := range cs {
				p("<tr><td>%s</td><td>%s</td><td>%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td>%s%s</td></tr>\n",
					esc(cmp.At), esc(cmp.Test), esc(values(cmp)), esc(ratio(cmp)), esc(cmp.Interval()), verdictSpan(cmp.Verdict), esc(resultNote(cmp)))
			}
			p("</table>\n")
			if omitted > 0 {
				p("<p>(%s not listed, all holding.)</p>\n", esc(countOf(omitted, "other comparison")))
			}
		}
		p("</div>\n")
	}
	p("</section>\n")
}
