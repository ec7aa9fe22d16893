package journal

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/internal/sweeptest"
)

// TestRunInfoSurvivesResumeAndMerge: what Setup reports is the same for an
// uninterrupted run, a resumed one, a resume with no task left (which does
// not call Setup) and the merge of the shards' journals.
func TestRunInfoSurvivesResumeAndMerge(t *testing.T) {
	spec := sweeptest.Reporting(sweeptest.Noise())
	opts := Options{Options: runner.Options{Seed: 9, Trials: 4, Workers: 2}, Dir: t.TempDir()}
	want := reference(t, spec, opts).RunInfo
	state, ok := want["setup"]["state"].(float64)
	if !ok || !(state > 0 && state < 1) || want["setup"]["nan"] != "NaN" {
		t.Fatalf("run info %v: want the setup's offset in (0, 1) and NaN as the string \"NaN\"", want)
	}

	interrupt(t, spec, opts, 3)
	id, err := ReadIdentity(IdentityPath(opts.Dir, spec.ID))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(id.RunInfo, want) {
		t.Errorf("identity of the interrupted run holds %v, want %v", id.RunInfo, want)
	}
	opts.Resume = true
	if got := mustRun(t, spec, opts).RunInfo; !reflect.DeepEqual(got, want) {
		t.Errorf("resumed run: %v, want %v", got, want)
	}
	finished := spec
	finished.Setup = func(runner.Values, *rand.Rand) (any, error) { t.Fatal("Setup ran"); return nil, nil }
	if got := mustRun(t, finished, opts).RunInfo; !reflect.DeepEqual(got, want) {
		t.Errorf("resume of a finished journal: %v, want %v", got, want)
	}

	dirs := shardDirs(t, spec, opts.Options, 3)
	merged, err := Merge([]runner.Spec{spec}, dirs, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(merged.RunInfo, want) {
		t.Errorf("merged: %v, want %v", merged.RunInfo, want)
	}
}

// TestNoRunInfo: a Setup that does not report leaves the identity and the
// result without run info.
func TestNoRunInfo(t *testing.T) {
	opts := Options{Options: runner.Options{Trials: 2}, Dir: t.TempDir()}
	interrupt(t, sweeptest.Noise(), opts, 2)
	id, err := ReadIdentity(IdentityPath(opts.Dir, "noise"))
	if err != nil || id.RunInfo != nil {
		t.Fatalf("identity run info %v, err %v; want none", id.RunInfo, err)
	}
	opts.Resume = true
	if res := mustRun(t, sweeptest.Noise(), opts); res.RunInfo != nil {
		t.Errorf("run info %v, want none", res.RunInfo)
	}
}
