package report

// The convergence diagnostics of a run's Markov chains, as the probit and
// MNIST experiments record them (package experiment, diagnose.go): per
// task, the info "workers" (per worker chain: the largest split-R̂ and the
// smallest bulk and tail ESS over the parameters), and once per run the
// run info "reference" (the same for the reference chain, with the
// parameters that miss the recommended values). ConvergenceOf reads them
// back; the report shows them per experiment and wcmc run warns from them.

import (
	"bufio"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/wcmc-project/wcmc/diagnostics"
	"github.com/wcmc-project/wcmc/runner"
)

// The keys under which package experiment records the diagnostics.
const (
	workersInfo   = "workers"   // task info: one entry per worker chain
	referenceInfo = "reference" // run info: the reference chain
)

// ChainCheck is the worst case over the parameters of a set of chains:
// the largest split-R̂ and the smallest bulk and tail ESS (NaN when one is
// undefined).
type ChainCheck struct {
	MaxRhat, MinESSBulk, MinESSTail float64
}

// OK reports whether the chains meet t: R̂ ≤ t.MaxRhat and both ESS ≥
// t.MinESS (undefined values fail).
func (c ChainCheck) OK(t diagnostics.Thresholds) bool {
	return c.MaxRhat <= t.MaxRhat && c.MinESSBulk >= t.MinESS && c.MinESSTail >= t.MinESS
}

// worse returns the worst case of c and o (NaN wins).
func (c ChainCheck) worse(o ChainCheck) ChainCheck {
	return ChainCheck{math.Max(c.MaxRhat, o.MaxRhat), math.Min(c.MinESSBulk, o.MinESSBulk), math.Min(c.MinESSTail, o.MinESSTail)}
}

// best is the neutral element of worse.
var best = ChainCheck{math.Inf(-1), math.Inf(1), math.Inf(1)}

// Reference is the diagnostics of a run's reference chain.
type Reference struct {
	ChainCheck
	Sampler       string
	Chains, Draws int
	Params        int
	// Below names the parameters (theta[j], 1-based) that miss
	// diagnostics.Recommended.
	Below []string
}

// WorkerChains aggregates worker chains: how many there are, how many
// miss the thresholds, and their worst case.
type WorkerChains struct {
	ChainCheck
	Chains, Below int
}

// add counts one chain.
func (w *WorkerChains) add(c ChainCheck, t diagnostics.Thresholds) {
	if w.Chains == 0 {
		w.ChainCheck = best
	}
	w.Chains++
	if !c.OK(t) {
		w.Below++
	}
	w.ChainCheck = w.ChainCheck.worse(c)
}

// merge adds the chains of o.
func (w *WorkerChains) merge(o WorkerChains) {
	if o.Chains == 0 {
		return
	}
	if w.Chains == 0 {
		*w = o
		return
	}
	w.Chains += o.Chains
	w.Below += o.Below
	w.ChainCheck = w.ChainCheck.worse(o.ChainCheck)
}

// Convergence is what a run recorded about the convergence of its chains,
// judged against Limits.
type Convergence struct {
	Experiment string
	Limits     diagnostics.Thresholds
	// Reference is nil when the run recorded none.
	Reference *Reference
	// Workers are all the worker chains of the run; PerPoint splits them
	// by sweep point (XName = X[i]).
	Workers  WorkerChains
	XName    string
	X        []float64
	PerPoint []WorkerChains
}

// ConvergenceOf reads the diagnostics recorded in res (nil when it holds
// none), the worker chains judged against t. A value that does not read
// as recorded is an error naming the task.
func ConvergenceOf(res *runner.Result, t diagnostics.Thresholds) (*Convergence, error) {
	c := &Convergence{Experiment: res.Spec.ID, Limits: t, XName: res.Spec.X, X: res.Values.XList()}
	c.PerPoint = make([]WorkerChains, len(c.X))
	if ref, ok := res.RunInfo[referenceInfo]; ok {
		r, err := readReference(ref)
		if err != nil {
			return nil, fmt.Errorf("%s: run info %q: %w", res.Spec.ID, referenceInfo, err)
		}
		c.Reference = &r
	}
	for _, task := range res.Tasks {
		w, ok := task.Info[workersInfo]
		if !ok {
			continue
		}
		chains, err := readWorkers(w)
		if err != nil {
			return nil, fmt.Errorf("%s: task %s=%s trial %d: info %q: %w", res.Spec.ID, res.Spec.X, runner.FormatX(task.X), task.Trial, workersInfo, err)
		}
		var wc WorkerChains
		for _, ch := range chains {
			wc.add(ch, t)
		}
		if task.Point >= 0 && task.Point < len(c.PerPoint) {
			c.PerPoint[task.Point].merge(wc)
		}
		c.Workers.merge(wc)
	}
	if c.Reference == nil && c.Workers.Chains == 0 {
		return nil, nil
	}
	return c, nil
}

