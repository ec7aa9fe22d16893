// Package report renders the reproduction report of the paper's
// experiments: REPORT.md, a self-contained report.html (figures inlined
// as SVG, no external assets) and claims.csv. At the top, every claim with
// its verdict under each protocol it is judged under, side by side, and
// the totals, the wcmc version, the settings, the seed and the wall time;
// then, per figure, the plots, the summary table, and the claims with
// their verdicts and the numbers they compared.
//
// The report is laid out once (layout.go: every piece of text in reading
// order) and rendered twice, as Markdown and as HTML, so the two always
// say the same.
//
// A report is a pure function of its inputs: rendering the same results
// with the same Meta gives byte-identical files, so only Meta.Generated
// and Meta.Wall differ between two reports of the same stored results.
package report

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/wcmc-project/wcmc/claims"
	"github.com/wcmc-project/wcmc/diagnostics"
	"github.com/wcmc-project/wcmc/internal/atomicfile"
	"github.com/wcmc-project/wcmc/internal/machine"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/results"
	"github.com/wcmc-project/wcmc/scheme"
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
	// Wall is the wall time of the invocation that made the report, up to
	// its claims being judged: the computation of the experiments it ran,
	// or only reading stored results and judging the claims when it
	// reused them all (generatedLine says which; the results' own
	// computing time is computeLine's).
	Wall time.Duration
	// ChainLimits are the thresholds of the chain-diagnostics warnings
	// (zero: diagnostics.Recommended).
	ChainLimits diagnostics.Thresholds

	// computed and reused are the experiments whose results this
	// invocation computed, and those it read from stored results (a
	// result read from files records its version: runner.Result.Version),
	// without those showing another's run (Spec.Streams); set by New.
	computed, reused []string
}

// Figure is one plot of an experiment, read from its SVG file (see
// results.Figures: DIR/ID.svg, DIR/ID.<metric>.svg, and one per other
// protocol, DIR/ID[.<metric>].<protocol>.svg).
type Figure struct {
	Metric string
	// Protocol is that of the figure's WVCMC curves ("" when it has none);
	// Main marks the metric's main figure.
	Protocol scheme.Protocol
	Main     bool
	File     string // base name, e.g. "gauss-snr.err2_fresh.svg"
	SVG      []byte // the <svg> element, ready to inline; nil if unusable
	Err      string // why SVG is nil
}

