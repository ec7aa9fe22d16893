package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// ErrUnfinished is wrapped by the error of a fresh run (Options.Resume
// false) whose directory holds the journal of an earlier run with finished
// tasks: nothing is overwritten; resume it or remove the journal.
var ErrUnfinished = errors.New("unfinished run")

// Interrupted is the error of a journaled run stopped by its context
// (SIGINT, SIGTERM): every task finished so far is in the journal.
type Interrupted struct {
	Journal     string // the journal's path
	Done, Total int    // tasks in the journal, of the run (or shard)
	Err         error  // the context's error
}

func (e *Interrupted) Error() string {
	return fmt.Sprintf("interrupted: %d of %d tasks finished, saved in %s", e.Done, e.Total, e.Journal)
}

func (e *Interrupted) Unwrap() error { return e.Err }

// openJournal prepares dir to journal the tasks keys of shard s and returns
// the journal, ready to append, with the records already in it and the
// run's start time.
//
// A fresh run (resume false) refuses a journal holding finished tasks
// (ErrUnfinished); otherwise it writes the run's identity and starts an
// empty journal. A resumed run requires the recorded identity to match the
// plan (see Mismatch) and the same shard, checks every record (see
// CheckRecord; a record outside the shard or twice is an error), and drops
// a torn last line. Without a journal to resume it starts afresh.
func (p *Plan) openJournal(dir string, s Shard, keys []TaskKey, resume bool, log io.Writer) (*journalFile, []TaskResult, time.Time, error) {
	fail := func(err error) (*journalFile, []TaskResult, time.Time, error) { return nil, nil, time.Time{}, err }
	say := func(format string, args ...any) {
		if log != nil {
			fmt.Fprintf(log, format+"\n", args...)
		}
	}
	s = s.norm()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	jpath, ipath := JournalPath(dir, p.Spec.ID), IdentityPath(dir, p.Spec.ID)
	f, err := os.OpenFile(jpath, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fail(err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
		}
	}()
	if err := lockFile(f); err != nil {
		return fail(fmt.Errorf("%s is in use by another wcmc process (%v); give each run its own --out directory", jpath, err))
	}
	data, err := ReadJournal(f)
	if err != nil {
		return fail(fmt.Errorf("journal %s is damaged: %w; move it away to start over", jpath, err))
	}
	id, idErr := ReadIdentity(ipath)
	noID := errors.Is(idErr, os.ErrNotExist)
	if idErr != nil && !noID {
		return fail(idErr)
	}

	start := time.Now().UTC()
	began := start
	var (
		done    []TaskResult
		earlier time.Duration
	)
	switch {
	case len(data.Records) > 0 && !noID && id.Experiment == p.Spec.ID && id.Shard.norm() != s:
		return fail(fmt.Errorf("%s holds %d finished tasks of shard %s of a run, not of shard %s: give each shard its own output directory",
			jpath, len(data.Records), id.Shard, s))
	case !resume && len(data.Records) > 0:
		what := "an earlier run"
		if !noID {
			what = fmt.Sprintf("an earlier run (shard %s, seed %d, started %s)", id.Shard, id.Seed, id.Start.Local().Format(time.DateTime))
		}
		return fail(fmt.Errorf("%w: %s holds %d finished tasks of %s; resume it, or remove %s and %s to start over",
			ErrUnfinished, jpath, len(data.Records), what, jpath, ipath))
	case resume && noID && len(data.Records) > 0:
		return fail(fmt.Errorf("cannot resume: journal %s has no %s, so which run its tasks belong to is unknown", jpath, ipath))
	case resume && !noID:
		if diff := p.Mismatch(id); len(diff) > 0 {
			return fail(fmt.Errorf("cannot resume %s: it is the journal of another run (%s); resume with that run's settings, or use another output directory",
				jpath, joinDiff(diff)))
		}
		if id.Shard.norm() != s {
			return fail(fmt.Errorf("cannot resume %s: it is the journal of shard %s, not %s", jpath, id.Shard, s))
		}
		if id.Version != Version {
			say("warning: %s was started by wcmc %s; this is wcmc %s", jpath, id.Version, Version)
		}
		want := make(map[TaskKey]bool, len(keys))
		for _, k := range keys {
			want[k] = true
		}
		seen := map[TaskKey]bool{}
		for i, r := range data.Records {
			if err := p.CheckRecord(r.TaskResult); err != nil {
				return fail(fmt.Errorf("journal %s, record %d: %w", jpath, i+1, err))
			}
			if !want[r.TaskKey] {
				return fail(fmt.Errorf("journal %s, record %d: task %s=%s trial %d is not in shard %s", jpath, i+1, p.Spec.X, FormatX(r.X), r.Trial, s))
			}
			if seen[r.TaskKey] {
				return fail(fmt.Errorf("journal %s, record %d: task %s=%s trial %d is recorded twice", jpath, i+1, p.Spec.X, FormatX(r.X), r.Trial))
			}
			seen[r.TaskKey] = true
			done = append(done, r.TaskResult)
		}
		if data.Torn != "" {
			say("%s: ignoring a torn last line (%d bytes, a task cut short); that task runs again", jpath, len(data.Torn))
		}
		start = id.Start
		earlier = sessionsTime(data.Records, id.Start)
		say("resuming %s: %d of %d tasks done, %d to run", jpath, len(done), len(keys), len(keys)-len(done))
	}
	if len(done) == 0 {
		if resume {
			say("no finished tasks in %s: starting the run", jpath)
		}
		data.Valid = 0
		if err := writeIdentity(ipath, p.Identity(s, len(keys), start)); err != nil {
			return fail(fmt.Errorf("writing %s: %w", ipath, err))
		}
	}
	if err := f.Truncate(data.Valid); err != nil {
		return fail(err)
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	syncDir(dir)
	ok = true
	return &journalFile{f: f, path: jpath, began: began, earlier: earlier}, done, start, nil
}

func joinDiff(diff []string) string {
	const n = 6
	out := ""
	for i, d := range diff {
		if i == n {
			out += fmt.Sprintf("; and %d more", len(diff)-n)
			break
		}
		if i > 0 {
			out += "; "
		}
		out += d
	}
	return out
}

// remaining returns the keys not in done, in order.
func remaining(keys []TaskKey, done []TaskResult) []TaskKey {
	have := make(map[TaskKey]bool, len(done))
	for _, d := range done {
		have[d.TaskKey] = true
	}
	var out []TaskKey
	for _, k := range keys {
		if !have[k] {
			out = append(out, k)
		}
	}
	return out
}
