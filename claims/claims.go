// Package claims holds the paper's claims about its figures (Section VI)
// as data: each Claim quotes the paper, names the experiment and metric it
// is about, states its threshold, and checks it on that experiment's
// per-trial results (runner.Result) under each optimisation protocol it
// is about, returning a verdict and the numbers it compared.
//
// A claim is a formula of comparisons ("at every SNR, a < b"; "at some
// SNR, …"). Each comparison is a ratio of means (or of spreads, or of
// growths) of per-trial values, paired by trial (trials share their
// random numbers across schemes and sweep points), with a studentised bootstrap interval and
// p-values valid for skewed errors; the formula controls the error across
// its comparisons (intersection-union tests and Holm's procedure), so that
// a claim at its boundary is spuriously held or failed with probability
// at most (1 − Level)/2 each on trials no heavier-tailed than log-normal
// σ = 1 (Method states the measured rates under heavier tails); a
// comparison that one trial decides is not decided. Words of degree in the paper ("vastly",
// "converging", "essentially unaffected", "slightly") are read as fixed
// factors on the means (VastFactor, NearFactor, SlightFactor), stated
// beside each claim; the Monte Carlo margin is applied on top of them.
package claims

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

// Verdict is the result of checking a claim.
type Verdict int

const (
	// NotEvaluated: the data needed are absent (experiment not run, scheme
	// not applicable at the points needed, sweep without such points).
	NotEvaluated Verdict = iota
	// Holds: the comparisons support the claim beyond Monte Carlo error.
	Holds
	// Fails: the comparisons contradict the claim beyond Monte Carlo error.
	Fails
	// Inconclusive: neither, within Monte Carlo error (too few trials to
	// decide).
	Inconclusive
)

// Verdicts lists the verdicts in the order reports count them.
var Verdicts = []Verdict{Holds, Fails, Inconclusive, NotEvaluated}

// Code returns the verdict as one word, as in claims.csv: holds, fails,
// inconclusive or not-evaluated.
func (v Verdict) Code() string { return strings.ReplaceAll(v.String(), " ", "-") }

func (v Verdict) String() string {
	switch v {
	case Holds:
		return "holds"
	case Fails:
		return "fails"
	case Inconclusive:
		return "inconclusive"
	}
	return "not evaluated"
}

// Degree factors: how the paper's words of degree are read. The paper's
// figures are log-scale plots spanning several decades (its source does
// not include them), so its qualitative words are read as ratios of means.
const (
	// NearFactor: "converging", "attain optimality", "essentially
	// unaffected" — two means within 25% of each other (0.1 decade, about
	// the width of a plotted line and marker on such axes).
	NearFactor = 1.25
	// VastFactor: "vastly" and "significantly" outperform — the better
	// mean at least a factor 2 (0.3 decade) below the other, the weakest
	// reading under which the curves are visibly apart.
	VastFactor = 2.0
	// SlightFactor: "degrades slightly" — at most a factor 2 worse.
	SlightFactor = 2.0
)

