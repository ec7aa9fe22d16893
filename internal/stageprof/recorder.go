package stageprof

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/google/pprof/profile"

	"github.com/wcmc-project/wcmc/internal/atomicfile"
)

// Recorder profiles computations one after another (the experiments of a
// reproduction) into a directory: for each, ID.cpu.pprof (the CPU profile
// of the computation) and ID.allocs.pprof (the allocations made during it:
// the difference of the process's allocation profile after and before),
// both for `go tool pprof`, and its Table.
type Recorder struct {
	dir  string
	Runs []Run
	// Checkpoint is how often the profiles of a running computation are
	// written (merged with what was written before), so that a process
	// killed mid-computation (a batch system's time limit) loses at most
	// that much of its profile; DefaultCheckpoint if zero.
	Checkpoint time.Duration
	// ticks, when set (tests), replaces the checkpoint timer.
	ticks <-chan time.Time
	// checkpointed, when set (tests), is called after each checkpoint
	// written while the computation runs.
	checkpointed func()
}

// DefaultCheckpoint is the default Recorder.Checkpoint.
const DefaultCheckpoint = 5 * time.Minute

// Run is one profiled computation.
type Run struct {
	ID    string
	Wall  time.Duration // the profile's duration: the computation's wall time
	Table Table
	// Earlier is true for a profile found in the directory (written by an
	// earlier reproduction whose results were reused), not recorded now.
	Earlier bool
	// Version names the wcmc build that recorded an earlier profile (the
	// version stored with the reused results), "" if unknown.
	Version string
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
// time, its tasks in parallel). The profiles are written every Checkpoint
// while f runs and once more when it returns, even when it fails (an
// interrupted run resumes later). With resume (f continues an interrupted
// computation), the profiles already in the directory for id are merged
// with the new ones, so that they cover every session; without, stale ones
// are removed first. It returns f's error, or a profiling error.
func (r *Recorder) Profile(id string, resume bool, f func() error) error {
	s := &session{cpuPath: r.path(id, ".cpu.pprof"), allocPath: r.path(id, ".allocs.pprof")}
	if resume {
		s.cpu, s.alloc = loadStored(s.cpuPath), loadStored(s.allocPath)
	} else {
		for _, p := range []string{s.cpuPath, s.allocPath} {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	if err := s.start(id); err != nil {
		return err
	}
	ticks := r.ticks
	if ticks == nil {
		every := r.Checkpoint
		if every <= 0 {
			every = DefaultCheckpoint
		}
		t := time.NewTicker(every)
		defer t.Stop()
		ticks = t.C
	}
	done := make(chan error, 1)
	go func() { done <- f() }()
	for {
		select {
		case ferr := <-done:
			if err := s.stop(); err != nil {
				return errors.Join(ferr, err)
			}
			t, err := Attribute(s.cpu)
			if err != nil {
				return errors.Join(ferr, err)
			}
			r.Runs = append(r.Runs, Run{ID: id, Wall: time.Duration(s.cpu.DurationNanos), Table: t})
			return ferr
		case <-ticks:
			err := s.stop()
			if err == nil {
				err = s.start(id)
			}
			if err != nil {
				// Profiling failed mid-run: let the computation finish
				// (its results matter more), then report.
				return errors.Join(<-done, err)
			}
			if r.checkpointed != nil {
				r.checkpointed()
			}
		}
	}
}

// session is the profiling of one computation, in segments between
// checkpoints: cpu and alloc accumulate the segments written so far (and,
// resumed, the earlier sessions').
type session struct {
	cpuPath, allocPath string
	cpu, alloc         *profile.Profile
	buf                bytes.Buffer
	began              time.Time
	allocsBefore       *profile.Profile
}

// start begins a segment.
func (s *session) start(id string) error {
	before, err := allocs()
	if err != nil {
		return err
	}
	s.allocsBefore = before
	s.buf.Reset()
	if err := pprof.StartCPUProfile(&s.buf); err != nil {
		return fmt.Errorf("profiling %s: %w", id, err)
	}
	s.began = time.Now()
	return nil
}

// stop ends a segment, adds it to the accumulated profiles and writes
// them.
func (s *session) stop() error {
	wall := time.Since(s.began)
	pprof.StopCPUProfile()
	after, err := allocs()
	if err != nil {
		return err
	}
	cpu, err := profile.Parse(&s.buf)
	if err != nil {
		return err
	}
	cpu.DurationNanos = wall.Nanoseconds()
	s.allocsBefore.Scale(-1)
	alloc, err := profile.Merge([]*profile.Profile{after, s.allocsBefore})
	if err != nil {
		return err
	}
	if s.cpu, err = mergeDurations(s.cpu, cpu); err != nil {
		return fmt.Errorf("merging with %s: %w", s.cpuPath, err)
	}
	if s.alloc, err = mergeDurations(s.alloc, alloc); err != nil {
		return fmt.Errorf("merging with %s: %w", s.allocPath, err)
	}
	s.alloc = s.alloc.Compact()
	return errors.Join(write(s.cpuPath, s.cpu), write(s.allocPath, s.alloc))
}

// Load records the CPU profile of id already in the directory (of an
// earlier computation whose results are reused, by wcmc version, "" if
// unknown), if there is one; it reports whether there was.
func (r *Recorder) Load(id, version string) (bool, error) {
	f, err := os.Open(r.path(id, ".cpu.pprof"))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return false, fmt.Errorf("%s: %w", f.Name(), err)
	}
	t, err := Attribute(p)
	if err != nil {
		return false, fmt.Errorf("%s: %w", f.Name(), err)
	}
	r.Runs = append(r.Runs, Run{ID: id, Wall: time.Duration(p.DurationNanos), Table: t, Earlier: true, Version: version})
	return true, nil
}

func (r *Recorder) path(id, ext string) string { return filepath.Join(r.dir, id+ext) }

// loadStored returns the profile stored at path; nil if there is none, or
// if it does not parse (a process killed while writing it, e.g. by an older
// wcmc that did not write atomically): the earlier sessions' profile is
// then lost, not this one's.
func loadStored(path string) *profile.Profile {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil
	}
	return p
}

// mergeDurations returns old merged with p, their durations added; p if
// old is nil.
func mergeDurations(old, p *profile.Profile) (*profile.Profile, error) {
	if old == nil {
		return p, nil
	}
	d := old.DurationNanos + p.DurationNanos
	m, err := profile.Merge([]*profile.Profile{old, p})
	if err != nil {
		return nil, err
	}
	m.DurationNanos = d
	return m, nil
}

// write writes p to path, atomically (a profile is never left half
// written).
func write(path string, p *profile.Profile) error {
	return atomicfile.Write(path, p.Write)
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

// WriteMarkdown writes the recorded runs as Markdown: a summary table (one
// row per run: wall time, CPU sampled, the largest stages; "(earlier)"
// for a loaded profile, with the version that recorded it if known) and
// one table per run with every stage.
func (r *Recorder) WriteMarkdown(w io.Writer) error {
	var b bytes.Buffer
	b.WriteString("| experiment | wall | CPU sampled | largest stages |\n|---|---:|---:|---|\n")
	for _, run := range r.Runs {
		id := "`" + run.ID + "`"
		switch {
		case run.Earlier && run.Version != "":
			id += " (earlier, " + run.Version + ")"
		case run.Earlier:
			id += " (earlier)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |", id, fmtDur(run.Wall.Seconds()), fmtDur(run.Table.Total))
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
