package report

// The convergence diagnostics of a run's Markov chains, as the probit and
// MNIST experiments record them (package experiment, diagnose.go): per
// task, the info "workers" (per worker chain: the largest split-R̂ and the
// smallest bulk and tail ESS over the parameters), and once per run the
// run info "reference" (the same for the reference chain, with the
// parameters that miss the recommended values). ConvergenceOf reads them
// back, with the draws per worker chain from the run's settings
// (workerDraws); the report shows them per experiment, and wcmc run warns
// (Convergence.Warning) or notes (Convergence.Note) from them.

import (
	"bufio"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wcmc-project/wcmc/diagnostics"
	"github.com/wcmc-project/wcmc/runner"
)

// The keys under which package experiment records the diagnostics.
const (
	workersInfo          = "workers"           // task info: one entry per worker chain
	referenceInfo        = "reference"         // run info: the reference chain
	err2ConditioningInfo = "err2_conditioning" // in the reference's run info: its second moment against its error
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

// MinRelativeESS is what a chain too short for the ESS threshold (fewer
// draws than Thresholds.MinESS) is judged by instead: bulk and tail ESS
// of at least this fraction of its draws. bayesplot's mcmc_neff rates an
// N_eff/N of 0.1 or less "low"; independent draws of 50 per chain miss it
// in under 1% of cases. R̂ is not part of it: split-R̂ over two halves of
// so few draws exceeds 1.01 by chance alone (for independent draws of 50
// per chain, in 9 of 10 chains of 5 parameters), so a short chain's R̂
// is reported, not judged.
const MinRelativeESS = 0.1

// short reports whether chains of draws draws each are too short for the
// ESS threshold of t (draws 0: unknown, not short).
func short(draws int, t diagnostics.Thresholds) bool {
	return draws > 0 && float64(draws) < t.MinESS
}

// Reference is the diagnostics of a run's reference chain.
type Reference struct {
	ChainCheck
	Sampler       string
	Chains, Draws int
	Params        int
	// Below names the parameters (theta[j], 1-based) that miss
	// diagnostics.Recommended.
	Below []string
	// Err2 is how far the reference's second moment is from zero
	// against its Monte Carlo error; nil when the run did not record it.
	Err2 *Err2Conditioning
}

// Err2Conditioning is the record of the reference second moment R that
// eq: err2 divides by (package experiment, err2Conditioning; docs/MATH.md
// note 19): the smallest |R_ij|/√(R_ii R_jj) over its Pairs off-diagonal
// entries, at Pair (1-based), with its Monte Carlo standard error in the
// same units, and how many of the Visited smallest entries lie within two
// standard errors of zero.
type Err2Conditioning struct {
	Smallest, SmallestMCSE     float64
	Pair                       [2]int
	Pairs, Visited, Unresolved int
}

// WorkerChains aggregates worker chains: how many there are, how many
// miss their criterion (the thresholds; MinRelativeESS for chains too
// short for them), and their worst case.
type WorkerChains struct {
	ChainCheck
	Chains, Below int
	// MinDraws and MaxDraws bound the draws per chain (0 when the
	// result's settings do not say).
	MinDraws, MaxDraws int
	bulk               []float64 // each chain's smallest bulk ESS, for the median
}

// add counts one chain of draws draws.
func (w *WorkerChains) add(c ChainCheck, draws int, t diagnostics.Thresholds) {
	ok := c.OK(t)
	if short(draws, t) {
		floor := MinRelativeESS * float64(draws)
		ok = c.MinESSBulk >= floor && c.MinESSTail >= floor
	}
	one := WorkerChains{ChainCheck: c, Chains: 1, MinDraws: draws, MaxDraws: draws, bulk: []float64{c.MinESSBulk}}
	if !ok {
		one.Below = 1
	}
	w.merge(one)
}

// merge adds the chains of o.
func (w *WorkerChains) merge(o WorkerChains) {
	if o.Chains == 0 {
		return
	}
	if w.Chains == 0 {
		*w = o
		w.bulk = slices.Clone(o.bulk)
		return
	}
	w.Chains += o.Chains
	w.Below += o.Below
	w.ChainCheck = w.ChainCheck.worse(o.ChainCheck)
	w.MinDraws, w.MaxDraws = min(w.MinDraws, o.MinDraws), max(w.MaxDraws, o.MaxDraws)
	w.bulk = append(w.bulk, o.bulk...)
}

// MedianESSBulk is the median over the chains of their smallest bulk ESS
// (undefined values left out; NaN when none is defined).
func (w WorkerChains) MedianESSBulk() float64 {
	var x []float64
	for _, v := range w.bulk {
		if !math.IsNaN(v) {
			x = append(x, v)
		}
	}
	if len(x) == 0 {
		return math.NaN()
	}
	slices.Sort(x)
	n := len(x)
	return (x[(n-1)/2] + x[n/2]) / 2
}

// Convergence is what a run recorded about the convergence of its chains,
// judged against Limits.
type Convergence struct {
	Experiment string
	Limits     diagnostics.Thresholds
	// Reference is nil when the run recorded none.
	Reference *Reference
	// Workers are all the worker chains of the run: Long those with at
	// least Limits.MinESS draws (or of unknown length), judged against
	// Limits; Short the others, judged by MinRelativeESS. PerPoint splits
	// Workers by sweep point (XName = X[i]).
	Workers, Long, Short WorkerChains
	XName                string
	X                    []float64
	PerPoint             []WorkerChains
	params               map[string]string // the run's settings, to name the flags that help
}

// ConvergenceOf reads the diagnostics recorded in res (nil when it holds
// none), the worker chains judged against t. A value that does not read
// as recorded is an error naming the task.
func ConvergenceOf(res *runner.Result, t diagnostics.Thresholds) (*Convergence, error) {
	c := &Convergence{Experiment: res.Spec.ID, Limits: t, XName: res.Spec.X, X: res.Values.XList(), params: res.Values.Map()}
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
		draws := workerDraws(c.params, c.XName, task.X)
		var wc WorkerChains
		for _, ch := range chains {
			wc.add(ch, draws, t)
		}
		if task.Point >= 0 && task.Point < len(c.PerPoint) {
			c.PerPoint[task.Point].merge(wc)
		}
		c.Workers.merge(wc)
		if short(draws, t) {
			c.Short.merge(wc)
		} else {
			c.Long.merge(wc)
		}
	}
	if c.Reference == nil && c.Workers.Chains == 0 {
		return nil, nil
	}
	return c, nil
}