// Method describes, for reports, how verdicts are decided.
var Method = fmt.Sprintf(`Each claim is checked on the per-trial values of its experiment, once under each optimisation protocol it is about: `+
	`claims on in-sample metrics (err2, kl) under the paper's protocol (its SGD, no holdout) and the converged one (an optimiser run to a stationary point), `+
	`claims on fresh signals (err2_fresh, kl_fresh) under the default protocol (L-BFGS with held-out early stopping) and the converged one. `+
	`Under a protocol, the WVCMC values are those of its run (named scheme.protocol in the results, e.g. wvcmc-oma.paper); the schemes that learn no map are the same under every protocol, so a claim that compares only them is judged once, under "any", and counted once. `+
	`Each claim states how its words' quantifier is read ("at every SNR", "at some budget" for "can outperform", "on average over the SNRs" for "generally"); where the words admit a second reading, that reading's verdict is shown beside the main one and not counted. `+
	`A claim is a formula of comparisons, each a ratio of means that exceeds 1 when the data support the claim (the better scheme's mean times its degree factor against the other's; `+
	`for growth statements a ratio of growth ratios; for spreads a ratio of mean absolute deviations from the median, Brown–Forsythe's measure, robust to skew). `+
	`Values are paired by trial, at one sweep point and across points: every point's task of a trial runs on the same random stream (common random numbers: the same worker samples and standardised channel noise wherever the point does not change how many draws precede them; along a gradient trajectory one trial runs through every checkpoint), and the pairs are independent across trials, which is all the paired bootstrap needs. `+
	`Each comparison's interval is a studentised bootstrap (bootstrap-t) %.0f%% interval of the log ratio, with %d resamples, seeded from the claim, protocol and comparison, so verdicts are reproducible; `+
	`a one-sided p-value below 0.5%% that must be compared with a smaller Holm threshold τ gets 2/τ resamples (at most %d), a number fixed in advance by τ. `+
	`A comparison supports the claim when its interval lies above 1 and contradicts it when below; a zero-width interval (every trial gives the same ratio, as when every value sits at the err2 floor) decides nothing. `+
	`An absolute statement ("its error vanishes") is judged against a stated level rather than another curve: at least %.0f%% of the trials below err2 %g, by an exact one-sided binomial test of the trials at or above it, which needs no interval of a mean and decides even where every trial sits at the floor. `+
	`A claim that needs all its comparisons holds when every one holds (an intersection-union test needs no correction) and fails when one fails after Holm's correction over them; `+
	`a claim that needs one of several ("at some SNR") is the mirror image; a claim that a curve is flat compares every pair of sweep points, so that the largest and smallest means are not picked after seeing the data. `+
	`A claim at its boundary is thus spuriously held, or failed, with nominal probability %.1f%% each. `+
	`A comparison decided with all trials is re-checked without the one trial whose leaving out moves its estimate furthest the other way (found from the exact leave-one-out estimates), at the same threshold and with resamples seeded likewise; if the verdict does not survive, it rests on that trial alone: the comparison is fragile and not decided (its p-value becomes the larger of the two, which keeps the error control above); likewise a mean made infinite by a single trial's +Inf decides nothing. `+
	`The calibration test of the claims package writes synthetic results as runs do and judges them with the claims' own checks, paired within and across sweep points: on skewed trials (log-normal σ = 1, χ²₁) every claim shape's spurious rates stay within Monte Carlo error of 0.5%% from 20 trials on (at most 0.55%% in 4000 samples each). `+
	`No test of a mean guards against a tail the sample has not seen: against a light-tailed scheme, a log-normal σ = 2 one is spuriously found the smaller in 7.8%%, 5.5%% and 4.9%% of samples at 20, 50 and 100 trials, a Pareto one of tail index 2.5 in 3.3%%, 2.1%% and 2.1%%, a log-normal σ = 1 one in 1.8%%, 1.7%% and 0.8%%; when 5%% of a scheme's trials diverge 50-fold, the samples with no such trial (0.95^n of them: 36%% at 20 trials, 8%% at 50, 0.6%% at 100) show its mean 3.45 times too small, and a claim at its boundary is decided against that scheme in about that share, which nothing computed from the data can reveal; the other direction stays below 0.5%%, and such a scheme compared with itself across sweep points is spuriously decided in 1–2%% of samples each way at 20–50 trials (6%% without the re-check). `+
	`With fewer than %d trials per point (%d for spreads) nothing is decided (the bootstrap is not calibrated there); an inconclusive claim shows the comparison closest to deciding, and no forecast of the trials that would decide it (a normal-theory forecast is decided by a rerun at that size far less often than it suggests). `+
	`Words of degree are factors on the means: "vastly"/"significantly" ×%g, "converging"/"optimal"/"unaffected" within ×%g, "slightly" at most ×%g. `+
	`err2 values below %g are compared as %g: below it err2 is an optimiser's stopping residue (the Gaussian experiments' in-sample err2 is 0 at the exact minimum), not a property of the scheme. `+
	`Under the converged protocol a claim is judged only if every fit it compares reached a stationary point (status gradient-converged, or a gradient at most %g of its start whatever stopped it); otherwise it is not evaluated. `+
	`A claim is not evaluated when the schemes, sweep points or protocol runs it needs are absent.`,
	100*Level, Resamples, MaxResamples, 100*VanishShare, VanishLevel, 100*(1-Level)/2, MinTrials, MinSpreadTrials, VastFactor, NearFactor, SlightFactor, Err2Floor, Err2Floor, StationaryGrad)

// Outcome is the result of checking one claim under one protocol.
type Outcome struct {
	Protocol    scheme.Protocol
	Verdict     Verdict
	Reason      string // one line: why this verdict
	Comparisons []Comparison
	// Other is the outcome of the claim's Other reading under the same
	// protocol, nil when it has none.
	Other *Outcome
	// Deciding is the index in Comparisons of the comparison that decides
	// the verdict (the closest call of a claim that holds, the clearest
	// failure of one that fails, the one an inconclusive claim waits for),
	// −1 when not evaluated.
	Deciding int
}

// DecidingComparison returns the deciding comparison, if any.
func (o Outcome) DecidingComparison() (Comparison, bool) {
	if o.Deciding < 0 || o.Deciding >= len(o.Comparisons) {
		return Comparison{}, false
	}
	return o.Comparisons[o.Deciding], true
}

