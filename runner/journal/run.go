package journal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wcmc-project/wcmc/internal/atomicfile"
	"github.com/wcmc-project/wcmc/runner"
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
	if e.Done == 0 {
		return fmt.Sprintf("interrupted before any of the %d tasks finished: nothing was saved", e.Total)
	}
	return fmt.Sprintf("interrupted: %d of %d tasks finished, saved in %s", e.Done, e.Total, e.Journal)
}

func (e *Interrupted) Unwrap() error { return e.Err }

// Failed is the error of a journaled run stopped by an error of a task or
// of the journal itself (a full disk, a file size limit): the Done tasks
// finished before are in the journal, where a resumed run finds them; with
// Done = 0 nothing was saved, and the files the run created (journal,
// identity, directories) are removed again.
type Failed struct {
	Journal     string // the journal's path
	Done, Total int    // tasks in the journal, of the run (or shard)
	Err         error  // what stopped the run
}

func (e *Failed) Error() string {
	if e.Done == 0 {
		return fmt.Sprintf("%v\n(none of the %d tasks finished: nothing was saved)", e.Err, e.Total)
	}
	return fmt.Sprintf("%v\n(%d of %d tasks finished and are saved in %s)", e.Err, e.Done, e.Total, e.Journal)
}

func (e *Failed) Unwrap() error { return e.Err }

// Options configure a journaled run: the sweep's settings, and where to
// journal it.
type Options struct {
	runner.Options
	// Dir is where the run is journaled: its Identity goes to
	// Dir/ID.run.json before any task runs, and each finished task is
	// appended to Dir/ID.journal.jsonl and synced to disk as it finishes,
	// so that a run killed at any instant loses no finished task. Without
	// Resume, a journal already holding finished tasks is refused
	// (ErrUnfinished), never overwritten; one process at a time may write
	// a journal. A run that ends with no task journaled (its setup failed,
	// or it was stopped before a task finished) removes the journal and
	// identity again. An empty Dir runs without a journal (runner.Run); a
	// shard of a run (Options.Shard) needs one, since its tasks are kept
	// nowhere else.
	Dir string
	// Resume continues the run journaled in Dir: its finished tasks are
	// kept and only the others run. The parameters, seed, trials and shard
	// must be those of the journaled run, and so must the wcmc version
	// unless Force.
	Resume bool
	// Force resumes a journal started by another wcmc version (see
	// CheckVersions), with a warning on Progress.
	Force bool
}

// Run is runner.Run with every finished task journaled in opts.Dir as it
// finishes (see Options.Dir); with opts.Resume the tasks already journaled
// are not run again, and the result is the same as that of an
// uninterrupted run, its Wall the sum of the sessions' computing times
// and its Sessions those the journal records, this one included. A
// run stopped by ctx returns an *Interrupted error, one stopped by an
// error of a task or of the journal a *Failed error.
func Run(ctx context.Context, spec runner.Spec, opts Options) (*runner.Result, error) {
	plan, err := runner.NewPlan(spec, opts.Options)
	if err != nil {
		return nil, err
	}
	keys, err := plan.ShardTasks(opts.Shard)
	if err != nil {
		return nil, err
	}
	if opts.Dir == "" {
		switch {
		case opts.Resume:
			return nil, errors.New("resuming needs the directory of the run's journal (Options.Dir)")
		case !opts.Shard.Whole():
			return nil, fmt.Errorf("shard %s of %s: a shard's tasks are kept only in its journal, so it needs a directory (Options.Dir)", opts.Shard, spec.ID)
		}
		return runner.Run(ctx, spec, opts.Options)
	}
	j, id, done, start, err := open(plan, opts.Dir, opts.Shard, keys, opts, opts.Progress)
	if err != nil {
		return nil, fmt.Errorf("experiment %s: %w", spec.ID, err)
	}
	defer j.Close()
	ro := opts.Options
	user := ro.OnTask
	// What Setup reports goes into the identity before any task runs, so
	// that a merge of the shards, or a resume with no task left to run
	// (which does not call Setup), finds it.
	ro.OnSetup = func(info map[string]map[string]any) error {
		if info == nil {
			return nil
		}
		id.RunInfo = info
		return writeIdentity(IdentityPath(opts.Dir, spec.ID), id)
	}
	ro.OnTask = func(r runner.TaskResult) error {
		if err := j.Append(r); err != nil {
			return err
		}
		if user != nil {
			return user(r)
		}
		return nil
	}
	rest := remaining(keys, done)
	tasks, info, err := plan.Compute(ctx, rest, ro)
	if err != nil {
		saved := len(done) + j.n
		if saved == 0 {
			j.discard()
		}
		if ctx.Err() != nil {
			return nil, &Interrupted{Journal: j.Path(), Done: saved, Total: len(keys), Err: err}
		}
		return nil, &Failed{Journal: j.Path(), Done: saved, Total: len(keys), Err: err}
	}
	if len(rest) == 0 {
		info = id.RunInfo // Setup did not run
	}
	res := plan.Collect(append(done, tasks...), start, ro)
	res.Resumed = len(done)
	res.RunInfo = info
	if len(done) > 0 {
		res.Sessions = slices.Clone(j.earlier)
		if j.n > 0 {
			this := j.session
			this.Tasks, this.Wall = j.n, j.last.Sub(this.Began)
			res.Sessions = append(res.Sessions, this)
			sortSessions(res.Sessions) // a clock behind the earlier machine's
		}
		res.Wall = computingTime(res.Sessions)
	}
	return res, nil
}

