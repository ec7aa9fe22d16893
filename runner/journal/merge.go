package journal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wcmc-project/wcmc/runner"
)

// Shard outputs (see Options.Shard and Options.Dir) are merged from their
// journals: each shard directory holds ID.run.json and ID.journal.jsonl.

// MergeOptions configure Merge.
type MergeOptions struct {
	// Experiment is the ID of the run to merge; "" means the only one the
	// directories hold.
	Experiment string
	// Force merges shards computed by other wcmc versions (see
	// CheckVersions), writing a warning to Warn.
	Force bool
	Warn  io.Writer
}

// Runs returns the IDs of the journaled runs in dir (the ID of every
// ID.run.json), sorted.
func Runs(dir string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*.run.json"))
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, m := range matches {
		ids = append(ids, strings.TrimSuffix(filepath.Base(m), ".run.json"))
	}
	sort.Strings(ids)
	return ids, nil
}

// Merge combines the journals of the shards of one run, one shard per
// directory, into the Result of the whole run: the same tasks, in the same
// order, as an unsharded run with the same parameters and seed, so that
// results.WriteFiles writes the same ID.csv and ID.summary.csv byte for
// byte.
//
// opts.Experiment names the experiment; "" means the only experiment
// journaled in the directories. specs must contain it. Merge refuses,
// naming the directories and tasks concerned: a directory given twice or
// without the experiment's journal; shards that disagree on experiment,
// parameters, seed or trials (see Identity.Mismatch); shards computed by
// another wcmc version than each other or this one (see CheckVersions;
// with opts.Force, a warning on opts.Warn instead); a journal line edited
// or damaged after it was written (its checksum; in a format-1 journal,
// whose lines have none, only what CheckRecord sees); a record that is not
// a task of the run or not of its directory's shard; a task in two
// directories; and tasks that no directory holds (with the shards they
// belong to). A torn last line of a journal (a task cut short) is ignored,
// its task then counted as missing. The result's RunInfo is that of the
// first directory whose identity holds one; its Sessions are every
// shard's (with the machine each ran on), and its Wall the time during
// which at least one of them was computing (shards run at the same time
// count once, the time between shards run one after another not at all).
func Merge(specs []runner.Spec, dirs []string, opts MergeOptions) (*runner.Result, error) {
	id := opts.Experiment
	if len(dirs) == 0 {
		return nil, errors.New("merge: no shard directories given")
	}
	seenDir := map[string]string{}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		if prev, dup := seenDir[abs]; dup {
			return nil, fmt.Errorf("merge: directory %s is given twice (as %s and %s)", abs, prev, d)
		}
		seenDir[abs] = d
		if st, err := os.Stat(d); err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		} else if !st.IsDir() {
			return nil, fmt.Errorf("merge: %s is not a directory", d)
		}
	}
	if id == "" {
		var err error
		if id, err = onlyExperiment(dirs); err != nil {
			return nil, err
		}
	}
	var spec runner.Spec
	found := false
	for _, s := range specs {
		if s.ID == id {
			spec, found = s, true
		}
	}
	if !found {
		return nil, fmt.Errorf("merge: unknown experiment %q", id)
	}

	ids := make([]Identity, len(dirs))
	for i, d := range dirs {
		var err error
		if ids[i], err = ReadIdentity(IdentityPath(d, id)); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("merge: %s has no %s: not a shard of a run of %s", d, filepath.Base(IdentityPath(d, id)), id)
			}
			return nil, fmt.Errorf("merge: %w", err)
		}
	}
	plan, err := ids[0].Plan(spec)
	if err != nil {
		return nil, fmt.Errorf("merge: %s: %w", dirs[0], err)
	}
	for i := 1; i < len(dirs); i++ {
		if diff := ids[i].Mismatch(plan); len(diff) > 0 {
			return nil, fmt.Errorf("merge: shards disagree: %s (shard %s) is another run than %s (shard %s): %s",
				dirs[i], ids[i].Shard, dirs[0], ids[0].Shard, joinDiff(diff))
		}
	}
	if err := CheckVersions(ids, dirs); err != nil {
		if !opts.Force {
			return nil, fmt.Errorf("merge: %w; rerun the shards with one version and merge with it, or force the merge", err)
		}
		if opts.Warn != nil {
			fmt.Fprintf(opts.Warn, "warning: merging anyway: %v\n", err)
		}
	}

	from := map[runner.TaskKey]int{} // task → index of the directory holding it
	var (
		tasks    []runner.TaskResult
		overlaps = map[[2]int][]runner.TaskKey{}
		start    = ids[0].Start
		end      time.Time
		ss       []runner.Session
	)
	for i, d := range dirs {
		data, err := readFile(Path(d, id))
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		if err := checkSums(data, ids[i].Format, Path(d, id)); err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		ss = append(ss, sessions(data.Records, ids[i].Start)...)
		sh := ids[i].Shard.Canonical()
		if err := sh.Check(); err != nil {
			return nil, fmt.Errorf("merge: %s: %w", IdentityPath(d, id), err)
		}
		for n, r := range data.Records {
			if err := plan.CheckRecord(r.TaskResult); err != nil {
				return nil, fmt.Errorf("merge: %s, record %d: %w", Path(d, id), n+1, err)
			}
			if got := plan.ShardOf(r.TaskKey, sh.Count); got != sh.Index {
				return nil, fmt.Errorf("merge: %s, record %d: task %s is in shard %d/%d, not in this directory's shard %s",
					Path(d, id), n+1, taskName(plan, r.TaskKey), got, sh.Count, sh)
			}
			if j, dup := from[r.TaskKey]; dup {
				overlaps[[2]int{j, i}] = append(overlaps[[2]int{j, i}], r.TaskKey)
				continue
			}
			from[r.TaskKey] = i
			tasks = append(tasks, r.TaskResult)
			if r.Done.After(end) {
				end = r.Done
			}
		}
		if ids[i].Start.Before(start) {
			start = ids[i].Start
		}
	}
	if len(overlaps) > 0 {
		var msgs []string
		for pair, keys := range overlaps {
			msgs = append(msgs, fmt.Sprintf("%s and %s both hold %s (%s)", dirs[pair[0]], dirs[pair[1]], nTasks(len(keys)), taskList(plan, keys)))
		}
		sort.Strings(msgs)
		return nil, fmt.Errorf("merge: shards overlap: %s", strings.Join(msgs, "; "))
	}
	if missing := remaining(plan.Tasks, tasks); len(missing) > 0 {
		return nil, missingError(plan, missing, dirs, ids)
	}
	res := plan.Result(tasks, start, end)
	sortSessions(ss)
	res.Sessions = ss
	res.Wall = computingTime(ss)
	for _, x := range ids {
		res.Quick = res.Quick && x.Quick
		if res.RunInfo == nil {
			res.RunInfo = x.RunInfo // Setup is deterministic: every shard reports the same
		}
	}
	return res, nil
}