// Claim is one statement of the paper about one experiment's figure, or,
// where Addition is set, a statement the project adds beside them.
type Claim struct {
	ID         string // unique, e.g. "fig3-wvcmc-best"; "-fresh" twins check the fresh-signal metric
	Experiment string // experiment ID, e.g. "gauss-snr"
	Figure     string // e.g. "Fig. 3"
	Section    string // where the paper says it, e.g. "Sec. VI-A, Error vs SNR"
	Quote      string // the paper's words
	Source     string // "paper", or the issue whose reading of the paper this is
	// Addition marks a claim that is not a statement of the paper but the
	// project's, about the same figure; reports label it so.
	Addition  bool
	Metric    string // the metric checked
	Reading   string // how the quote's quantifier is read, e.g. "at every SNR"
	Threshold string // the rule, in words
	// Other is a second reading of vague words (e.g. "at some SNR" beside
	// "at every SNR"), judged and shown beside the main one but not
	// counted; nil when the words admit one reading.
	Other *Reading
	// MapFree reports that the claim compares only schemes that learn no
	// map, so that its verdict is the same under every protocol: it is
	// judged once, under AnyProtocol.
	MapFree bool
	formula func(t *Trials) *node
}

// Reading is an alternative reading of a claim's words.
type Reading struct {
	Name      string // the quantifier as read, e.g. "at some SNR"
	Threshold string // the rule, in words
	formula   func(t *Trials) *node
}

// AnyProtocol is the protocol of the outcome of a MapFree claim: its
// values do not depend on the optimisation protocol, so it is judged once
// for all of them.
const AnyProtocol scheme.Protocol = "any"

// Fresh reports whether a metric measures the learned map on fresh
// signals (err2_fresh, kl_fresh) rather than in sample.
func Fresh(metric string) bool { return strings.HasSuffix(metric, "_fresh") }

// Protocols returns the protocols c is judged under, in scheme.Protocols
// order: scheme.Paper and scheme.Converged for an in-sample metric,
// scheme.Converged and scheme.Default for a fresh-signal one; AnyProtocol
// alone for a MapFree claim.
func (c Claim) Protocols() []scheme.Protocol {
	if c.MapFree {
		return []scheme.Protocol{AnyProtocol}
	}
	if Fresh(c.Metric) {
		return []scheme.Protocol{scheme.Converged, scheme.Default}
	}
	return []scheme.Protocol{scheme.Paper, scheme.Converged}
}

// Evaluate checks c on the per-trial values of its experiment's result
// under protocol p. It is NotEvaluated when res holds no value of c's
// metric, when what c compares is absent, when c compares a WVCMC scheme
// and res has no run of it under p, or, under scheme.Converged, when any
// of the compared fits stopped short of a stationary point (its status in
// the results JSON), so that "converged" never stands for less.
//
// A MapFree claim is evaluated under AnyProtocol (p is ignored). Where c
// has an Other reading, the outcome carries its verdict in Other.
func (c Claim) Evaluate(res *runner.Result, p scheme.Protocol) Outcome {
	if c.MapFree {
		p = AnyProtocol
	}
	o := evaluateFormula(c.ID, c.Metric, c.formula, res, p)
	o.Protocol = p
	if c.Other != nil {
		// Seeded as the main reading, so that a comparison both readings
		// make is resampled alike.
		other := evaluateFormula(c.ID, c.Metric, c.Other.formula, res, p)
		other.Protocol = p
		o.Other = &other
	}
	return o
}

// evaluateFormula evaluates the formula a check builds on res's values of
// metric under protocol p, its bootstraps seeded from id and p.
func evaluateFormula(id, metric string, check func(*Trials) *node, res *runner.Result, p scheme.Protocol) Outcome {
	if res == nil {
		return notEvaluated("no results")
	}
	t := TrialsOf(res, metric, p)
	if len(t.vals) == 0 {
		return notEvaluated("no %s values in the results", metric)
	}
	f := check(t)
	if t.usedVariational() && !HasProtocol(res, p) {
		return notEvaluated("run without the %s protocol (no WVCMC values under it)", p)
	}
	if p == scheme.Converged {
		if bad, seen, st := t.unstationary(res); bad > 0 {
			return notEvaluated("%d of %d converged fits stopped before a stationary point (%s); raise converged_iters", bad, seen, strings.Join(st, ", "))
		}
	}
	return evaluate(f, id+"|"+string(p))
}

// All returns every claim, in figure order.
func All() []Claim { return slices.Clone(registry) }

// For returns the claims about one experiment.
func For(experiment string) []Claim {
	var out []Claim
	for _, c := range registry {
		if c.Experiment == experiment {
			out = append(out, c)
		}
	}
	return out
}

// Lookup returns the claim with the given ID.
func Lookup(id string) (Claim, bool) {
	for _, c := range registry {
		if c.ID == id {
			return c, true
		}
	}
	return Claim{}, false
}

// notEvaluated returns a NotEvaluated outcome with the formatted reason.
func notEvaluated(format string, args ...any) Outcome {
	return Outcome{Verdict: NotEvaluated, Reason: fmt.Sprintf(format, args...), Deciding: -1}
}
