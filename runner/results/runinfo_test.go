package results_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/internal/sweeptest"
	"github.com/wcmc-project/wcmc/runner/results"
)

// TestRunInfoRoundTrip: what Setup reported goes to ID.json under
// "run_info" and Load reads it back; a run without it writes none.
func TestRunInfoRoundTrip(t *testing.T) {
	spec := sweeptest.Reporting(sweeptest.Noise())
	res := sweeptest.MustRun(t, spec, runner.Options{Seed: 2, Trials: 2})
	if res.RunInfo == nil {
		t.Fatal("the run has no run info")
	}
	dir := t.TempDir()
	if _, _, err := results.WriteFiles(dir, res); err != nil {
		t.Fatal(err)
	}
	got, err := results.Load(dir, spec)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.RunInfo, res.RunInfo) {
		t.Errorf("loaded run info %v, want %v", got.RunInfo, res.RunInfo)
	}

	plain, _ := writtenRun(t, runner.Options{Trials: 2})
	b, err := os.ReadFile(filepath.Join(plain, "noise.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "run_info") {
		t.Error("ID.json of a run whose Setup reports nothing has a run_info")
	}
	if got, err := results.Load(plain, sweeptest.Noise()); err != nil || got.RunInfo != nil {
		t.Errorf("loaded run info %v, err %v; want none", got.RunInfo, err)
	}
}
