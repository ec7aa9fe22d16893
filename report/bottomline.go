package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/wcmc-project/wcmc/claims"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

// The bottom line opens the report: per figure, each of the paper's
// statements with its verdict under the paper's protocol, under the
// converged one, and on fresh signals; then the findings a reader must
// know, each computed from the results.

// bottomRow is one statement of the paper in the bottom-line table.
type bottomRow struct {
	figure, id, quote string
	// verdicts under the paper's protocol, the converged one, and the
	// fresh-signal twin under the default protocol: a verdict, "any: …"
	// for a claim judged once, or "–".
	paper, converged, fresh string
}

// bottomHeader heads the bottom-line table.
var bottomHeader = []string{"Figure", "The paper's statement", "Paper's protocol", "Converged", "Fresh signals (default)"}

// bottomLegend says what the bottom-line table shows.
const bottomLegend = "In-sample verdicts under the paper's optimisation protocol and under a converged one, and the same statement " +
	"checked on fresh signals (err2_fresh or kl_fresh: the learned map applied to signals it was not fitted on) under the default protocol. " +
	"\"any\": the statement compares only schemes that learn no map, so one verdict holds for every protocol. Each claim's section gives its reading, threshold and numbers."

// bottomRows returns the bottom-line rows: every in-sample claim of the
// paper (not its fresh twins, not the project's additions), in figure
// order.
func bottomRows(sections []Section) []bottomRow {
	byID := claimsByID(sections)
	var out []bottomRow
	for _, s := range sections {
		for _, c := range s.Claims {
			if c.Claim.Addition || claims.Fresh(c.Claim.Metric) {
				continue
			}
			row := bottomRow{figure: c.Claim.Figure, id: c.Claim.ID, quote: c.Claim.Quote,
				paper: verdictUnder(c, scheme.Paper), converged: verdictUnder(c, scheme.Converged), fresh: "–"}
			if f, ok := byID[c.Claim.ID+"-fresh"]; ok {
				row.fresh = verdictUnder(f, scheme.Default)
			}
			out = append(out, row)
		}
	}
	return out
}

// claimsByID indexes the checked claims of sections by ID.
func claimsByID(sections []Section) map[string]Checked {
	byID := map[string]Checked{}
	for _, s := range sections {
		for _, c := range s.Claims {
			byID[c.Claim.ID] = c
		}
	}
	return byID
}

// verdictUnder is c's verdict under p as the bottom line shows it: "any:
// v" for a claim judged once, "–" when c is not judged under p.
func verdictUnder(c Checked, p scheme.Protocol) string {
	if o, ok := c.Under(claims.AnyProtocol); ok {
		return "any: " + o.Verdict.String()
	}
	if o, ok := c.Under(p); ok {
		return o.Verdict.String()
	}
	return "–"
}

// findings returns the sentences a reader must know, each from the
// results: statements that hold in sample but fail on fresh signals,
// gradient-budget runs whose SGLD diverged, experiments with too few
// trials to decide, and claims not evaluated for want of a protocol's run.
func findings(sections []Section) []string {
	var out []string
	if s := overfitFinding(sections); s != "" {
		out = append(out, s)
	}
	out = append(out, divergenceFindings(sections)...)
	if s := fewTrialsFinding(sections); s != "" {
		out = append(out, s)
	}
	if s := notRunFinding(sections); s != "" {
		out = append(out, s)
	}
	return out
}

