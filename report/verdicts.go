package report

import (
	"encoding/csv"
	"fmt"
	"io"
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

// cells returns the cell of each protocol of scheme.Protocols.
func (c Counts) cells() []string {
	out := make([]string, len(scheme.Protocols))
	for i, p := range scheme.Protocols {
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

// NumClaims returns the number of claims in the report.
func (r *Report) NumClaims() int {
	n := 0
	for _, s := range r.Sections {
		n += len(s.Claims)
	}
	return n
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