// Section is the part of the report about one experiment.
type Section struct {
	Run
	Summary []results.SummaryRow
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
	r.Meta.computed, r.Meta.reused = nil, nil
	ran := ranIDs(runs)
	for _, run := range runs {
		s := Section{Run: run}
		if res := run.Result; res != nil {
			switch {
			case run.Spec.StreamID() != run.Spec.ID && ran[run.Spec.StreamID()]:
			case res.Version == "":
				r.Meta.computed = append(r.Meta.computed, run.Spec.ID)
			default:
				r.Meta.reused = append(r.Meta.reused, run.Spec.ID)
			}
		}
		if run.Result != nil {
			s.Summary = results.Summarize(run.Result)
			for _, f := range results.Figures(run.Spec, s.Summary) {
				fig := readFigure(filepath.Join(dir, f.Base+".svg"), f.Metric)
				fig.Protocol, fig.Main = f.Protocol, f.Main
				s.Figures = append(s.Figures, fig)
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

// Files are the names of the report files in the output directory.
const (
	MarkdownFile = "REPORT.md"
	HTMLFile     = "report.html"
)

// Write writes dir/REPORT.md, dir/report.html and dir/claims.csv all or
// nothing (atomicfile.Set: a failure leaves the three as they were), and
// returns their paths.
func Write(dir string, r *Report) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var set atomicfile.Set
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{{MarkdownFile, r.WriteMarkdown}, {HTMLFile, r.WriteHTML}, {CSVFile, r.WriteCSV}} {
		path := filepath.Join(dir, f.name)
		if err := set.Add(path, f.write); err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
	}
	paths := set.Paths()
	if err := set.Commit(); err != nil {
		return nil, fmt.Errorf("writing the report in %s: %w", dir, err)
	}
	return paths, nil
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

// wall returns the wall time of a result.
func wall(res *runner.Result) time.Duration { return res.Wall }

// WallTime says how long res took to compute and where, as the report
// states it: "wall time 23m34s, on M, 2 workers", or with each machine's
// share when several computed it (see computedOn).
func WallTime(res *runner.Result) string {
	return "wall time " + fmtDur(wall(res)) + computedOn(res)
}

// MixedArithmetic says, when res's sessions' machines show different
// arithmetic (machine.Arithmetic: package dgemm's product whatever its
// kernel, or another BLAS and the platform), which ones, and that the
// values need not be those of one machine's run: "computed with different
// arithmetic (wcmc dgemm; gonum, linux/arm64): …". It is "" when they show
// one, or record none (which does not prove the same rounding:
// machine.Arithmetic).
func MixedArithmetic(res *runner.Result) string {
	var kinds []string
	for _, s := range res.Sessions {
		if a := machine.Arithmetic(s.Machine); a != "" && !slices.Contains(kinds, a) {
			kinds = append(kinds, a)
		}
	}
	if len(kinds) < 2 {
		return ""
	}
	return "computed with different arithmetic (" + strings.Join(kinds, "; ") + "): valid results, but " +
		"not bit for bit those of a run on one machine, and trial by trial different where HMC chains " +
		"amplify the last bits (docs/PERFORMANCE.md, \"Same bits where\")"
}

// computedOn says where res was computed, for its wall time: "" when its
// sessions record no machine; ", on M, 2 workers" when one machine and
// setting computed it all; otherwise each machine and setting with its
// tasks and time, those whose machine was not recorded apart.
func computedOn(res *runner.Result) string {
	type share struct {
		where string
		tasks int
		wall  time.Duration
	}
	var shares []share
	for _, s := range res.Sessions {
		where := s.Where()
		i := slices.IndexFunc(shares, func(sh share) bool { return sh.where == where })
		if i < 0 {
			i = len(shares)
			shares = append(shares, share{where: where})
		}
		shares[i].tasks += s.Tasks
		shares[i].wall += s.Wall
	}
	switch {
	case len(shares) == 0 || (len(shares) == 1 && shares[0].where == ""):
		return ""
	case len(shares) == 1:
		return ", on " + shares[0].where
	}
	parts := make([]string, len(shares))
	for i, sh := range shares {
		where := sh.where
		if where == "" {
			where = "a machine not recorded"
		}
		parts[i] = fmt.Sprintf("%s in %s on %s", countOf(sh.tasks, "task"), fmtDur(sh.wall), where)
	}
	return fmt.Sprintf(", in %d parts: %s", len(shares), strings.Join(parts, "; "))
}

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

// status returns a section's status for the experiments table: the first
// line of why it did not run, cut at maxStatus characters (the section
// gives it in full).
func status(s Section) string {
	if s.Result != nil {
		return "ok"
	}
	why, _, cut := strings.Cut(s.NotRun, "\n")
	if r := []rune(why); len(r) > maxStatus {
		why, cut = string(r[:maxStatus]), true
	}
	if cut {
		why += " … (see its section)"
	}
	if s.Failed {
		return "failed: " + why
	}
	return "not run: " + why
}

// maxStatus is the longest reason the experiments table shows.
const maxStatus = 160

// paramList returns the parameters of a result as "name=value" in
// declaration order. A parameter that names input data by a path on the
// machine that computed the result (Param.Digest) shows the data's digest
// instead, which names the data wherever it lies: "data_dir=sha256:…".
func paramList(res *runner.Result) []string {
	m := res.Values.Map()
	var out []string
	for _, n := range res.Values.Names() {
		v := m[n]
		if d, ok := res.InputDigests[n]; ok && d != "" && filepath.IsAbs(v) {
			v = d
		}
		out = append(out, n+"="+v)
	}
	return out
}

// settings returns the report's settings line items, with the trials per
// sweep point that the experiments ran (one number when they agree).
func (r *Report) settings() []string {
	m := r.Meta
	out := append(r.versions(), fmt.Sprintf("seed %d", m.Seed))
	if m.Quick {
		out = append(out, "smoke-sized (--quick)")
	} else {
		out = append(out, "the paper's sizes")
	}
	var each []string
	same := true
	for _, s := range r.Sections {
		if s.Result == nil {
			continue
		}
		each = append(each, fmt.Sprintf("%s %d", s.Spec.ID, s.Result.Trials))
		same = same && s.Result.Trials == r.firstTrials()
	}
	switch {
	case len(each) == 0 && m.Trials > 0:
		out = append(out, fmt.Sprintf("%d trials per point", m.Trials))
	case len(each) == 0:
		out = append(out, "each experiment's default trials")
	case same:
		out = append(out, countOf(r.firstTrials(), "trial")+" per point")
	default:
		out = append(out, "trials per point: "+strings.Join(each, ", "))
	}
	for _, s := range m.Sets {
		out = append(out, "--set "+s)
	}
	return append(out, m.Settings...)
}

// buildName is a wcmc version as `wcmc version` names it: "dev" is a build
// that recorded no commit (runner.Version).
func buildName(v string) string {
	if v == "dev" {
		return "dev (no commit recorded)"
	}
	return v
}

// versions returns the settings items that name the wcmc versions behind
// the report: "wcmc V" when the build that drew it (Meta.Version) computed
// every result; otherwise which version computed which experiments'
// results (stored results of other versions are reused with
// --reuse-version), then the version that drew the report.
func (r *Report) versions() []string {
	this := r.Meta.Version
	by := map[string][]string{}
	for _, s := range r.Sections {
		if s.Result == nil {
			continue
		}
		v := s.Result.Version // "" for a result this process computed
		if v == "" {
			v = this
		}
		by[v] = append(by[v], s.Spec.ID)
	}
	if len(by) == 0 || (len(by) == 1 && by[this] != nil) {
		return []string{"wcmc " + buildName(this)}
	}
	var parts []string
	for i, v := range slices.Sorted(maps.Keys(by)) {
		p := strings.Join(by[v], ", ") + " computed by wcmc " + buildName(v)
		if i > 0 {
			p = strings.Join(by[v], ", ") + " by wcmc " + buildName(v)
		}
		parts = append(parts, p)
	}
	return []string{"results: " + strings.Join(parts, "; "), "report drawn by wcmc " + buildName(this)}
}

// ranIDs returns the IDs of the runs that have a result.
func ranIDs(runs []Run) map[string]bool {
	ran := map[string]bool{}
	for _, run := range runs {
		if run.Result != nil {
			ran[run.Spec.ID] = true
		}
	}
	return ran
}

// firstTrials returns the trials per point of the first experiment that
// ran (0 if none did).
func (r *Report) firstTrials() int {
	for _, s := range r.Sections {
		if s.Result != nil {
			return s.Result.Trials
		}
	}
	return 0
}

// issueRef matches a reference to this project's issue tracker, which a
// reader of the report cannot look up.
var issueRef = regexp.MustCompile(`\s*\(?\bissues? \d+(?:, \d+)*\)?('s)?`)

// sourceNotes returns what a claim's source adds to the paper's section
// and figure, in words a reader can check: nothing for a quotation of the
// paper; that the claim is the project's reading of the paper, that a
// quoted phrase is made precise by the threshold, or that it is checked on
// fresh signals. References to the project's issues are left out.
func sourceNotes(src string) []string {
	var out []string
	for _, part := range strings.Split(src, ";") {
		part = strings.TrimSpace(issueRef.ReplaceAllString(part, ""))
		switch {
		case part == "" || part == "paper":
		case strings.Contains(part, "reading of the paper"):
			out = append(out, "the project's reading of the paper, not a quotation")
		case strings.HasPrefix(part, "paper (") || strings.HasPrefix(part, "("):
			q := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(part, "paper"), " ("), ")")
			q = strings.TrimPrefix(q, "(")
			out = append(out, q+" made precise by the threshold")
		default:
			out = append(out, part)
		}
	}
	return out
}

// source says where a claim comes from: the paper's section and figure,
// then sourceNotes.
func source(c claims.Claim) string {
	s := c.Section
	if c.Figure != "" {
		s += ", " + c.Figure
	}
	if notes := sourceNotes(c.Source); len(notes) > 0 {
		s += "; " + strings.Join(notes, "; ")
	}
	return s
}

// totalsLine returns "N claims of the paper over M experiments: K judged
// under two protocols each, J once for all — paper: a hold, b fail, c
// inconclusive, d not evaluated; …", and the project's additions.
func (r *Report) totalsLine() string {
	t := r.Totals()
	var parts []string
	for _, p := range judgedUnder {
		if t.Judged(p) == 0 {
			continue
		}
		v := t[p]
		parts = append(parts, fmt.Sprintf("%s: %d hold, %d fail, %d inconclusive, %d not evaluated", p,
			v[claims.Holds], v[claims.Fails], v[claims.Inconclusive], v[claims.NotEvaluated]))
	}
	once := t.Judged(claims.AnyProtocol)
	s := fmt.Sprintf("%s of the paper over %s: %d compare WVCMC and are judged under two of the protocols each, %d compare only schemes that learn no map and are judged once (any) — %s",
		countOf(r.NumClaims(), "claim"), countOf(len(r.Sections), "experiment"), r.NumClaims()-once, once, strings.Join(parts, "; "))
	if n := r.NumAdditions(); n > 0 {
		s += fmt.Sprintf("; and %s of the project's (not counted)", countOf(n, "addition"))
	}
	return s
}

// additionsLine is the headline of a report without the paper's claims:
// the project's additions over its experiments, counted by verdict over
// every protocol each is judged under.
func (r *Report) additionsLine() string {
	n := map[claims.Verdict]int{}
	judged := 0
	for _, s := range r.Sections {
		for _, c := range s.Claims {
			if !c.Claim.Addition {
				continue
			}
			for _, o := range c.Outcomes {
				n[o.Verdict]++
				judged++
			}
		}
	}
	return fmt.Sprintf("%s of the project's over %s beyond the paper, %s under the protocols each is judged under: %d hold, %d fail, %d inconclusive, %d not evaluated",
		countOf(r.NumAdditions(), "claim"), countOf(len(r.Sections), "experiment"), countOf(judged, "verdict"),
		n[claims.Holds], n[claims.Fails], n[claims.Inconclusive], n[claims.NotEvaluated])
}

// protocolLegend says what the protocols are, for the tables.
const protocolLegend = "Protocols: paper = the paper's SGD (its η and t_m, no holdout); converged = an optimiser run to a stationary point (no holdout); " +
	"default = L-BFGS with held-out early stopping. In-sample claims are judged under paper and converged, fresh-signal claims under converged and default; " +
	"a claim that compares only schemes that learn no map (GCMC, WGCMC, noiseless CMC, the best single worker, SGLD) has the same values under every protocol and is judged once, under any (– : not judged under that protocol). " +
	"The project's additions are not counted."

// computeLine states the time the results took to compute: the
// experiments' wall times as recorded when each was computed, summed
// (the same whether this invocation computed them or reused them), and
// where.
func (r *Report) computeLine() string {
	var d time.Duration
	n := 0
	var shown, wheres []string
	unrecorded := false
	ran := map[string]bool{}
	for _, s := range r.Sections {
		if s.Result != nil {
			ran[s.Spec.ID] = true
		}
	}
	for _, s := range r.Sections {
		if s.Result == nil {
			continue
		}
		if id := s.Spec.StreamID(); id != s.Spec.ID && ran[id] {
			// Another section's run, shown by another metric: counted there.
			shown = append(shown, fmt.Sprintf("%s (the run of %s)", s.Spec.ID, id))
			continue
		}
		d += wall(s.Result)
		n++
		if len(s.Result.Sessions) == 0 {
			unrecorded = true
		}
		for _, ss := range s.Result.Sessions {
			if w := ss.Where(); w == "" {
				unrecorded = true
			} else if !slices.Contains(wheres, w) {
				wheres = append(wheres, w)
			}
		}
	}
	line := fmt.Sprintf("Computing the results took %s of wall time in all: the %s run, as recorded when each was computed", fmtDur(d), countOf(n, "experiment"))
	switch {
	case len(wheres) == 0:
		line += "."
	case len(wheres) == 1 && !unrecorded:
		line += ", on " + wheres[0] + "."
	case !unrecorded:
		line += fmt.Sprintf(", on %d machines or settings (each experiment's section says which).", len(wheres))
	case len(wheres) == 1:
		line += ", on " + wheres[0] + " and on machines not recorded (each experiment's section says which)."
	default:
		line += fmt.Sprintf(", on %d machines or settings and on machines not recorded (each experiment's section says which).", len(wheres))
	}
	if len(shown) > 0 {
		line += " Not counted again: " + strings.Join(shown, ", ") + "."
	}
	return line
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
// made: when, and the wall time of the invocation that drew it, saying
// whether that time computed results or only drew the report from stored
// ones (the results' computing time is computeLine's).
func (m Meta) generatedLine() string {
	when, took := m.Generated.UTC().Format(time.RFC3339), fmtDur(m.Wall)
	switch {
	case len(m.computed) == 0 && len(m.reused) == 0:
		return fmt.Sprintf("Generated %s in %s of wall time.", when, took)
	case len(m.computed) == 0:
		return fmt.Sprintf("Generated %s from the stored results of %s in %s of wall time, reading them and judging the claims: nothing was computed.",
			when, countOf(len(m.reused), "experiment"), took)
	case len(m.reused) == 0:
		return fmt.Sprintf("Generated %s; this invocation took %s of wall time, computing the results of %s.", when, took, countOf(len(m.computed), "experiment"))
	}
	return fmt.Sprintf("Generated %s; this invocation took %s of wall time, computing the results of %s and reusing the stored results of %s.",
		when, took, strings.Join(m.computed, ", "), strings.Join(m.reused, ", "))
}
