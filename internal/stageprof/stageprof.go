// Package stageprof attributes a CPU profile of a wcmc run to the stages
// of its experiments (worker sampling, the reference posterior, each WVCMC
// optimiser, the Gaussian schemes, the channel, the predictive KL, ...),
// and records one CPU and one allocation profile per experiment of a
// reproduction (Recorder).
//
// A sample belongs to the stage of the outermost wcmc function on its
// stack that the stage table names (a sampler function: "sampling"; a
// channel function: "channel"; ...), "other" if none. Two pprof labels
// refine it: wvcmc=<access>/<method>, set by consensus.WVCMC, names the
// WVCMC run (gonum's optimiser evaluates in goroutines of its own, which
// inherit the label but not the stack), and stage=setup, set by the runner
// around an experiment's shared setup (data and reference posterior),
// prefixes "setup: ".
package stageprof

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// stages maps function-name prefixes to stages; a sample takes the stage
// of the outermost frame that matches.
var stages = []struct{ prefix, stage string }{
	{"github.com/wcmc-project/wcmc/sampler.RunSGLD", "sgld"},
	{"github.com/wcmc-project/wcmc/sampler.", "sampling"},
	{"github.com/wcmc-project/wcmc/consensus.InitialMap", "gaussian schemes"},
	{"github.com/wcmc-project/wcmc/consensus.GCMC", "gaussian schemes"},
	{"github.com/wcmc-project/wcmc/consensus.WGCMC", "gaussian schemes"},
	{"github.com/wcmc-project/wcmc/consensus.Noiseless", "gaussian schemes"},
	{"github.com/wcmc-project/wcmc/channel.", "channel"},
	{"github.com/wcmc-project/wcmc/digital.", "channel"},
	{"github.com/wcmc-project/wcmc/consensus.Map.Apply", "apply maps"},
	{"github.com/wcmc-project/wcmc/consensus.SingleWorker", "apply maps"},
	{"github.com/wcmc-project/wcmc/model.PredictiveProb", "predictive KL"},
	{"github.com/wcmc-project/wcmc/metric.PredictiveKL", "predictive KL"},
	{"github.com/wcmc-project/wcmc/metric.", "err2 and moments"},
	{"github.com/wcmc-project/wcmc/diagnostics.", "chain diagnostics"},
	// The journal's own work (not journal.Run, the root of every task):
	// encoding, writing and reading records.
	{"github.com/wcmc-project/wcmc/runner/journal.(*file)", "journal (I/O)"},
	{"github.com/wcmc-project/wcmc/runner/journal.encodeRecord", "journal (I/O)"},
	{"github.com/wcmc-project/wcmc/runner/journal.Read", "journal (I/O)"},
	{"github.com/wcmc-project/wcmc/runner/journal.writeIdentity", "journal (I/O)"},
	{"runtime.gcBgMarkWorker", "GC (background)"},
}

// Row is one stage's CPU time.
type Row struct {
	Stage   string
	Seconds float64
}

// Table is a profile's CPU time by stage, largest first.
type Table struct {
	Total float64 // CPU seconds sampled
	Rows  []Row
}

// Attribute sums the CPU time of p's samples by stage.
func Attribute(p *profile.Profile) (Table, error) {
	vi := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			vi = i
		}
	}
	if vi < 0 {
		return Table{}, fmt.Errorf("stageprof: not a CPU profile (sample types %v)", p.SampleType)
	}
	unit := 1.0
	if u := p.SampleType[vi].Unit; u == "nanoseconds" {
		unit = 1e-9
	}
	sum := map[string]float64{}
	var total float64
	for _, s := range p.Sample {
		v := float64(s.Value[vi]) * unit
		if v == 0 {
			continue
		}
		stage := stageOf(s)
		sum[stage] += v
		total += v
	}
	t := Table{Total: total}
	for k, v := range sum {
		t.Rows = append(t.Rows, Row{k, v})
	}
	slices.SortFunc(t.Rows, func(a, b Row) int {
		if c := cmp.Compare(b.Seconds, a.Seconds); c != 0 {
			return c
		}
		return strings.Compare(a.Stage, b.Stage)
	})
	return t, nil
}

// stageOf is the stage of one sample (see the package comment).
func stageOf(s *profile.Sample) string {
	stage := "other"
	if l := s.Label["wvcmc"]; len(l) > 0 {
		stage = "wvcmc " + l[0]
	} else {
		// Locations are leaf first, and so are the inlined lines of one
		// location: walk from the root.
	frames:
		for i := len(s.Location) - 1; i >= 0; i-- {
			lines := s.Location[i].Line
			for j := len(lines) - 1; j >= 0; j-- {
				if lines[j].Function == nil {
					continue
				}
				name := lines[j].Function.Name
				for _, st := range stages {
					if strings.HasPrefix(name, st.prefix) {
						stage = st.stage
						break frames
					}
				}
			}
		}
	}
	if l := s.Label["stage"]; len(l) > 0 && l[0] == "setup" && stage != "GC (background)" {
		stage = "setup: " + stage
	}
	return stage
}

// Read parses a profile (as written by runtime/pprof) and attributes it.
func Read(r io.Reader) (Table, error) {
	p, err := profile.Parse(r)
	if err != nil {
		return Table{}, err
	}
	return Attribute(p)
}

// WriteText writes t as aligned text lines: stage, seconds, share.
func (t Table) WriteText(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "CPU profile by stage (%.1f s sampled):\n", t.Total); err != nil {
		return err
	}
	if t.Total == 0 {
		_, err := fmt.Fprintln(w, "  (no samples: the computation took less than the 10 ms sampling period)")
		return err
	}
	for _, r := range t.Rows {
		if _, err := fmt.Fprintf(w, "  %-44s %8.2f s  %5.1f%%\n", r.Stage, r.Seconds, 100*r.Seconds/t.Total); err != nil {
			return err
		}
	}
	return nil
}
