package results

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wcmc-project/wcmc/internal/atomicfile"
	"github.com/wcmc-project/wcmc/runner"
)

// ErrMismatch is matched (errors.Is) by the error LoadMatching returns when
// the results in a directory were computed with other settings than the
// plan's; see MismatchError.
var ErrMismatch = errors.New("stored results were computed with other settings")

// MismatchError says which setting of stored results differs from the
// wanted run.
type MismatchError struct {
	Experiment   string
	Field        string // "parameter T", "seed", "trials", "quick", "version", …
	Stored, Want string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s: stored results have %s = %q, want %q", e.Experiment, e.Field, e.Stored, e.Want)
}

// Is reports whether target is ErrMismatch.
func (e *MismatchError) Is(target error) bool { return target == ErrMismatch }

// Load reads back the result of spec that WriteFiles wrote to dir:
// the parameters, seed, trials, quick flag, skip notes, per-task info, run
// info and times from DIR/ID.json, and the measured values from DIR/ID.csv. The
// stored parameters are validated against spec as by runner.Resolve; if
// they no longer fit it (a parameter added, removed or restricted since),
// the error matches ErrMismatch, except that a parameter marked
// runner.Param.Added and absent from the file takes its default. A missing
// file gives an error matching fs.ErrNotExist. Every (sweep point, trial)
// task must have a row or a skip note.
//
// Files of the result that a process was replacing together when it was
// killed (see atomicfile.Unfinished) are an error naming them. The files
// whose SHA-256 the JSON records (ID.csv, ID.summary.csv) must still have
// it: a file modified after it was written is an error naming
// it. Results of the current format without those digests are an error;
// results written before the format was recorded may have none, and are
// accepted without the check (but LoadMatching does not reuse them).
//
// Summarize(Load(…)) equals the summary of the run that wrote the
// files: values round-trip exactly. Info values come back as JSON types
// (numbers as float64; non-finite floats as the strings WriteFiles wrote).
func Load(dir string, spec runner.Spec) (*runner.Result, error) {
	res, _, err := load(dir, spec)
	return res, err
}