// readWorkers reads the per-worker worst cases of a task's "workers" info.
func readWorkers(m map[string]any) ([]ChainCheck, error) {
	cols := [3][]float64{}
	for i, key := range []string{"max_rhat", "min_ess_bulk", "min_ess_tail"} {
		list, ok := m[key].([]any)
		if !ok {
			return nil, fmt.Errorf("%s is %T, want a list", key, m[key])
		}
		for _, x := range list {
			v, err := number(x)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			cols[i] = append(cols[i], v)
		}
	}
	if len(cols[1]) != len(cols[0]) || len(cols[2]) != len(cols[0]) {
		return nil, fmt.Errorf("%d, %d and %d values for R̂, bulk and tail ESS", len(cols[0]), len(cols[1]), len(cols[2]))
	}
	out := make([]ChainCheck, len(cols[0]))
	for w := range out {
		out[w] = ChainCheck{cols[0][w], cols[1][w], cols[2][w]}
	}
	return out, nil
}

// readReference reads the run info "reference".
func readReference(m map[string]any) (Reference, error) {
	var r Reference
	var err error
	for _, f := range []struct {
		key string
		dst *float64
	}{{"max_rhat", &r.MaxRhat}, {"min_ess_bulk", &r.MinESSBulk}, {"min_ess_tail", &r.MinESSTail}} {
		if *f.dst, err = number(m[f.key]); err != nil {
			return r, fmt.Errorf("%s: %w", f.key, err)
		}
	}
	for _, f := range []struct {
		key string
		dst *int
	}{{"chains", &r.Chains}, {"draws", &r.Draws}, {"params", &r.Params}} {
		v, err := number(m[f.key])
		if err != nil {
			return r, fmt.Errorf("%s: %w", f.key, err)
		}
		*f.dst = int(v)
	}
	r.Sampler, _ = m["sampler"].(string)
	below, _ := m["below_recommended"].([]any)
	for _, b := range below {
		if s, ok := b.(string); ok {
			r.Below = append(r.Below, s)
		}
	}
	return r, nil
}

// number reads a float as JSON holds it: a number, or one of the strings
// "NaN", "+Inf", "-Inf" (runner.JSONSafe).
func number(x any) (float64, error) {
	switch v := x.(type) {
	case float64:
		return v, nil
	case string:
		if f, err := strconv.ParseFloat(v, 64); err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return f, nil
		}
	}
	return 0, fmt.Errorf("%v (%T) is not a number", x, x)
}

// OK reports whether every recorded chain meets the limits.
func (c *Convergence) OK() bool {
	return c.Workers.Below == 0 && (c.Reference == nil || c.Reference.OK(c.Limits))
}

// limitsText states the limits: "R̂ ≤ 1.01, ESS ≥ 400".
func (c *Convergence) limitsText() string {
	return fmt.Sprintf("R̂ ≤ %g, ESS ≥ %g", c.Limits.MaxRhat, c.Limits.MinESS)
}

// Warning is the one line wcmc run prints when a chain misses the limits,
// e.g. "probit-snr: 37 of 6400 worker chains below recommended (R̂ ≤ 1.01,
// ESS ≥ 400; max R̂ 1.03, min bulk ESS 210, min tail ESS 180); reference
// OK". It is "" when every chain meets them.
func (c *Convergence) Warning() string {
	if c.OK() {
		return ""
	}
	return c.Experiment + ": " + c.verdict()
}

// verdict is Warning without the experiment's name, or what the chains
// did when they all meet the limits.
func (c *Convergence) verdict() string {
	var parts []string
	switch w := c.Workers; {
	case w.Chains == 0:
	case w.Below > 0:
		parts = append(parts, fmt.Sprintf("%d of %d worker chains below recommended (%s; max R̂ %s, min bulk ESS %s, min tail ESS %s)",
			w.Below, w.Chains, c.limitsText(), rhat(w.MaxRhat), ess(w.MinESSBulk), ess(w.MinESSTail)))
	default:
		parts = append(parts, fmt.Sprintf("all %d worker chains meet %s", w.Chains, c.limitsText()))
	}
	switch r := c.Reference; {
	case r == nil:
	case !r.OK(c.Limits):
		parts = append(parts, fmt.Sprintf("reference chain below recommended (R̂ %s, bulk ESS %s, tail ESS %s; %s of %d parameters)",
			rhat(r.MaxRhat), ess(r.MinESSBulk), ess(r.MinESSTail), belowCount(r), r.Params))
	default:
		parts = append(parts, "reference OK")
	}
	return strings.Join(parts, "; ")
}

// belowCount is the number of the reference's parameters that miss the
// recommended values, "?" when it did not record them.
func belowCount(r *Reference) string {
	if r.Below == nil {
		return "?"
	}
	return strconv.Itoa(len(r.Below))
}

