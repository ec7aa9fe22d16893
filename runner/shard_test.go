package runner

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// walkSpec is a Trajectory spec: one random walk per trial, observed at
// the checkpoints.
func walkSpec() Spec {
	return Spec{
		ID: "walk", X: "steps", Metrics: []string{"pos"}, Schemes: []string{"w", "v"}, Trials: 3, Trajectory: true,
		Params: []Param{{Name: "steps", Kind: Int, Default: "1,10,100"}},
		Run: func(t Task) (Outcome, error) {
			var o Outcome
			pos, done := 0.0, 0
			for _, c := range t.Params.XList() {
				for ; done < int(c); done++ {
					pos += t.Rng.NormFloat64()
				}
				o.Rows = append(o.Rows, Row{Scheme: "w", Metric: "pos", Value: pos, X: c}, Row{Scheme: "v", Metric: "pos", Value: math.Abs(pos), X: c})
			}
			o.Info = map[string]map[string]any{"w": {"final": pos}}
			return o, nil
		},
	}
}

func TestParseShard(t *testing.T) {
	for in, want := range map[string]Shard{"0/1": {0, 1}, "2/3": {2, 3}, " 0 / 4 ": {0, 4}} {
		if got, err := ParseShard(in); err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, want := range map[string]string{"3/3": "0..2", "-1/3": "0..2", "1/0": "≥ 1", "1": "want i/n", "a/b": "integers", "": "want i/n", "1/2/3": "integers"} {
		if _, err := ParseShard(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseShard(%q): error %v should mention %q", in, err, want)
		}
	}
	if s := (Shard{}); !s.Whole() || s.String() != "0/1" || s.Check() != nil {
		t.Error("zero Shard is not the whole run")
	}
}

func TestShardTasksPartition(t *testing.T) {
	for _, spec := range []Spec{noiseSpec(), walkSpec()} {
		for _, trials := range []int{1, 4, 7} {
			plan, err := NewPlan(spec, Options{Trials: trials})
			if err != nil {
				t.Fatal(err)
			}
			units := len(plan.units(plan.Tasks))
			for count := 1; count <= 9; count++ {
				var all []TaskKey
				for i := range count {
					keys, err := plan.ShardTasks(Shard{i, count})
					if err != nil {
						t.Fatal(err)
					}
					// Balanced: ⌊units/count⌋ or ⌈units/count⌉ units each.
					n := len(plan.units(keys))
					if n != units/count && n != (units+count-1)/count {
						t.Errorf("%s trials %d shard %d/%d: %d units of %d", spec.ID, trials, i, count, n, units)
					}
					if !slices.IsSortedFunc(keys, func(a, b TaskKey) int { return a.Point*1000 + a.Trial - b.Point*1000 - b.Trial }) {
						t.Errorf("shard keys not in task order")
					}
					for _, k := range keys {
						if plan.shardOf(k, count) != i {
							t.Errorf("shardOf(%v) = %d, want %d", k, plan.shardOf(k, count), i)
						}
					}
					// A trajectory's trial is never split.
					if spec.Trajectory && len(keys)%3 != 0 {
						t.Errorf("trajectory shard %d/%d splits a trial: %v", i, count, keys)
					}
					all = append(all, keys...)
				}
				sortKeys(all)
				if !slices.Equal(all, plan.Tasks) {
					t.Errorf("%s trials %d count %d: the shards do not partition the tasks", spec.ID, trials, count)
				}
			}
		}
	}
	// Every shard gets every sweep point when trials ≥ count.
	plan, _ := NewPlan(noiseSpec(), Options{Trials: 6})
	for i := range 3 {
		keys, _ := plan.ShardTasks(Shard{i, 3})
		points := map[int]int{}
		for _, k := range keys {
			points[k.Point]++
		}
		if len(points) != 3 || points[0] != 2 {
			t.Errorf("shard %d/3 points %v, want 2 trials of each of 3", i, points)
		}
	}
	if _, err := plan.ShardTasks(Shard{3, 3}); err == nil {
		t.Error("shard 3/3 accepted")
	}
}

func TestShardsMergeToSingleRun(t *testing.T) {
	for _, spec := range []Spec{infoSpec(), walkSpec()} {
		opts := Options{Seed: 9, Trials: 4, Workers: 2}
		want := reference(t, spec, opts)
		for _, count := range []int{1, 3, 5, 13} { // 13 > units: empty shards
			var dirs []string
			for i := range count {
				o := opts
				o.Dir, o.Shard = t.TempDir(), Shard{i, count}
				res := mustRun(t, spec, o)
				if res.Shard != o.Shard {
					t.Errorf("result shard %v", res.Shard)
				}
				dirs = append(dirs, o.Dir)
			}
			slices.Reverse(dirs) // order does not matter
			got, err := Merge([]Spec{noiseSpec(), spec}, dirs, "")
			if err != nil {
				t.Fatalf("%s %d shards: %v", spec.ID, count, err)
			}
			sameResult(t, got, want)
			if got.End.Before(got.Start) || got.Start.IsZero() {
				t.Errorf("merged times %v – %v", got.Start, got.End)
			}
		}
	}
}

func ExampleParseShard() {
	s, _ := ParseShard("1/3")
	fmt.Println(s.Index, s.Count, s)
	// Output: 1 3 1/3
}