// workerDraws is the number of draws of each worker chain of a task at
// sweep value x, as the experiments' settings fix it (package
// experiment): each worker draws S samples — the parameter S where there
// is one (the gradient experiments), else T (NOMA sends all T, OMA the
// first ⌊T/K⌋) — as `chains` chains of S/chains draws. It is 0 when the
// settings name neither.
func workerDraws(params map[string]string, xname string, x float64) int {
	get := func(name string) (float64, bool) {
		if name == xname {
			return x, true
		}
		v, err := strconv.ParseFloat(params[name], 64)
		return v, err == nil && v >= 1
	}
	s, ok := get("S")
	if !ok {
		if s, ok = get("T"); !ok {
			return 0
		}
	}
	if c, ok := get("chains"); ok {
		s /= c
	}
	return int(s)
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
	if e, ok := m[err2ConditioningInfo].(map[string]any); ok {
		var err error
		if r.Err2, err = readErr2Conditioning(e); err != nil {
			return r, fmt.Errorf("%s: %w", err2ConditioningInfo, err)
		}
	}
	below, _ := m["below_recommended"].([]any)
	for _, b := range below {
		if s, ok := b.(string); ok {
			r.Below = append(r.Below, s)
		}
	}
	return r, nil
}

// readErr2Conditioning reads the run info reference.err2_conditioning.
func readErr2Conditioning(m map[string]any) (*Err2Conditioning, error) {
	var e Err2Conditioning
	for _, f := range []struct {
		key string
		dst *int
	}{{"pairs", &e.Pairs}, {"visited", &e.Visited}, {"unresolved", &e.Unresolved}} {
		v, err := number(m[f.key])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.key, err)
		}
		*f.dst = int(v)
	}
	if e.Pairs == 0 {
		return &e, nil
	}
	var err error
	if e.Smallest, err = number(m["smallest"]); err != nil {
		return nil, fmt.Errorf("smallest: %w", err)
	}
	if e.SmallestMCSE, err = number(m["smallest_mcse"]); err != nil {
		return nil, fmt.Errorf("smallest_mcse: %w", err)
	}
	pair, ok := m["smallest_pair"].([]any)
	if !ok || len(pair) != 2 {
		return nil, fmt.Errorf("smallest_pair is %v, want two indices", m["smallest_pair"])
	}
	for i, x := range pair {
		v, err := number(x)
		if err != nil {
			return nil, fmt.Errorf("smallest_pair: %w", err)
		}
		e.Pair[i] = int(v)
	}
	return &e, nil
}

