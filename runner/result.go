package runner

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// TaskKey identifies one task of a run: a sweep point and a trial.
type TaskKey struct {
	Point int     `json:"point"` // index of X in the sweep list
	X     float64 `json:"x"`
	Trial int     `json:"trial"`
}

// Compare orders task keys by (point, trial), the order of a run's tasks.
func (k TaskKey) Compare(o TaskKey) int {
	return cmp.Or(cmp.Compare(k.Point, o.Point), cmp.Compare(k.Trial, o.Trial))
}

// TaskResult is the self-contained record of one finished task.
type TaskResult struct {
	TaskKey
	Rows    []Row                     `json:"rows"`
	Skipped []Skip                    `json:"skipped,omitempty"`
	Info    map[string]map[string]any `json:"info,omitempty"`
}

// Note is a scheme skipped at a sweep point, with the reason.
type Note struct {
	Scheme string  `json:"scheme"`
	XName  string  `json:"x_name"`
	X      float64 `json:"x"`
	Reason string  `json:"reason"`
}

func (n Note) String() string {
	return fmt.Sprintf("%s not applicable at %s=%s: %s", n.Scheme, n.XName, FormatX(n.X), n.Reason)
}

// Result is a finished run.
type Result struct {
	Spec   Spec
	Values Values
	Seed   uint64
	Trials int
	Quick  bool
	// Tasks holds every task's record ordered by (point, trial).
	Tasks []TaskResult
	// Notes lists the distinct skips in task order.
	Notes      []Note
	Start, End time.Time
	// Wall is the wall time spent computing the result: End − Start for a
	// run done in one go; for a resumed run (package journal), the sum over
	// its sessions, without the time between them.
	Wall time.Duration
	// Sessions are the processes that computed Tasks, in the order they
	// began (one for a run done in one go; see Session); nil for results
	// stored before sessions were recorded.
	Sessions []Session
	// Shard is the slice of the run that Tasks holds (0/1: all of it).
	Shard Shard
	// Resumed counts the tasks taken from the journal of an earlier,
	// interrupted process rather than run by this one.
	Resumed int
	// RunInfo is what the run's Setup state reported (see RunInfoer), in
	// JSON types; nil when it reports nothing.
	RunInfo map[string]map[string]any
	// InputDigests holds, for each parameter that names input data
	// (Param.Digest), the digest of that data when the result was
	// assembled; nil when there is none, or for results stored before
	// digests were recorded.
	InputDigests map[string]string
	// Version is the wcmc version that computed the result when it was
	// read from files (results.Load); "" for a result this process
	// computed (Version then means runner.Version).
	Version string
}

// Session is the share of a result that one process computed: when it
// began, how many of the tasks it finished, the time from its start to its
// last finished task, the machine it ran on (Options.Machine; "" when not
// recorded, as in journals written before machines were) and the tasks it
// ran at once (0: not recorded).
type Session struct {
	Began   time.Time
	Tasks   int
	Wall    time.Duration
	Machine string
	Workers int
}

// Where names the machine and workers of s ("" when the machine is not
// recorded): "M, 2 workers".
func (s Session) Where() string {
	switch {
	case s.Machine == "":
		return ""
	case s.Workers == 1:
		return s.Machine + ", 1 worker"
	case s.Workers > 1:
		return fmt.Sprintf("%s, %d workers", s.Machine, s.Workers)
	}
	return s.Machine
}

// ComputedBy returns the wcmc version that computed res.
func (res *Result) ComputedBy() string {
	if res.Version != "" {
		return res.Version
	}
	return Version
}

// Result assembles a Result from task records (in any order).
func (p *Plan) Result(tasks []TaskResult, start, end time.Time) *Result {
	tasks = slices.Clone(tasks)
	slices.SortStableFunc(tasks, func(a, b TaskResult) int { return a.TaskKey.Compare(b.TaskKey) })
	res := &Result{Spec: p.Spec, Values: p.Values, Seed: p.Seed, Trials: p.Trials, Quick: p.Quick,
		Tasks: tasks, Start: start, End: end, Wall: end.Sub(start), InputDigests: p.InputDigests()}
	seen := map[Note]bool{}
	for _, t := range tasks {
		for _, s := range t.Skipped {
			n := Note{Scheme: s.Scheme, XName: p.Spec.X, X: t.X, Reason: s.Reason}
			if !seen[n] {
				seen[n] = true
				res.Notes = append(res.Notes, n)
			}
		}
	}
	return res
}
