package claims

import (
	"slices"
	"sort"

	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

// StationaryGrad is the largest gradient norm, relative to the start's,
// at which a converged-protocol fit counts as stationary whatever stopped
// it: where the probit experiments' in-sample metrics are settled within
// 0.5% (docs/PERFORMANCE.md).
const StationaryGrad = 1e-4

// Err2Floor is the smallest err2 (a mean relative error of the second
// moment's entries) the claims tell apart: smaller values are compared as
// Err2Floor. Below it err2 is an optimiser's stopping residue — at the
// exact minimum of the in-sample objective the Gaussian experiments'
// in-sample err2 is 0, and a stop at a relative gradient of 1e-8 leaves
// 1e-10–1e-8 — while every Monte Carlo error in the paper's settings is
// orders of magnitude above it.
const Err2Floor = 1e-6

// Trials holds the per-trial values of one metric of one experiment, as
// seen under one protocol: the rows of the schemes that learn no map as
// they are, and the WVCMC rows named scheme.Under(s, p), renamed to the
// bare scheme name s. Values are indexed by scheme, sweep point and trial.
//
// All schemes of one (point, trial) task share its worker samples and
// channel, so comparisons at one point pair them by trial.
type Trials struct {
	Metric string
	XName  string

	x    map[int]float64                 // point → x
	vals map[string]map[int][]trialValue // scheme → point → values in trial order
	used map[string]bool                 // the schemes a check looked up
}

// trialValue is one trial's value.
type trialValue struct {
	trial int
	v     float64
}

// TrialsOf collects the per-trial values of metric from res under
// protocol p (see Trials). Comparisons pair trial t at one sweep point
// with trial t at another: runner.TaskRng gives every point's task of a
// trial the same stream (common random numbers), so those values are
// dependent and only a paired comparison is valid; for results of earlier
// versions, whose trials across points were independent, the pairs are
// still independent and identically distributed across trials, so the
// paired bootstrap stays valid (with the power of a two-sample one).
func TrialsOf(res *runner.Result, metric string, p scheme.Protocol) *Trials {
	t := &Trials{Metric: metric, XName: res.Spec.X, x: map[int]float64{}, vals: map[string]map[int][]trialValue{}, used: map[string]bool{}}
	for _, task := range res.Tasks {
		for _, r := range task.Rows {
			if r.Metric != metric {
				continue
			}
			s, ok := protocolName(r.Scheme, p)
			if !ok {
				continue
			}
			v := r.Value
			if isErr2(metric) && v < Err2Floor {
				v = Err2Floor
			}
			t.add(s, task.Point, task.X, task.Trial, v)
		}
	}
	t.sortTrials()
	return t
}

// protocolName returns the name under which a result row enters the view
// of protocol p: the bare name of a WVCMC row of protocol p, the name of a
// scheme that learns no map, and ok = false otherwise.
func protocolName(row string, p scheme.Protocol) (string, bool) {
	s, rp, ok := scheme.Split(row)
	if !ok {
		return "", false
	}
	if scheme.IsVariational(s) {
		return s, rp == p
	}
	return row, true
}

// HasProtocol reports whether res holds any WVCMC row of protocol p.
func HasProtocol(res *runner.Result, p scheme.Protocol) bool {
	for _, task := range res.Tasks {
		for _, r := range task.Rows {
			if s, rp, ok := scheme.Split(r.Scheme); ok && rp == p && scheme.IsVariational(s) {
				return true
			}
		}
	}
	return false
}

func (t *Trials) add(s string, point int, x float64, trial int, v float64) {
	if t.vals[s] == nil {
		t.vals[s] = map[int][]trialValue{}
	}
	t.vals[s][point] = append(t.vals[s][point], trialValue{trial, v})
	t.x[point] = x
}

func (t *Trials) sortTrials() {
	for _, byPoint := range t.vals {
		for _, tv := range byPoint {
			sort.Slice(tv, func(i, j int) bool { return tv[i].trial < tv[j].trial })
		}
	}
}

// has reports whether scheme s has values at point p.
func (t *Trials) has(s string, p int) bool {
	t.used[s] = true
	return len(t.vals[s][p]) > 0
}

// points returns the sweep points at which every scheme given has a
// value, ordered by increasing x.
func (t *Trials) points(schemes ...string) []int {
	var out []int
	for p := range t.x {
		if !slices.ContainsFunc(schemes, func(s string) bool { return !t.has(s, p) }) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if t.x[out[i]] != t.x[out[j]] {
			return t.x[out[i]] < t.x[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}

// present returns the schemes given that have a value at point p.
func (t *Trials) present(p int, schemes ...string) []string {
	var out []string
	for _, s := range schemes {
		if t.has(s, p) {
			out = append(out, s)
		}
	}
	return out
}

// at returns "xname=x" of point p.
func (t *Trials) at(p int) string { return t.XName + "=" + runner.FormatX(t.x[p]) }

// usedVariational reports whether a check looked up a WVCMC scheme.
func (t *Trials) usedVariational() bool {
	for s := range t.used {
		if scheme.IsVariational(s) {
			return true
		}
	}
	return false
}

// ref names the values of one scheme at one sweep point.
type ref struct {
	scheme string
	point  int
}

// column returns the values of r at the given trials (in that order), and
// whether each was found.
func (t *Trials) column(r ref, trials []int) ([]float64, bool) {
	tv := t.vals[r.scheme][r.point]
	out := make([]float64, len(trials))
	for i, tr := range trials {
		j := sort.Search(len(tv), func(j int) bool { return tv[j].trial >= tr })
		if j == len(tv) || tv[j].trial != tr {
			return nil, false
		}
		out[i] = tv[j].v
	}
	return out, true
}

// trialsOf returns the trials at which every ref has a value, in order.
func (t *Trials) trialsOf(refs ...ref) []int {
	var out []int
	for i, r := range refs {
		var ts []int
		for _, v := range t.vals[r.scheme][r.point] {
			ts = append(ts, v.trial)
		}
		if i == 0 {
			out = ts
			continue
		}
		out = slices.DeleteFunc(out, func(tr int) bool { _, found := slices.BinarySearch(ts, tr); return !found })
	}
	return out
}

// unstationary counts, over the tasks of res, the fits of the variational
// schemes a check used (run under the converged protocol) that did not
// stop at a stationary point. A fit is stationary when its status is
// gradient-converged (consensus.Status names in the results JSON), or its
// gradient norm is at most StationaryGrad times its start value whatever
// stopped it (a line search that fails near the tolerance, at the limit
// of floating point); the gradient budget of a trajectory, whose
// checkpoints are the point of such a run, is accepted too. It returns
// that count, the number of fits seen and the statuses met.
func (t *Trials) unstationary(res *runner.Result) (bad, seen int, statuses []string) {
	for _, task := range res.Tasks {
		for s := range t.used {
			if !scheme.IsVariational(s) {
				continue
			}
			info, ok := task.Info[scheme.Under(s, scheme.Converged)]
			if !ok {
				continue
			}
			seen++
			st, _ := info["status"].(string)
			rel, ok := info["rel_grad_norm"].(float64)
			if st == "gradient-converged" || (ok && rel <= StationaryGrad) || (res.Spec.Trajectory && st == "budget-spent") {
				continue
			}
			bad++
			if !slices.Contains(statuses, st) {
				statuses = append(statuses, st)
			}
		}
	}
	slices.Sort(statuses)
	return bad, seen, statuses
}

// isErr2 reports whether metric is err2 or err2_fresh (Err2Floor applies).
func isErr2(metric string) bool { return metric == "err2" || metric == "err2_fresh" }
