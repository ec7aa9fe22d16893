package runner_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/internal/sweeptest"
)

func TestParseShard(t *testing.T) {
	for in, want := range map[string]runner.Shard{"0/1": {0, 1}, "2/3": {2, 3}, " 0 / 4 ": {0, 4}} {
		if got, err := runner.ParseShard(in); err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, want := range map[string]string{"3/3": "0..2", "-1/3": "0..2", "1/0": "≥ 1", "1": "want i/n", "a/b": "integers", "": "want i/n", "1/2/3": "integers"} {
		if _, err := runner.ParseShard(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseShard(%q): error %v should mention %q", in, err, want)
		}
	}
	if s := (runner.Shard{}); !s.Whole() || s.String() != "0/1" || s.Check() != nil {
		t.Error("zero Shard is not the whole run")
	}
}

func TestShardTasksPartition(t *testing.T) {
	for _, spec := range []runner.Spec{sweeptest.Noise(), sweeptest.Walk()} {
		for _, trials := range []int{1, 4, 7} {
			plan, err := runner.NewPlan(spec, runner.Options{Trials: trials})
			if err != nil {
				t.Fatal(err)
			}
			units := len(plan.Units(plan.Tasks))
			for count := 1; count <= 9; count++ {
				var all []runner.TaskKey
				for i := range count {
					keys, err := plan.ShardTasks(runner.Shard{Index: i, Count: count})
					if err != nil {
						t.Fatal(err)
					}
					// Balanced: ⌊units/count⌋ or ⌈units/count⌉ units each.
					n := len(plan.Units(keys))
					if n != units/count && n != (units+count-1)/count {
						t.Errorf("%s trials %d shard %d/%d: %d units of %d", spec.ID, trials, i, count, n, units)
					}
					if !slices.IsSortedFunc(keys, func(a, b runner.TaskKey) int { return a.Point*1000 + a.Trial - b.Point*1000 - b.Trial }) {
						t.Errorf("shard keys not in task order")
					}
					for _, k := range keys {
						if plan.ShardOf(k, count) != i {
							t.Errorf("ShardOf(%v) = %d, want %d", k, plan.ShardOf(k, count), i)
						}
					}
					// A trajectory's trial is never split.
					if spec.Trajectory && len(keys)%3 != 0 {
						t.Errorf("trajectory shard %d/%d splits a trial: %v", i, count, keys)
					}
					all = append(all, keys...)
				}
				slices.SortFunc(all, runner.TaskKey.Compare)
				if !slices.Equal(all, plan.Tasks) {
					t.Errorf("%s trials %d count %d: the shards do not partition the tasks", spec.ID, trials, count)
				}
			}
		}
	}
	// Every shard gets every sweep point when trials ≥ count.
	plan, _ := runner.NewPlan(sweeptest.Noise(), runner.Options{Trials: 6})
	for i := range 3 {
		keys, _ := plan.ShardTasks(runner.Shard{Index: i, Count: 3})
		points := map[int]int{}
		for _, k := range keys {
			points[k.Point]++
		}
		if len(points) != 3 || points[0] != 2 {
			t.Errorf("shard %d/3 points %v, want 2 trials of each of 3", i, points)
		}
	}
	if _, err := plan.ShardTasks(runner.Shard{Index: 3, Count: 3}); err == nil {
		t.Error("shard 3/3 accepted")
	}
}

func ExampleParseShard() {
	s, _ := runner.ParseShard("1/3")
	fmt.Println(s.Index, s.Count, s)
	// Output: 1 3 1/3
}