// err2Text says, when some entries of the reference second moment are
// within two Monte Carlo standard errors of zero, that err2 is set by the
// reference's noise on them; "" otherwise.
func (c *Convergence) err2Text() string {
	if c.Reference == nil || c.Reference.Err2 == nil || c.Reference.Err2.Unresolved == 0 {
		return ""
	}
	e := c.Reference.Err2
	return fmt.Sprintf("%d of the %d off-diagonal entries of the reference second moment R are within two Monte Carlo standard errors of zero "+
		"(the smallest, θ%d·θ%d, at %.2g ± %.2g of √(R_ii R_jj)): err2 divides by them, so its level is set by the reference's noise there; "+
		"err2_scaled does not (docs/MATH.md note 19)", e.Unresolved, e.Pairs, e.Pair[0], e.Pair[1], e.Smallest, e.SmallestMCSE)
}

// Err2Note is the line wcmc run prints when err2 is at the mercy of the
// reference (err2Text); "" otherwise.
func (c *Convergence) Err2Note() string {
	if t := c.err2Text(); t != "" {
		return c.Experiment + ": " + t
	}
	return ""
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

// OK reports whether every recorded chain meets its criterion: the
// limits, or MinRelativeESS for worker chains too short for them.
func (c *Convergence) OK() bool {
	return c.Workers.Below == 0 && c.referenceOK()
}

func (c *Convergence) referenceOK() bool { return c.Reference == nil || c.Reference.OK(c.Limits) }

// limitsText states the limits: "R̂ ≤ 1.01, ESS ≥ 400".
func (c *Convergence) limitsText() string {
	return fmt.Sprintf("R̂ ≤ %g, ESS ≥ %g", c.Limits.MaxRhat, c.Limits.MinESS)
}

// Warning is the line wcmc run prints when a chain misses the limits and
// the user can do something about it: worker chains long enough to be
// judged by them, or the reference chain. It names the settings that
// help, e.g. "probit-snr: 37 of 6400 worker chains below recommended
// (R̂ ≤ 1.01, ESS ≥ 400; max R̂ 1.03, min bulk ESS 210, min tail ESS
// 180; median bulk ESS 380 of 1000), try --set sampler=hmc or a longer
// --set burnin (now 100); reference OK". It is "" otherwise.
func (c *Convergence) Warning() string {
	if t := c.warningText(); t != "" {
		return c.Experiment + ": " + t
	}
	return ""
}

// Note is the line wcmc run prints about worker chains too short for the
// ESS threshold: that it cannot apply to them, how they fare against
// their length (MinRelativeESS) and what that means for the samples the
// workers send. It is "" when no chain is that short.
func (c *Convergence) Note() string {
	if t := c.noteText(); t != "" {
		return c.Experiment + ": " + t
	}
	return ""
}

// warningText is Warning without the experiment's name.
func (c *Convergence) warningText() string {
	long, ref := c.Long.Below > 0, !c.referenceOK()
	if !long && !ref {
		return ""
	}
	var parts []string
	judged := ""
	if c.Short.Chains > 0 {
		judged = fmt.Sprintf(" with ≥ %g draws", c.Limits.MinESS)
	}
	switch w := c.Long; {
	case long:
		parts = append(parts, fmt.Sprintf("%d of %d worker chains%s below recommended (%s; max R̂ %s, min bulk ESS %s, min tail ESS %s; median bulk ESS %s)%s",
			w.Below, w.Chains, judged, c.limitsText(), rhat(w.MaxRhat), ess(w.MinESSBulk), ess(w.MinESSTail), ofDraws(w), c.workerRemedy(w)))
	case w.Chains > 0:
		parts = append(parts, fmt.Sprintf("all %d worker chains%s meet %s", w.Chains, judged, c.limitsText()))
	}
	switch r := c.Reference; {
	case r == nil:
	case ref:
		parts = append(parts, fmt.Sprintf("reference chain below recommended (R̂ %s, bulk ESS %s, tail ESS %s; %s of %d parameters)%s",
			rhat(r.MaxRhat), ess(r.MinESSBulk), ess(r.MinESSTail), belowCount(r), r.Params, c.referenceRemedy(r)))
	default:
		parts = append(parts, "reference OK")
	}
	return strings.Join(parts, "; ")
}

// noteText is Note without the experiment's name.
func (c *Convergence) noteText() string {
	w := c.Short
	if w.Chains == 0 {
		return ""
	}
	autocorrelated := ""
	if !(w.MedianESSBulk() >= 0.5*float64(w.MinDraws)) {
		autocorrelated = "their draws are autocorrelated, and "
	}
	drawn := fmt.Sprintf("a worker's %s draws", drawsText(w))
	median := ""
	if w.MinDraws != w.MaxDraws {
		drawn, median = "a worker's draws", " (the median)"
	}
	rhatNote := "their R̂ is reported, not judged"
	if c.Limits.MaxRhat <= diagnostics.Recommended.MaxRhat {
		rhatNote = fmt.Sprintf("R̂ ≤ %g means little (split-R̂ of so few draws often exceeds it by chance)", c.Limits.MaxRhat)
	}
	t := fmt.Sprintf("the %d worker chains have %s draws each: ESS ≥ %g cannot apply to them, and %s. "+
		"Judged against their length instead, %d of %d have bulk and tail ESS ≥ %g%% of their draws "+
		"(median bulk ESS %s; max R̂ %s): %s%s estimate its subposterior about as well as %s independent ones would%s",
		w.Chains, drawsText(w), c.Limits.MinESS, rhatNote, w.Chains-w.Below, w.Chains, 100*MinRelativeESS,
		ofDraws(w), rhat(w.MaxRhat), autocorrelated, drawn, ess(w.MedianESSBulk()), median)
	if c.params["sampler"] == "gibbs" {
		t += "; --set sampler=hmc draws nearly independent ones (the paper's sampler is gibbs)"
	}
	return t
}

// ofDraws is the median bulk ESS of w's chains out of their draws: "15
// of 200", or "15 (chains of 50–200 draws)" when their lengths differ.
func ofDraws(w WorkerChains) string {
	m := w.MedianESSBulk()
	switch {
	case w.MaxDraws == 0:
		return ess(m)
	case w.MinDraws == w.MaxDraws:
		return fmt.Sprintf("%s of %d", ess(m), w.MaxDraws)
	}
	return ess(m) + " (chains of " + drawsText(w) + " draws)"
}

// drawsText is the draws per chain of w: "200" or "50–200".
func drawsText(w WorkerChains) string {
	if w.MinDraws == w.MaxDraws {
		return strconv.Itoa(w.MaxDraws)
	}
	return fmt.Sprintf("%d–%d", w.MinDraws, w.MaxDraws)
}

// workerRemedy names the settings of the run that would help worker
// chains below the limits: ", try …", or "" when it has none.
func (c *Convergence) workerRemedy(w WorkerChains) string {
	var try []string
	if c.params["sampler"] == "gibbs" {
		try = append(try, "--set sampler=hmc")
	}
	if b, ok := c.params["burnin"]; ok && !(w.MaxRhat <= c.Limits.MaxRhat) {
		try = append(try, "a longer --set burnin (now "+b+")")
	}
	return tryText(try)
}

// referenceRemedy is workerRemedy for the reference chain.
func (c *Convergence) referenceRemedy(r *Reference) string {
	var try []string
	if n, ok := c.params["ref_samples"]; ok {
		try = append(try, "a larger --set ref_samples (now "+n+")")
	}
	if c.params["ref_sampler"] == "gibbs" {
		try = append(try, "--set ref_sampler=hmc")
	}
	if b, ok := c.params["burnin"]; ok && !(r.MaxRhat <= c.Limits.MaxRhat) {
		try = append(try, "a longer --set burnin (now "+b+")")
	}
	return tryText(try)
}

func tryText(try []string) string {
	switch len(try) {
	case 0:
		return ""
	case 1:
		return ", try " + try[0]
	}
	return ", try " + strings.Join(try[:len(try)-1], ", ") + " or " + try[len(try)-1]
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
// reference chain, a table of the worker chains per sweep point, the
// warning (Convergence.Warning) and the note on chains too short for the
// ESS threshold (Convergence.Note).
type convergenceLayout struct {
	reference string
	header    []string
	rows      [][]string
	warning   string
	note      string
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
		below := "below " + c.limitsText()
		shortBelow := fmt.Sprintf("bulk or tail ESS < %g%% of the draws", 100*MinRelativeESS)
		switch {
		case c.Long.Chains == 0:
			below = shortBelow
		case c.Short.Chains > 0:
			below += fmt.Sprintf(" (with < %g draws: %s)", c.Limits.MinESS, shortBelow)
		}
		l.header = []string{c.XName, "worker chains", "draws each", below, "max R̂", "min bulk ESS", "median bulk ESS", "min tail ESS"}
		row := func(x string, w WorkerChains) []string {
			if w.Chains == 0 {
				return []string{x, "0", "–", "–", "–", "–", "–", "–"}
			}
			draws := "–"
			if w.MaxDraws > 0 {
				draws = drawsText(w)
			}
			return []string{x, strconv.Itoa(w.Chains), draws, strconv.Itoa(w.Below), rhat(w.MaxRhat), ess(w.MinESSBulk), ess(w.MedianESSBulk()), ess(w.MinESSTail)}
		}
		for i, x := range c.X {
			l.rows = append(l.rows, row(runner.FormatX(x), c.PerPoint[i]))
		}
		if len(c.X) > 1 {
			l.rows = append(l.rows, row("all", c.Workers))
		}
	}
	if t := c.warningText(); t != "" {
		l.warning = "Warning: " + t + ". The draws of chains below the recommended values are not yet reliable samples of their posteriors."
	}
	if t := c.noteText(); t != "" {
		l.note = upper(t) + "."
	}
	if t := c.err2Text(); t != "" {
		l.reference += " " + upper(t) + "."
	}
	return l
}

// upper returns s with its first letter in upper case.
func upper(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
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
	if l.note != "" {
		fmt.Fprintf(w, "%s\n\n", mdText(l.note))
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
	if l.note != "" {
		fmt.Fprintf(w, "<p>%s</p>\n", esc(l.note))
	}
	if len(l.rows) > 0 {
		fmt.Fprint(w, "<div class=\"scroll\"><table>\n")
		htmlRow(w, "th", escAll(l.header))
		for _, r := range l.rows {
			htmlRow(w, "td", escAll(r), 1, 2, 3, 4, 5, 6, 7)
		}
		fmt.Fprint(w, "</table></div>\n")
	}
}