// overfitFinding names the paper's statements that hold in sample under
// at least one protocol while their fresh-signal twin fails under every
// protocol it is judged under: those about WVCMC, whose learned map is
// scored on the signals it was fitted to, apart from those about schemes
// that learn no map.
func overfitFinding(sections []Section) string {
	byID := claimsByID(sections)
	var maps, free []string
	for _, s := range sections {
		for _, c := range s.Claims {
			if c.Claim.Addition || claims.Fresh(c.Claim.Metric) || !anyVerdict(c, claims.Holds) {
				continue
			}
			f, ok := byID[c.Claim.ID+"-fresh"]
			if !ok || len(f.Outcomes) == 0 || !allVerdict(f, claims.Fails) {
				continue
			}
			if c.Claim.MapFree {
				free = append(free, c.Claim.ID)
			} else {
				maps = append(maps, c.Claim.ID)
			}
		}
	}
	var parts []string
	if len(maps) > 0 {
		parts = append(parts, fmt.Sprintf("%s about WVCMC %s on the in-sample metric under at least one protocol but %s on fresh signals under every protocol (%s): "+
			"the in-sample err2 scores a learned map on the very signals it was fitted to, and there the fit, not the scheme, makes the error small",
			countOf(len(maps), "statement"), verb(len(maps), "holds", "hold"), verb(len(maps), "fails", "fail"), strings.Join(maps, ", ")))
	}
	if len(free) > 0 {
		parts = append(parts, fmt.Sprintf("%s about schemes that learn no map %s in sample but %s on fresh signals (%s): see %s",
			countOf(len(free), "statement"), verb(len(free), "holds", "hold"), verb(len(free), "fails", "fail"), strings.Join(free, ", "),
			verb(len(free), "its section", "their sections")))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + "."
}

// verb returns one for a count of 1, other otherwise.
func verb(n int, one, other string) string {
	if n == 1 {
		return one
	}
	return other
}

func anyVerdict(c Checked, v claims.Verdict) bool {
	return slices.ContainsFunc(c.Outcomes, func(o claims.Outcome) bool { return o.Verdict == v })
}

func allVerdict(c Checked, v claims.Verdict) bool {
	return !slices.ContainsFunc(c.Outcomes, func(o claims.Outcome) bool { return o.Verdict != v })
}

// DivergedErr2 is the err2 above which a run counts as diverged in the
// bottom line: second moments off by more than a hundredfold.
const DivergedErr2 = 100

// divergenceFindings says, for each experiment with SGLD, how many trials
// end (at the largest gradient budget) with err2 above DivergedErr2 or
// not finite.
func divergenceFindings(sections []Section) []string {
	var out []string
	for _, s := range sections {
		res := s.Result
		if res == nil || !slices.Contains(s.Spec.Schemes, scheme.SGLD) || s.Spec.StreamID() != s.Spec.ID {
			continue
		}
		last, n, bad := finalValues(res, scheme.SGLD, "err2")
		if n == 0 || bad == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s (%s): SGLD diverged in %d of %d trials (err2 above %g or not finite at %s = %s), so its mean err2 there is set by those runs; "+
			"the figure shows the trials' 5–95%% band and median.", s.Spec.ID, s.Spec.Figure, bad, n, float64(DivergedErr2), s.Spec.X, runner.FormatX(last)))
	}
	return out
}

// finalValues counts, at the largest x where scheme has values of metric,
// its trials and those above DivergedErr2 or not finite.
func finalValues(res *runner.Result, sc, metric string) (x float64, n, bad int) {
	x = math.Inf(-1)
	for _, t := range res.Tasks {
		for _, r := range t.Rows {
			if r.Scheme == sc && r.Metric == metric && t.X > x {
				x = t.X
			}
		}
	}
	for _, t := range res.Tasks {
		if t.X != x {
			continue
		}
		for _, r := range t.Rows {
			if r.Scheme == sc && r.Metric == metric {
				n++
				if !(r.Value <= DivergedErr2) {
					bad++
				}
			}
		}
	}
	return x, n, bad
}

// fewTrialsFinding names the experiments that ran fewer trials per point
// than claims.MinTrials, where no comparison can be decided.
func fewTrialsFinding(sections []Section) string {
	var parts []string
	for _, s := range sections {
		if s.Result != nil && s.Result.Trials < claims.MinTrials && len(s.Claims) > 0 {
			parts = append(parts, fmt.Sprintf("%s (%s, %d trials)", s.Spec.ID, s.Spec.Figure, s.Result.Trials))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("Too few trials to decide anything: %s ran fewer than the %d trials per point a comparison needs, so its claims stay inconclusive.",
		strings.Join(parts, ", "), claims.MinTrials)
}

// notRunFinding says, per experiment, why its claims about WVCMC are not
// evaluated under the converged protocol: the protocol was not run, or
// its fits stopped short of a stationary point (the outcome's reason).
func notRunFinding(sections []Section) string {
	var notRun, unstationary []string
	for _, s := range sections {
		if s.Result == nil {
			continue
		}
		for _, c := range s.Claims {
			o, ok := c.Under(scheme.Converged)
			if !ok || o.Verdict != claims.NotEvaluated || c.Claim.Addition {
				continue
			}
			if !claims.HasProtocol(s.Result, scheme.Converged) {
				notRun = append(notRun, s.Spec.ID)
				break
			}
			if strings.Contains(o.Reason, "stationary point") {
				why, _, _ := strings.Cut(o.Reason, " (")
				unstationary = append(unstationary, fmt.Sprintf("%s (%s)", s.Spec.ID, why))
				break
			}
		}
	}
	var parts []string
	if len(notRun) > 0 {
		parts = append(parts, fmt.Sprintf("for %s (the converged protocol was not run at the paper's size)", strings.Join(notRun, ", ")))
	}
	if len(unstationary) > 0 {
		parts = append(parts, "for "+strings.Join(unstationary, "; "))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Under the converged protocol the claims about WVCMC are not evaluated " + strings.Join(parts, " and ") + "."
}
