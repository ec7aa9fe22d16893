package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/wcmc-project/wcmc/claims"
	"github.com/wcmc-project/wcmc/scheme"
)

// The claims' verdicts as the report counts and tabulates them.

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

// judgedUnder lists the protocols claims are judged under, in the order
// reports show them: the three optimisation protocols, then AnyProtocol
// for the claims that compare only schemes that learn no map.
var judgedUnder = append(slices.Clone(scheme.Protocols), claims.AnyProtocol)

// cells returns the cell of each protocol of judgedUnder.
func (c Counts) cells() []string {
	out := make([]string, len(judgedUnder))
	for i, p := range judgedUnder {
		out[i] = c.cell(p)
	}
	return out
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

// NumClaims returns the number of the paper's claims in the report (the
// project's additions left out, as in Totals).
func (r *Report) NumClaims() int {
	n := 0
	for _, s := range r.Sections {
		n += numPaperClaims(s.Claims)
	}
	return n
}

// numPaperClaims counts the claims of cs that are the paper's.
func numPaperClaims(cs []Checked) int {
	n := 0
	for _, c := range cs {
		if !c.Claim.Addition {
			n++
		}
	}
	return n
}

// NumAdditions returns the number of the project's additions in the
// report.
func (r *Report) NumAdditions() int {
	n := 0
	for _, s := range r.Sections {
		n += len(s.Claims) - numPaperClaims(s.Claims)
	}
	return n
}

// verdictCounts counts the verdicts of the paper's claims of cs by
// protocol (the project's additions are not counted).
func verdictCounts(cs []Checked) Counts {
	t := Counts{}
	for _, p := range judgedUnder {
		t[p] = map[claims.Verdict]int{}
	}
	for _, c := range cs {
		if c.Claim.Addition {
			continue
		}
		for _, o := range c.Outcomes {
			t[o.Protocol][o.Verdict]++
		}
	}
	return t
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

// resultNote is what result adds to the verdict.
func resultNote(c claims.Comparison) string {
	s := ""
	if c.Note != "" {
		s += " (" + c.Note + ")"
	}
	return s
}

// maxShown is the most comparisons a claim's table lists under one
// protocol; beyond it, the table lists the deciding comparison first, then
// those that fail, then the undecided ones, then those that hold, and
// counts by verdict the ones it leaves out.
const maxShown = 16

// shown returns the comparisons of o to list, in o's order, and the
// number of each verdict among those left out.
func shown(o claims.Outcome) (cs []claims.Comparison, omitted map[claims.Verdict]int) {
	if len(o.Comparisons) <= maxShown {
		return o.Comparisons, nil
	}
	rank := func(i int) int {
		switch v := o.Comparisons[i].Verdict; {
		case i == o.Deciding:
			return 0
		case v == claims.Fails:
			return 1
		case v == claims.Holds:
			return 3
		}
		return 2
	}
	order := make([]int, len(o.Comparisons))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return rank(a) - rank(b) })
	keep := order[:maxShown]
	slices.Sort(keep)
	for _, i := range keep {
		cs = append(cs, o.Comparisons[i])
	}
	omitted = map[claims.Verdict]int{}
	for _, i := range order[maxShown:] {
		omitted[o.Comparisons[i].Verdict]++
	}
	return cs, omitted
}

// decidingCells returns the estimate, interval and trials of an outcome's
// deciding comparison, "" where there is none.
func decidingCells(o claims.Outcome) (est, ci, n string) {
	d, ok := o.DecidingComparison()
	if !ok {
		return "", "", ""
	}
	return ratio(d), d.Interval(), strconv.Itoa(d.N)
}

// CSVFile is the name of the claims table in the output directory.
const CSVFile = "claims.csv"

// CSVHeader is the header of claims.csv.
var CSVHeader = []string{"claim", "figure", "metric", "source", "protocol", "verdict", "estimate", "ci_low", "ci_high", "trials", "other_reading", "other_verdict"}

// WriteCSV writes claims.csv: one row per claim and protocol it is judged
// under ("any" for a claim that compares only schemes that learn no map),
// with the claim's source ("paper", or "project" for an addition), the
// verdict and, from the deciding comparison, the estimate and its Level
// interval as ratios (above 1 supports the claim) and the trials; then the
// claim's other reading, if any, and its verdict.
func (r *Report) WriteCSV(out io.Writer) error {
	w := csv.NewWriter(out)
	w.Write(CSVHeader)
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, s := range r.Sections {
		for _, c := range s.Claims {
			src := "paper"
			if c.Claim.Addition {
				src = "project"
			}
			for _, o := range c.Outcomes {
				row := []string{c.Claim.ID, c.Claim.Figure, c.Claim.Metric, src, string(o.Protocol), o.Verdict.Code(), "", "", "", "", "", ""}
				if d, ok := o.DecidingComparison(); ok && o.Verdict != claims.NotEvaluated {
					est, lo, hi := d.Ratio()
					row[6], row[7], row[8], row[9] = f(est), f(lo), f(hi), strconv.Itoa(d.N)
				}
				if c.Claim.Other != nil && o.Other != nil {
					row[10], row[11] = c.Claim.Other.Name, o.Other.Verdict.Code()
				}
				w.Write(row)
			}
		}
	}
	w.Flush()
	return w.Error()
}