// rhat formats an R̂ to four significant digits; ess an ESS to whole draws.
func rhat(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }
func ess(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strconv.FormatFloat(math.Round(x), 'f', 0, 64)
}

// convergenceLayout is the chain diagnostics of a section: a line on the
// reference chain, a table of the worker chains per sweep point, and the
// warning when a chain misses the limits.
type convergenceLayout struct {
	reference string
	header    []string
	rows      [][]string
	warning   string
}

// Texts of the chain diagnostics.
const (
	convergenceTitle  = "Chain diagnostics"
	convergenceLegend = "split-R̂ and bulk/tail ESS (Vehtari et al. 2021) of every Markov chain, worst case over the parameters"
)

// convergenceLayoutOf lays out the chain diagnostics recorded in res,
// judged against limits (zero: diagnostics.Recommended); nil when none
// are recorded.
func convergenceLayoutOf(res *runner.Result, limits diagnostics.Thresholds) *convergenceLayout {
	if limits == (diagnostics.Thresholds{}) {
		limits = diagnostics.Recommended
	}
	c, err := ConvergenceOf(res, limits)
	if err != nil {
		return &convergenceLayout{warning: "The recorded chain diagnostics do not read back: " + err.Error()}
	}
	if c == nil {
		return nil
	}
	l := &convergenceLayout{}
	if r := c.Reference; r != nil {
		what := fmt.Sprintf("Reference chain (%s, %s of %d draws, %d parameters): max R̂ %s, min bulk ESS %s, min tail ESS %s",
			r.Sampler, countOf(r.Chains, "chain"), r.Draws, r.Params, rhat(r.MaxRhat), ess(r.MinESSBulk), ess(r.MinESSTail))
		if r.OK(c.Limits) {
			l.reference = what + fmt.Sprintf(" — meets %s.", c.limitsText())
		} else {
			l.reference = what + fmt.Sprintf(" — below %s for %s of %d parameters", c.limitsText(), belowCount(r), r.Params)
			if len(r.Below) > 0 {
				l.reference += ": " + strings.Join(r.Below, ", ")
			}
			l.reference += "."
		}
	}
	if c.Workers.Chains > 0 {
		l.header = []string{c.XName, "worker chains", "below " + c.limitsText(), "max R̂", "min bulk ESS", "min tail ESS"}
		row := func(x string, w WorkerChains) []string {
			if w.Chains == 0 {
				return []string{x, "0", "–", "–", "–", "–"}
			}
			return []string{x, strconv.Itoa(w.Chains), strconv.Itoa(w.Below), rhat(w.MaxRhat), ess(w.MinESSBulk), ess(w.MinESSTail)}
		}
		for i, x := range c.X {
			l.rows = append(l.rows, row(runner.FormatX(x), c.PerPoint[i]))
		}
		if len(c.X) > 1 {
			l.rows = append(l.rows, row("all", c.Workers))
		}
	}
	if !c.OK() {
		l.warning = "Warning: " + c.verdict() + ". The draws of chains below the recommended values are not yet reliable samples of their posteriors."
	}
	return l
}

// markdownConvergence writes a section's chain diagnostics.
func markdownConvergence(w *bufio.Writer, l *convergenceLayout) {
	if l == nil {
		return
	}
	fmt.Fprintf(w, "**%s** — %s\n\n", convergenceTitle, convergenceLegend)
	if l.warning != "" {
		fmt.Fprintf(w, "**%s**\n\n", mdText(l.warning))
	}
	if l.reference != "" {
		fmt.Fprintf(w, "%s\n\n", mdText(l.reference))
	}
	if len(l.rows) > 0 {
		mdHeader(w, l.header...)
		for _, r := range l.rows {
			mdRow(w, r...)
		}
		fmt.Fprintln(w)
	}
}

// htmlConvergence writes a section's chain diagnostics.
func htmlConvergence(w *bufio.Writer, l *convergenceLayout) {
	if l == nil {
		return
	}
	fmt.Fprintf(w, "<h3>%s</h3>\n<p>%s</p>\n", esc(convergenceTitle), esc(convergenceLegend))
	if l.warning != "" {
		fmt.Fprintf(w, "<p><strong>%s</strong></p>\n", esc(l.warning))
	}
	if l.reference != "" {
		fmt.Fprintf(w, "<p>%s</p>\n", esc(l.reference))
	}
	if len(l.rows) > 0 {
		fmt.Fprint(w, "<div class=\"scroll\"><table>\n")
		htmlRow(w, "th", escAll(l.header))
		for _, r := range l.rows {
			htmlRow(w, "td", escAll(r), 1, 2, 3, 4, 5)
		}
		fmt.Fprint(w, "</table></div>\n")
	}
}
