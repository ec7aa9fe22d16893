package reproduce

import (
	"io"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/experiment"
)

// A reproduction plans the paper's figures and nothing else: the
// experiments beyond the paper are neither selected by default nor
// accepted by --only.
func TestPlanSelectsPaperFigures(t *testing.T) {
	jobs, _, err := plan(experiment.All(), Config{Quick: true}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	planned := map[string]bool{}
	for _, j := range jobs {
		planned[j.spec.ID] = true
	}
	beyond := 0
	for _, s := range experiment.All() {
		paper := strings.HasPrefix(s.Figure, "Fig.")
		if paper != s.PaperFigure() || planned[s.ID] != paper {
			t.Errorf("%s (figure %q): planned %v", s.ID, s.Figure, planned[s.ID])
		}
		if s.Figure == experiment.FigureBeyond {
			beyond++
		}
	}
	if len(planned) == 0 || beyond == 0 {
		t.Fatalf("%d experiments planned, %d beyond the paper registered", len(planned), beyond)
	}
	_, _, err = plan(experiment.All(), Config{Quick: true, Only: []string{"gauss-snr", "power-control"}}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "wcmc run power-control") {
		t.Errorf("--only with an experiment beyond the paper: %v", err)
	}
	// One beyond the paper that the project states claims about can be named.
	jobs, _, err = plan(experiment.All(), Config{Quick: true, Only: []string{"centring"}}, io.Discard)
	if err != nil || len(jobs) != 1 || jobs[0].spec.ID != "centring" {
		t.Errorf("--only centring (the project's claims): %d jobs, %v", len(jobs), err)
	}
}