// load is Load, also returning the JSON record.
func load(dir string, spec runner.Spec) (*runner.Result, *runRecord, error) {
	id := spec.ID
	if err := atomicfile.Unfinished(dir, func(name string) bool { return strings.HasPrefix(name, id+".") }); err != nil {
		return nil, nil, fmt.Errorf("%w (for the results of a run: its --resume, with its settings)", err)
	}
	jsonPath := filepath.Join(dir, id+".json")
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		return nil, nil, err
	}
	var rec runRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", jsonPath, err)
	}
	if rec.Experiment != id {
		return nil, nil, fmt.Errorf("reading %s: it holds experiment %q, not %q", jsonPath, rec.Experiment, id)
	}
	if rec.Trials < 1 {
		return nil, nil, fmt.Errorf("reading %s: trials = %d", jsonPath, rec.Trials)
	}
	for _, p := range spec.Params {
		if _, ok := rec.Params[p.Name]; !ok {
			if p.Added && rec.Params != nil {
				rec.Params[p.Name] = p.Default // stored before the parameter existed
				continue
			}
			return nil, nil, &MismatchError{Experiment: id, Field: "parameter " + p.Name, Stored: "(absent)", Want: p.Default}
		}
	}
	sets := runner.SetsOf(rec.Params)
	v, trials, err := runner.Resolve(spec, sets, false, rec.Trials)
	if err != nil {
		return nil, nil, &mismatchWrap{&MismatchError{Experiment: id, Field: "parameters", Stored: strings.Join(sets, " "),
			Want: "values valid for the current experiment"}, err}
	}

	res := &runner.Result{Spec: spec, Values: v, Seed: rec.Seed, Trials: trials, Quick: rec.Quick,
		Notes: rec.Skipped, Start: rec.Start, End: rec.End, Wall: time.Duration(rec.WallSeconds * float64(time.Second)),
		RunInfo: rec.RunInfo, InputDigests: rec.InputDigests, Version: rec.Version}
	for _, ss := range rec.Sessions {
		res.Sessions = append(res.Sessions, runner.Session{Began: ss.Began, Tasks: ss.Tasks,
			Wall: time.Duration(ss.WallSeconds * float64(time.Second)), Machine: ss.Machine, Workers: ss.Workers})
	}
	xs := v.XList()
	res.Tasks = make([]runner.TaskResult, len(xs)*trials)
	for i, x := range xs {
		for t := range trials {
			res.Tasks[i*trials+t].TaskKey = runner.TaskKey{Point: i, X: x, Trial: t}
		}
	}
	point := func(x float64) (int, bool) {
		i := slices.Index(xs, x)
		return i, i >= 0
	}
	for _, n := range rec.Skipped {
		i, ok := point(n.X)
		if !ok {
			return nil, nil, fmt.Errorf("reading %s: skip note at %s=%s, which is not a sweep point", jsonPath, spec.X, runner.FormatX(n.X))
		}
		for t := range trials {
			tr := &res.Tasks[i*trials+t]
			tr.Skipped = append(tr.Skipped, runner.Skip{Scheme: n.Scheme, Reason: n.Reason})
		}
	}
	for _, in := range rec.Info {
		i, ok := point(in.X)
		if !ok || in.Trial < 0 || in.Trial >= trials {
			return nil, nil, fmt.Errorf("reading %s: info of %s=%s trial %d is outside the run", jsonPath, spec.X, runner.FormatX(in.X), in.Trial)
		}
		tr := &res.Tasks[i*trials+in.Trial]
		if tr.Info == nil {
			tr.Info = map[string]map[string]any{}
		}
		tr.Info[in.Scheme] = in.Info
	}

	if rec.Format > resultsFormat {
		return nil, nil, fmt.Errorf("reading %s: results format %d, written by a newer wcmc than this one (format %d)", jsonPath, rec.Format, resultsFormat)
	}
	if missing := missingDigests(id, rec.Digests); missing != "" && rec.Format >= 2 {
		return nil, nil, fmt.Errorf("%s records no SHA-256 of %s, which results of its format always record: it was edited, and the files cannot be trusted; run the experiment again", jsonPath, missing)
	}
	if err := checkDigests(dir, jsonPath, rec.Digests); err != nil {
		return nil, nil, err
	}
	csvPath := filepath.Join(dir, id+".csv")
	if err := readRows(csvPath, spec, res, point); err != nil {
		return nil, nil, err
	}
	for _, tr := range res.Tasks {
		if len(tr.Rows) == 0 && len(tr.Skipped) == 0 {
			return nil, nil, fmt.Errorf("reading %s: no values for %s=%s trial %d (incomplete run?)", csvPath, spec.X, runner.FormatX(tr.X), tr.Trial)
		}
	}
	return res, &rec, nil
}

// missingDigests names the files of experiment id whose SHA-256 digests
// lacks (ID.csv, ID.summary.csv), "" if none.
func missingDigests(id string, digests map[string]string) string {
	var missing []string
	for _, name := range []string{id + ".csv", id + ".summary.csv"} {
		if digests[name] == "" {
			missing = append(missing, name)
		}
	}
	return strings.Join(missing, " and ")
}

// checkDigests checks that the files in dir named in digests (file name →
// hex SHA-256, as recorded in jsonPath) have those digests.
func checkDigests(dir, jsonPath string, digests map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(digests)) {
		path := filepath.Join(dir, name)
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != digests[name] {
			return fmt.Errorf("%s was modified after it was written: its SHA-256 is %s, but %s records %s; run the experiment again, or restore the file",
				path, got, jsonPath, digests[name])
		}
	}
	return nil
}

// mismatchWrap is a MismatchError that also wraps the validation error.
type mismatchWrap struct {
	*MismatchError
	err error
}

func (e *mismatchWrap) Error() string { return e.MismatchError.Error() + ": " + e.err.Error() }
func (e *mismatchWrap) Unwrap() error { return e.err }

