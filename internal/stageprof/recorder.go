package stageprof

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/google/pprof/profile"
)

// Recorder profiles computations one after another (the experiments of a
// reproduction) into a directory: for each, ID.cpu.pprof (the CPU profile
// of the computation) and ID.allocs.pprof (the allocations made during it:
// the difference of the process's allocation profile after and before),
// both for `go tool pprof`, and its Table.
type Recorder struct {
	dir  string
	Runs []Run
}

// Run is one profiled computation.
type Run struct {
	ID    string
	Wall  time.Duration
	Table Table
}

// NewRecorder returns a Recorder writing into dir, which it creates.
func NewRecorder(dir string) (*Recorder, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &Recorder{dir: dir}, nil
}

// Profile runs f under a CPU profile and records it as id. The profile
// covers the whole process while f runs (wcmc runs one experiment at a
// time, its tasks in parallel). It returns f's error, or a profiling error.
func (r *Recorder) Profile(id string, f func() error) error {
	cpuPath := filepath.Join(r.dir, id+".cpu.pprof")
	cpu, err := os.Create(cpuPath)
	if err != nil {
		return err
	}
	defer cpu.Close()
	before, err := allocs()
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		return fmt.Errorf("profiling %s: %w", id, err)
	}
	start := time.Now()
	ferr := f()
	wall := time.Since(start)
	pprof.StopCPUProfile()
	if ferr != nil {
		return ferr
	}
	if err := cpu.Close(); err != nil {
		return err
	}
	after, err := allocs()
	if err != nil {
		return err
	}
	if err := writeDelta(filepath.Join(r.dir, id+".allocs.pprof"), after, before); err != nil {
		return err
	}
	in, err := os.Open(cpuPath)
	if err != nil {
		return err
	}
	defer in.Close()
	t, err := Read(in)
	if err != nil {
		return fmt.Errorf("%s: %w", cpuPath, err)
	}
	r.Runs = append(r.Runs, Run{ID: id, Wall: wall, Table: t})
	return nil
}

// allocs returns the process's allocation profile now (after a GC, so
// that it is up to date).
func allocs() (*profile.Profile, error) {
	runtime.GC()
	var buf bytes.Buffer
	if err := pprof.Lookup("allocs").WriteTo(&buf, 0); err != nil {
		return nil, err
	}
	return profile.Parse(&buf)
}

// writeDelta writes after − before to path.
func writeDelta(path string, after, before *profile.Profile) error {
	before.Scale(-1)
	d, err := profile.Merge([]*profile.Profile{after, before})
	if err != nil {
		return err
	}
	d = d.Compact()
	var buf bytes.Buffer
	if err := d.Write(&buf); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// WriteMarkdown writes the recorded runs as Markdown: a summary table (one
// row per run: wall time, CPU sampled, the largest stages) and one table per
// run with every stage.
func (r *Recorder) WriteMarkdown(w io.Writer) error {
	var b bytes.Buffer
	b.WriteString("| experiment | wall | CPU sampled | largest stages |\n|---|---:|---:|---|\n")
	for _, run := range r.Runs {
		fmt.Fprintf(&b, "| `%s` | %s | %s |", run.ID, fmtDur(run.Wall.Seconds()), fmtDur(run.Table.Total))
		for i, row := range run.Table.Rows {
			if i == 3 {
				break
			}
			if i > 0 {
				b.WriteString(";")
			}
			fmt.Fprintf(&b, " %s %.0f%%", row.Stage, 100*row.Seconds/run.Table.Total)
		}
		b.WriteString(" |\n")
	}
	for _, run := range r.Runs {
		fmt.Fprintf(&b, "\n### `%s`\n\nWall %s, CPU sampled %s (`%s.cpu.pprof`, allocations `%s.allocs.pprof`).\n\n| stage | CPU | share |\n|---|---:|---:|\n",
			run.ID, fmtDur(run.Wall.Seconds()), fmtDur(run.Table.Total), run.ID, run.ID)
		for _, row := range run.Table.Rows {
			fmt.Fprintf(&b, "| %s | %s | %.1f%% |\n", row.Stage, fmtDur(row.Seconds), 100*row.Seconds/run.Table.Total)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// fmtDur formats seconds as "2.1 s", "14 min 5 s" or "1 h 12 min".
func fmtDur(s float64) string {
	switch {
	case s < 60:
		return fmt.Sprintf("%.1f s", s)
	case s < 3600:
		return fmt.Sprintf("%d min %d s", int(s)/60, int(s)%60)
	}
	return fmt.Sprintf("%d h %d min", int(s)/3600, int(s)%3600/60)
}