// onlyExperiment returns the one experiment journaled in dirs.
func onlyExperiment(dirs []string) (string, error) {
	all := map[string]bool{}
	for _, d := range dirs {
		ids, err := Runs(d)
		if err != nil {
			return "", err
		}
		if len(ids) == 0 {
			return "", fmt.Errorf("merge: %s holds no journaled run (no ID.run.json)", d)
		}
		for _, id := range ids {
			all[id] = true
		}
	}
	if len(all) > 1 {
		names := make([]string, 0, len(all))
		for id := range all {
			names = append(names, id)
		}
		sort.Strings(names)
		return "", fmt.Errorf("merge: the directories hold runs of %s: name the one to merge", strings.Join(names, ", "))
	}
	for id := range all {
		return id, nil
	}
	return "", errors.New("merge: no experiment")
}

func readFile(path string) (Contents, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return Contents{}, nil // a shard that finished no task
	}
	if err != nil {
		return Contents{}, err
	}
	defer f.Close()
	data, err := Read(f)
	if err != nil {
		return Contents{}, fmt.Errorf("journal %s is damaged: %w", path, err)
	}
	return data, nil
}

func taskName(p *runner.Plan, k runner.TaskKey) string {
	return fmt.Sprintf("%s=%s trial %d", p.Spec.X, runner.FormatX(k.X), k.Trial)
}

// taskList names keys compactly: "snr_db=5 trials 0-3,7; snr_db=10 trial 2"
// (the first few points).
func taskList(p *runner.Plan, keys []runner.TaskKey) string {
	keys = slices.Clone(keys)
	slices.SortFunc(keys, runner.TaskKey.Compare)
	const maxPoints = 8
	var parts []string
	for i := 0; i < len(keys); {
		j := i
		var trials []int
		for ; j < len(keys) && keys[j].Point == keys[i].Point; j++ {
			trials = append(trials, keys[j].Trial)
		}
		if len(parts) == maxPoints {
			parts = append(parts, "…")
			break
		}
		word := "trial"
		if len(trials) > 1 {
			word = "trials"
		}
		parts = append(parts, fmt.Sprintf("%s=%s %s %s", p.Spec.X, runner.FormatX(keys[i].X), word, ranges(trials)))
		i = j
	}
	return strings.Join(parts, "; ")
}

// nTasks writes "1 task" or "n tasks".
func nTasks(n int) string {
	if n == 1 {
		return "1 task"
	}
	return strconv.Itoa(n) + " tasks"
}

// ranges writes sorted integers as "0-3,7" (the first dozen runs of them).
func ranges(v []int) string {
	const maxParts = 12
	var parts []string
	for i := 0; i < len(v); {
		if len(parts) == maxParts {
			parts = append(parts, fmt.Sprintf("… (%d in all)", len(v)))
			break
		}
		j := i
		for j+1 < len(v) && v[j+1] == v[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(v[i]))
		} else {
			parts = append(parts, strconv.Itoa(v[i])+"-"+strconv.Itoa(v[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// missingError names the tasks no shard holds and, when the shards agree on
// their count, the shards they belong to: absent ones, and given ones whose
// journal is incomplete (to be resumed).
func missingError(p *runner.Plan, missing []runner.TaskKey, dirs []string, ids []Identity) error {
	msg := fmt.Sprintf("merge: %d of %d tasks are missing: %s", len(missing), len(p.Tasks), taskList(p, missing))
	count := ids[0].Shard.Canonical().Count
	for _, id := range ids {
		if id.Shard.Canonical().Count != count {
			return errors.New(msg)
		}
	}
	dirOf := map[int]string{}
	for i, id := range ids {
		dirOf[id.Shard.Canonical().Index] = dirs[i]
	}
	perShard := map[int]int{}
	for _, k := range missing {
		perShard[p.ShardOf(k, count)]++
	}
	idx := make([]int, 0, len(perShard))
	for s := range perShard {
		idx = append(idx, s)
	}
	sort.Ints(idx)
	var notes []string
	for _, s := range idx {
		if d, ok := dirOf[s]; ok {
			notes = append(notes, fmt.Sprintf("shard %d/%d in %s lacks %d tasks (unfinished: resume it with --resume)", s, count, d, perShard[s]))
		} else {
			notes = append(notes, fmt.Sprintf("shard %d/%d (%d tasks): no directory given", s, count, perShard[s]))
		}
	}
	return fmt.Errorf("%s\n  %s", msg, strings.Join(notes, "\n  "))
}