// open prepares dir to journal the tasks keys of shard s of the plan's
// run and returns the journal, ready to append, the run's identity as
// written or read, the records already in it and the run's start time. It
// first finishes the commit of the run's final files that a killed process
// left half done (atomicfile.Recover) and removes the temporary files that
// a killed process left while writing the run's files (the journal's lock
// makes this process their only writer).
//
// A journal or identity that is a symbolic link is refused
// (atomicfile.ErrLink): nothing is written through it.
//
// A fresh run (resume false) refuses a journal holding finished tasks
// (ErrUnfinished); otherwise it writes the run's identity and starts an
// empty journal. A resumed run requires the recorded identity to match the
// plan (see Identity.Mismatch), the same shard and the same version (see
// CheckVersions; with opts.Force a warning), checks every record (see
// runner.Plan.CheckRecord, and its checksum; a record outside the shard or
// twice is an error), and drops a torn last line. Without a journal to
// resume it starts afresh.
func open(p *runner.Plan, dir string, s runner.Shard, keys []runner.TaskKey, opts Options, log io.Writer) (*file, Identity, []runner.TaskResult, time.Time, error) {
	resume := opts.Resume
	fail := func(err error) (*file, Identity, []runner.TaskResult, time.Time, error) {
		return nil, Identity{}, nil, time.Time{}, err
	}
	say := func(format string, args ...any) {
		if log != nil {
			fmt.Fprintf(log, format+"\n", args...)
		}
	}
	s = s.Canonical()
	madeDirs := missingDirs(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	jpath, ipath := Path(dir, p.Spec.ID), IdentityPath(dir, p.Spec.ID)
	_, statErr := os.Stat(jpath)
	madeJournal := errors.Is(statErr, os.ErrNotExist)
	for _, p := range []string{jpath, ipath} {
		if err := atomicfile.CheckNotLink(p); err != nil {
			return fail(err)
		}
	}
	f, err := os.OpenFile(jpath, os.O_RDWR|os.O_CREATE|noFollow, 0o644)
	if err != nil {
		if lerr := atomicfile.CheckNotLink(jpath); lerr != nil {
			return fail(lerr)
		}
		return fail(err)
	}
	ok, locked := false, false
	defer func() {
		if !ok {
			f.Close()
		}
		if !ok && locked && madeJournal {
			// Ours alone (we held its lock): a run that could not start
			// leaves no empty journal, nor the directories it made.
			os.Remove(jpath)
			for _, d := range madeDirs {
				os.Remove(d) // only if empty
			}
		}
	}()
	if err := lockFile(f); err != nil {
		return fail(fmt.Errorf("%s is in use by another wcmc process (%v); give each run its own --out directory", jpath, err))
	}
	locked = true
	ours := func(name string) bool { return strings.HasPrefix(name, p.Spec.ID+".") }
	finished, err := atomicfile.Recover(dir, ours)
	if len(finished) > 0 {
		say("put %d files in %s in place: a process killed between the renames of the run's final files had left them under temporary names", len(finished), dir)
	}
	if err != nil {
		return fail(err)
	}
	stale, err := atomicfile.RemoveStale(dir, ours)
	if err != nil {
		return fail(fmt.Errorf("removing the temporary files of an earlier, killed run: %w", err))
	}
	for _, name := range stale {
		say("removed %s, left by an earlier process killed while writing it", name)
	}
	data, err := Read(f)
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
		done    []runner.TaskResult
		earlier []runner.Session
	)
	switch {
	case len(data.Records) > 0 && !noID && id.Experiment == p.Spec.ID && id.Shard.Canonical() != s:
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
		if diff := id.Mismatch(p); len(diff) > 0 {
			return fail(fmt.Errorf("cannot resume %s: it is the journal of another run (%s); resume with that run's settings, or use another output directory",
				jpath, joinDiff(diff)))
		}
		if id.Shard.Canonical() != s {
			return fail(fmt.Errorf("cannot resume %s: it is the journal of shard %s, not %s", jpath, id.Shard, s))
		}
		if err := CheckVersions([]Identity{id}, []string{jpath}); err != nil {
			if !opts.Force {
				return fail(fmt.Errorf("cannot resume: %w; start the run afresh in another directory, or force the resume", err))
			}
			say("warning: resuming anyway: %v", err)
		}
		if err := checkSums(data, id.Format, jpath); err != nil {
			return fail(err)
		}
		want := make(map[runner.TaskKey]bool, len(keys))
		for _, k := range keys {
			want[k] = true
		}
		seen := map[runner.TaskKey]bool{}
		for i, r := range data.Records {
			if err := p.CheckRecord(r.TaskResult); err != nil {
				return fail(fmt.Errorf("journal %s, record %d: %w", jpath, i+1, err))
			}
			if !want[r.TaskKey] {
				return fail(fmt.Errorf("journal %s, record %d: task %s=%s trial %d is not in shard %s", jpath, i+1, p.Spec.X, runner.FormatX(r.X), r.Trial, s))
			}
			if seen[r.TaskKey] {
				return fail(fmt.Errorf("journal %s, record %d: task %s=%s trial %d is recorded twice", jpath, i+1, p.Spec.X, runner.FormatX(r.X), r.Trial))
			}
			seen[r.TaskKey] = true
			done = append(done, r.TaskResult)
		}
		if data.Torn != "" {
			say("%s: ignoring a torn last line (%d bytes, a task cut short); that task runs again", jpath, len(data.Torn))
		}
		if id.Format >= 2 && id.Format < Format {
			// Its new lines will carry fields a wcmc of an older format
			// would misread: the identity says so first (a format-1
			// journal stays so: its lines carry no checksum).
			id.Format = Format
			if err := writeIdentity(ipath, id); err != nil {
				return fail(fmt.Errorf("writing %s: %w", ipath, err))
			}
		}
		start = id.Start
		earlier = sessions(data.Records, id.Start)
		say("resuming %s: %d of %d tasks done, %d to run", jpath, len(done), len(keys), len(keys)-len(done))
	}
	if len(done) == 0 {
		switch {
		case resume && madeJournal:
			say("no journal %s to resume: starting the run", jpath)
		case resume:
			say("no finished tasks in %s: starting the run", jpath)
		}
		// The run starts now: an earlier session that finished no task
		// (killed) left nothing to count, and its start would add the
		// time between the sessions to the run's wall time.
		start = began
		data.Valid = 0
		id = IdentityOf(p, s, len(keys), start)
		if err := writeIdentity(ipath, id); err != nil {
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
	j := &file{f: f, path: jpath, session: opts.Session(began, 0, 0), earlier: earlier}
	if len(done) == 0 {
		j.created = []string{ipath}
		if madeJournal {
			j.created = append(j.created, jpath)
		}
		j.created = append(j.created, madeDirs...)
	}
	return j, id, done, start, nil
}

// missingDirs returns dir and its ancestors that do not exist, deepest
// first.
func missingDirs(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			return out
		}
		out = append(out, d)
		if filepath.Dir(d) == d {
			return out
		}
	}
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
func remaining(keys []runner.TaskKey, done []runner.TaskResult) []runner.TaskKey {
	have := make(map[runner.TaskKey]bool, len(done))
	for _, d := range done {
		have[d.TaskKey] = true
	}
	var out []runner.TaskKey
	for _, k := range keys {
		if !have[k] {
			out = append(out, k)
		}
	}
	return out
}
