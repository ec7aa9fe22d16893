package runner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Shard selects the Index-th (0-based) of Count slices of a run's tasks,
// for running one run on several machines (see Plan.ShardTasks). The zero
// value and Count = 1 mean the whole run.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// Whole reports whether s is the whole run (Count ≤ 1).
func (s Shard) Whole() bool { return s.Count <= 1 }

// Canonical returns s with the zero value written as 0/1, so that two
// ways of naming the whole run compare equal.
func (s Shard) Canonical() Shard {
	if s.Count == 0 && s.Index == 0 {
		return Shard{0, 1}
	}
	return s
}

// String writes s as "i/n".
func (s Shard) String() string {
	s = s.Canonical()
	return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count)
}

// Check reports a shard that does not exist: Count < 1 or Index outside
// [0, Count).
func (s Shard) Check() error {
	s = s.Canonical()
	switch {
	case s.Count < 1:
		return fmt.Errorf("shard %d/%d: the count must be ≥ 1", s.Index, s.Count)
	case s.Index < 0 || s.Index >= s.Count:
		return fmt.Errorf("shard %d/%d: the index must be in 0..%d (0-based)", s.Index, s.Count, s.Count-1)
	}
	return nil
}

// ParseShard parses "i/n": the 0-based index i of n shards.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want i/n, e.g. 0/4 for the first of 4 (0-based)", s)
	}
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want i/n with integers, e.g. 0/4", s)
	}
	sh := Shard{Index: i, Count: n}
	if err := sh.Check(); err != nil {
		return Shard{}, err
	}
	return sh, nil
}

// ShardTasks returns the tasks of shard s, in task order. The units of work
// (single tasks, or for a Trajectory spec all the tasks of one trial, which
// must run together) are dealt round-robin in (point, trial) order: unit u
// goes to shard u mod Count. The shards are disjoint, cover the run, differ
// in size by at most one unit, and each holds about 1/Count of every sweep
// point's trials, so an expensive point does not land on one machine.
func (p *Plan) ShardTasks(s Shard) ([]TaskKey, error) {
	s = s.Canonical()
	if err := s.Check(); err != nil {
		return nil, err
	}
	if s.Count == 1 {
		return p.Tasks, nil
	}
	units := p.units(p.Tasks)
	var out []TaskKey
	for u, unit := range units {
		if u%s.Count != s.Index {
			continue
		}
		for _, i := range unit {
			out = append(out, p.Tasks[i])
		}
	}
	slices.SortFunc(out, TaskKey.Compare)
	return out, nil
}

// ShardOf returns the index of the shard (of count) that holds key k.
func (p *Plan) ShardOf(k TaskKey, count int) int {
	if count <= 1 {
		return 0
	}
	if p.Spec.Trajectory {
		return k.Trial % count
	}
	return (k.Point*p.Trials + k.Trial) % count
}
