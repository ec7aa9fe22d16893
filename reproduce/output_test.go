package reproduce

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/figure"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/results"
)

// A reproduction into a fresh directory says nothing of journals, leaves
// none behind once the results are written, and draws each metric's
// figure per protocol, in every format; --band redraws reused figures.
func TestRunOutputFolder(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a quick reproduction (-short)")
	}
	dir := t.TempDir()
	_, log, err := run(t, quick(dir, "gauss-blocks"))
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if strings.Contains(log, "journal") || strings.Contains(log, "no finished tasks") {
		t.Errorf("a fresh run talks of journals:\n%s", log)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		if strings.HasSuffix(e.Name(), ".jsonl") || strings.HasSuffix(e.Name(), ".run.json") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	for _, base := range []string{"gauss-blocks", "gauss-blocks.paper", "gauss-blocks.converged",
		"gauss-blocks.err2_fresh", "gauss-blocks.err2_fresh.paper", "gauss-blocks.err2_fresh.converged"} {
		for _, ext := range figure.Formats {
			if !slices.Contains(names, base+"."+ext) {
				t.Errorf("no %s.%s among %v", base, ext, names)
			}
		}
	}

	// Another band: the stored results are reused, the figures redrawn.
	before, _ := os.ReadFile(filepath.Join(dir, "gauss-blocks.svg"))
	cfg := quick(dir, "gauss-blocks")
	cfg.RedrawFigures = true
	cfg.Band = results.BandSpread
	if _, log, err = run(t, cfg); err != nil || !strings.Contains(log, "redrawing the figures") || strings.Contains(log, "running") {
		t.Fatalf("--band: %v\n%s", err, log)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "gauss-blocks.svg"))
	if string(before) == string(after) || !strings.Contains(string(after), "5–95% range of the trials") {
		t.Error("the figure was not redrawn with the spread band")
	}
}

// FigureOrder sorts by the paper's figure number, those without one last.
func TestFigureOrder(t *testing.T) {
	specs := []runner.Spec{{ID: "c", Figure: "Fig. 10"}, {ID: "none"}, {ID: "a", Figure: "Fig. 2"}, {ID: "b", Figure: "Fig. 9"}}
	var got []string
	for _, s := range FigureOrder(specs) {
		got = append(got, s.ID)
	}
	if want := []string{"a", "b", "c", "none"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