// readRows reads DIR/ID.csv into res.Tasks.
func readRows(path string, spec runner.Spec, res *runner.Result, point func(float64) (int, bool)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = len(CSVHeader)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if !slices.Equal(head, CSVHeader) {
		return fmt.Errorf("reading %s: header %q, want %q", path, strings.Join(head, ","), strings.Join(CSVHeader, ","))
	}
	for line := 2; ; line++ {
		r, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		bad := func(what string) error {
			return fmt.Errorf("reading %s: line %d: %s", path, line, what)
		}
		if r[0] != spec.ID || r[2] != spec.X {
			return bad(fmt.Sprintf("experiment %q x_name %q, want %q %q", r[0], r[2], spec.ID, spec.X))
		}
		if !slices.Contains(spec.Schemes, r[1]) || !slices.Contains(spec.Metrics, r[5]) {
			return bad(fmt.Sprintf("scheme %q or metric %q is not in the experiment", r[1], r[5]))
		}
		x, err := strconv.ParseFloat(r[3], 64)
		if err != nil {
			return bad(fmt.Sprintf("x %q is not a number", r[3]))
		}
		i, ok := point(x)
		if !ok {
			return bad(fmt.Sprintf("x = %s is not a sweep point", r[3]))
		}
		trial, err := strconv.Atoi(r[4])
		if err != nil || trial < 0 || trial >= res.Trials {
			return bad(fmt.Sprintf("trial %q is not in 0..%d", r[4], res.Trials-1))
		}
		val, err := strconv.ParseFloat(r[6], 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return bad(fmt.Sprintf("value %q is not a number", r[6]))
		}
		tr := &res.Tasks[i*res.Trials+trial]
		tr.Rows = append(tr.Rows, runner.Row{Scheme: r[1], Metric: r[5], Value: val})
	}
}

// LoadMatching loads the results of plan's experiment from dir (see
// Load) and checks that they were computed with the plan's
// parameters (compared as values: "1e-3" matches "0.001"), seed, trials and
// quick flag, and by this version of wcmc (runner.Version) or one of the
// versions in accept (which the caller knows to compute the same). A
// difference gives a *MismatchError (errors.Is(err, ErrMismatch));
// missing files give an error matching fs.ErrNotExist. Results that
// record no digests of their CSV files (see Load) are an error: they
// cannot be checked, so are not reused.
func LoadMatching(dir string, plan *runner.Plan, accept ...string) (*runner.Result, error) {
	res, rec, err := load(dir, plan.Spec)
	if err != nil {
		return nil, err
	}
	id := plan.Spec.ID
	if missing := missingDigests(id, rec.Digests); missing != "" {
		// Results of the format before digests: readable, but whether
		// the files are as written cannot be checked, so not reused.
		return nil, fmt.Errorf("%s records no SHA-256 of %s (results of an older wcmc, or an edited file), so they cannot be checked", filepath.Join(dir, id+".json"), missing)
	}
	mismatch := func(field, stored, want string) error {
		return &MismatchError{Experiment: id, Field: field, Stored: stored, Want: want}
	}
	switch {
	case res.Seed != plan.Seed:
		return nil, mismatch("seed", strconv.FormatUint(res.Seed, 10), strconv.FormatUint(plan.Seed, 10))
	case res.Trials != plan.Trials:
		return nil, mismatch("trials", strconv.Itoa(res.Trials), strconv.Itoa(plan.Trials))
	case res.Quick != plan.Quick:
		return nil, mismatch("quick", strconv.FormatBool(res.Quick), strconv.FormatBool(plan.Quick))
	case rec.Version != runner.Version && !slices.Contains(accept, rec.Version):
		return nil, mismatch("version", rec.Version, runner.Version)
	}
	for _, p := range plan.Spec.Params {
		if !plan.SameSetting(p, res.Values.Raw(p.Name), res.InputDigests) {
			s, w := res.Values.Raw(p.Name), plan.Values.Raw(p.Name)
			if p.Digest != nil {
				w += dataHint(res, p, s, w)
			}
			return nil, mismatch("parameter "+p.Name, s, w)
		}
	}
	return res, nil
}

// dataHint says why a result stored with data folder stored of p was not
// reused in folder want: the data differs from what it recorded (in
// another folder, or replaced in the same one), or it recorded none.
func dataHint(res *runner.Result, p runner.Param, stored, want string) string {
	if _, ok := res.InputDigests[p.Name]; !ok {
		return " (another folder; the stored result records no digest of its data to compare)"
	}
	if p.SameValue(stored, want) {
		return " (the data in it differs from the stored result's)"
	}
	return " (another folder, whose data differs from the stored result's)"
}
