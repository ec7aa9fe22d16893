package results_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/internal/sweeptest"
	"github.com/wcmc-project/wcmc/runner/results"
)

// TestLoadMatchingDataFolder: a result is reused from another folder
// holding the same data (its recorded digest), or from the same folder
// spelled otherwise; not from a folder holding other data (the same
// folder, its data replaced, included), nor from
// another folder when the stored result recorded no digest.
func TestLoadMatchingDataFolder(t *testing.T) {
	a, same, other := sweeptest.DataFolder(t, "mnist"), sweeptest.DataFolder(t, "mnist"), sweeptest.DataFolder(t, "fashion")
	opts := func(dir string) runner.Options {
		return runner.Options{Seed: 3, Trials: 2, Sets: []string{"data=" + dir}}
	}
	res := sweeptest.MustRun(t, sweeptest.WithData(sweeptest.Noise()), opts(a))
	if got := res.InputDigests["data"]; got != "content:mnist" {
		t.Fatalf("recorded digest %q, want content:mnist", got)
	}
	out := t.TempDir()
	if _, _, err := results.WriteFiles(out, res); err != nil {
		t.Fatal(err)
	}
	load := func(dir string) error {
		t.Helper()
		plan, err := runner.NewPlan(sweeptest.WithData(sweeptest.Noise()), opts(dir))
		if err != nil {
			t.Fatal(err)
		}
		_, err = results.LoadMatching(out, plan)
		return err
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	for name, dir := range map[string]string{"the same folder": a, "through a symbolic link": link,
		"with a trailing /.": a + "/.", "another folder with the same data": same} {
		if err := load(dir); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	err := load(other)
	if !errors.Is(err, results.ErrMismatch) || !strings.Contains(err.Error(), "data differs") {
		t.Errorf("a folder with other data: %v, want a mismatch saying the data differs", err)
	}

	// The same folder, its data replaced since: another run.
	if err := os.WriteFile(filepath.Join(a, "file"), []byte("fashion"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = load(a)
	if !errors.Is(err, results.ErrMismatch) || !strings.Contains(err.Error(), "the data in it differs from the stored result's") {
		t.Errorf("the same folder holding other data: %v, want a mismatch saying its data differs", err)
	}
	if err := os.WriteFile(filepath.Join(a, "file"), []byte("mnist"), 0o644); err != nil {
		t.Fatal(err)
	}

	// A result stored before digests were recorded: only the same folder.
	dropField(t, filepath.Join(out, "noise.json"), "input_digests")
	if err := load(link); err != nil {
		t.Errorf("no recorded digest, the same folder through a link: %v", err)
	}
	if err := load(same); !errors.Is(err, results.ErrMismatch) || !strings.Contains(err.Error(), "records no digest") {
		t.Errorf("no recorded digest, another folder: %v, want a mismatch saying so", err)
	}
}
