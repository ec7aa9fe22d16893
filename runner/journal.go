package runner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"wcmc/internal/atomicfile"
)

// A journaled run keeps two files in its directory:
//
//   - ID.run.json, the Identity of the run, written (atomically) before
//     any task runs;
//   - ID.journal.jsonl, one JSON line per finished task (a TaskResult and
//     the time it finished), appended and fsynced as each task finishes.
//
// A process killed at any instant leaves at worst a torn last line, which
// readers detect and ignore; every complete line is a finished task.

// JournalFormat is the version of the journal and identity file format.
const JournalFormat = 1

// JournalPath and IdentityPath return the paths of the journal and the run
// identity of experiment id in dir.
func JournalPath(dir, id string) string  { return filepath.Join(dir, id+".journal.jsonl") }
func IdentityPath(dir, id string) string { return filepath.Join(dir, id+".run.json") }

// Identity describes a journaled run: what must match for a resume or a
// merge (experiment, parameters, seed, trials) and what is informative
// (version, shard, start time).
type Identity struct {
	Format     int               `json:"format"`
	Experiment string            `json:"experiment"`
	XName      string            `json:"x_name"`
	Params     map[string]string `json:"params"`
	Seed       uint64            `json:"seed"`
	Trials     int               `json:"trials"`
	Quick      bool              `json:"quick"`
	Tasks      int               `json:"tasks"` // of the whole run
	Shard      Shard             `json:"shard"`
	ShardTasks int               `json:"shard_tasks"`
	Version    string            `json:"version"`
	Start      time.Time         `json:"start"`
}

// Identity returns the identity of shard s of the plan's run.
func (p *Plan) Identity(s Shard, shardTasks int, start time.Time) Identity {
	return Identity{Format: JournalFormat, Experiment: p.Spec.ID, XName: p.Spec.X, Params: p.Values.Map(),
		Seed: p.Seed, Trials: p.Trials, Quick: p.Quick, Tasks: len(p.Tasks), Shard: s.norm(),
		ShardTasks: shardTasks, Version: Version, Start: start}
}

// Mismatch lists how a recorded identity differs from the plan's run in
// what determines the results: experiment, parameters (compared by value:
// "1e1" equals "10"), seed and trials. The version, shard and start time
// are not compared. An empty list means the same run.
func (p *Plan) Mismatch(id Identity) []string {
	var out []string
	if id.Experiment != p.Spec.ID {
		return []string{fmt.Sprintf("experiment %s, not %s", id.Experiment, p.Spec.ID)}
	}
	if id.Format != JournalFormat {
		out = append(out, fmt.Sprintf("journal format %d, not %d", id.Format, JournalFormat))
	}
	if id.Seed != p.Seed {
		out = append(out, fmt.Sprintf("seed %d, not %d", id.Seed, p.Seed))
	}
	if id.Trials != p.Trials {
		out = append(out, fmt.Sprintf("trials %d, not %d", id.Trials, p.Trials))
	}
	mine := p.Values.Map()
	for _, prm := range p.Spec.Params {
		theirs, ok := id.Params[prm.Name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("parameter %q missing", prm.Name))
		case !sameValue(prm, theirs, mine[prm.Name]):
			out = append(out, fmt.Sprintf("parameter %q = %q, not %q", prm.Name, theirs, mine[prm.Name]))
		}
	}
	var extra []string
	for name := range id.Params {
		if _, ok := mine[name]; !ok {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		out = append(out, fmt.Sprintf("parameter %q, which %s does not have", name, p.Spec.ID))
	}
	return out
}

// sameValue compares two values of p: numbers (and lists of them) by value,
// the others as text.
func sameValue(p Param, a, b string) bool {
	if a == b {
		return true
	}
	if p.Kind != Int && p.Kind != Float {
		return false
	}
	as, bs := strings.Split(a, ","), strings.Split(b, ",")
	if len(as) != len(bs) {
		return false
	}
	for i := range as {
		x, err1 := strconv.ParseFloat(strings.TrimSpace(as[i]), 64)
		y, err2 := strconv.ParseFloat(strings.TrimSpace(bs[i]), 64)
		if err1 != nil || err2 != nil || x != y || math.IsNaN(x) {
			return false
		}
	}
	return true
}

// ReadIdentity reads an identity file.
func ReadIdentity(path string) (Identity, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Identity{}, err
	}
	return parseIdentity(data, path)
}

func parseIdentity(data []byte, path string) (Identity, error) {
	var id Identity
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&id); err != nil {
		return Identity{}, fmt.Errorf("%s: not a wcmc run identity: %w", path, err)
	}
	if id.Experiment == "" || id.Format < 1 {
		return Identity{}, fmt.Errorf("%s: not a wcmc run identity (no experiment or format)", path)
	}
	if err := id.Shard.Check(); err != nil {
		return Identity{}, fmt.Errorf("%s: %w", path, err)
	}
	return id, nil
}

func encodeIdentity(id Identity) ([]byte, error) {
	data, err := json.MarshalIndent(id, "", "  ")
	return append(data, '\n'), err
}

func writeIdentity(path string, id Identity) error {
	data, err := encodeIdentity(id)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Record is one journal line: a finished task, when it finished, and when
// the process that ran it began the run (its session; absent in journals
// written before sessions were recorded).
type Record struct {
	TaskResult
	Done  time.Time `json:"done"`
	Began time.Time `json:"began,omitzero"`
}

// sessionsTime is the time the sessions behind records spent computing:
// for each session, from its start to its last finished task (the work a
// killed session did after that was lost, not spent on this result).
// Records without a session start count from runStart.
func sessionsTime(records []Record, runStart time.Time) time.Duration {
	last := map[time.Time]time.Time{}
	for _, r := range records {
		b := r.Began
		if b.IsZero() {
			b = runStart
		}
		if r.Done.After(last[b]) {
			last[b] = r.Done
		}
	}
	var total time.Duration
	for b, d := range last {
		if d.After(b) {
			total += d.Sub(b)
		}
	}
	return total
}

// JournalData is what a journal holds.
type JournalData struct {
	Records []Record
	// Valid is the length in bytes of the complete lines; a writer
	// continuing the journal truncates it there.
	Valid int64
	// Torn is the text after the last complete line (a record cut short by
	// a crash), ignored.
	Torn string
}

// maxJournalLine bounds one journal line (a task's rows, skips and info).
const maxJournalLine = 256 << 20

// ReadJournal parses a journal: one JSON Record per line. The last line may
// be torn (cut short by a crash: no newline, or not valid JSON); it is
// reported in Torn and ignored. Any other line that is not a valid record
// is an error naming the line. Records are not checked against a run; see
// Plan.CheckRecord.
func ReadJournal(r io.Reader) (JournalData, error) {
	var out JournalData
	br := bufio.NewReader(r)
	line := 0
	var pending []byte // a complete line that failed to parse
	pendingLine := 0
	for {
		text, err := readLine(br)
		if len(text) == 0 && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			return out, err
		}
		line++
		if pending != nil {
			// The failed line was not the last: the journal is corrupt.
			return out, fmt.Errorf("journal line %d is not a task record: %s", pendingLine, short(pending))
		}
		complete := err == nil // ends with a newline
		rec, perr := parseRecord(text)
		switch {
		case perr == nil && complete:
			out.Records = append(out.Records, rec)
			out.Valid += int64(len(text)) + 1
		case !complete:
			out.Torn = string(text)
			return out, nil
		default:
			pending, pendingLine = slices.Clone(text), line
			out.Torn = string(text) + "\n"
		}
		if err == io.EOF {
			break
		}
	}
	return out, nil
}

// readLine reads one line without its newline; err is io.EOF when the line
// has no newline (the end of the data).
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxJournalLine {
			return nil, fmt.Errorf("journal line longer than %d bytes", maxJournalLine)
		}
		switch err {
		case nil:
			return buf[:len(buf)-1], nil
		case bufio.ErrBufferFull:
			continue
		default:
			return buf, err
		}
	}
}

func parseRecord(text []byte) (Record, error) {
	var rec Record
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return Record{}, err
	}
	if dec.More() {
		return Record{}, errors.New("text after the record")
	}
	if rec.Done.IsZero() {
		return Record{}, errors.New("no finishing time")
	}
	return rec, nil
}

func short(b []byte) string {
	const n = 80
	if len(b) > n {
		return strconv.Quote(string(b[:n])) + "…"
	}
	return strconv.Quote(string(b))
}

// CheckRecord checks that a journal record is a task of the plan's run:
// its point and x match the sweep, its trial is in range, and its rows and
// skips name schemes and metrics of the spec, with no NaN value.
func (p *Plan) CheckRecord(r TaskResult) error {
	xs := p.Values.XList()
	where := fmt.Sprintf("task %s=%s trial %d", p.Spec.X, FormatX(r.X), r.Trial)
	switch {
	case r.Point < 0 || r.Point >= len(xs):
		return fmt.Errorf("%s: point %d is not in the sweep (%d points)", where, r.Point, len(xs))
	case xs[r.Point] != r.X:
		return fmt.Errorf("%s: point %d of the sweep is %s=%s", where, r.Point, p.Spec.X, FormatX(xs[r.Point]))
	case r.Trial < 0 || r.Trial >= p.Trials:
		return fmt.Errorf("%s: trial out of range 0..%d", where, p.Trials-1)
	}
	for _, row := range r.Rows {
		if !slices.Contains(p.Spec.Schemes, row.Scheme) || !slices.Contains(p.Spec.Metrics, row.Metric) {
			return fmt.Errorf("%s: row (%q, %q) names a scheme or metric not in %s", where, row.Scheme, row.Metric, p.Spec.ID)
		}
		if math.IsNaN(row.Value) {
			return fmt.Errorf("%s: scheme %q: %s = NaN", where, row.Scheme, row.Metric)
		}
	}
	for _, s := range r.Skipped {
		if !slices.Contains(p.Spec.Schemes, s.Scheme) {
			return fmt.Errorf("%s: skips scheme %q, not in %s", where, s.Scheme, p.Spec.ID)
		}
	}
	for s := range r.Info {
		if r.Info[s] == nil {
			return fmt.Errorf("%s: info of %q is null", where, s)
		}
	}
	return nil
}

// journalFile appends task records to a journal file, one durable line each.
type journalFile struct {
	f     *os.File
	path  string
	n     int       // records appended by this Journal
	began time.Time // when this session opened the journal
	// earlier is the computing time of the sessions whose records the
	// journal already held (see sessionsTime).
	earlier time.Duration
}

// Append writes r as one line and syncs it to disk before returning.
func (j *journalFile) Append(r TaskResult) error {
	line, err := json.Marshal(Record{TaskResult: r, Done: time.Now().UTC(), Began: j.began})
	if err != nil {
		return fmt.Errorf("journal %s: task %s trial %d: %w", j.path, FormatX(r.X), r.Trial, err)
	}
	if _, err := j.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	j.n++
	return nil
}

// Path returns the journal's file name.
func (j *journalFile) Path() string { return j.path }

// Close releases the journal.
func (j *journalFile) Close() error {
	if j == nil || j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}

// RemoveJournal deletes the journal and identity of experiment id in dir,
// once the run's final files are written.
func RemoveJournal(dir, id string) error {
	var errs []error
	for _, p := range []string{JournalPath(dir, id), IdentityPath(dir, id)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// syncDir makes the directory entries of dir durable (best effort: not
// every platform can sync a directory).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// normaliseInfo returns info as it reads back from the journal (or from
// ID.json): JSON types only — float64 numbers, strings, bools, []any and
// map[string]any (so structs become maps) — with non-finite floats as the
// strings "NaN", "+Inf", "-Inf" (see jsonSafe). It fails on values JSON
// cannot hold.
func normaliseInfo(info map[string]map[string]any) (map[string]map[string]any, error) {
	if info == nil {
		return nil, nil
	}
	safe := make(map[string]any, len(info))
	for s, m := range info {
		safe[s] = jsonSafe(map[string]any(m))
	}
	data, err := json.Marshal(safe)
	if err != nil {
		return nil, fmt.Errorf("info is not JSON-encodable: %w", err)
	}
	var out map[string]map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("info does not read back from JSON: %w", err)
	}
	return out, nil
}

// rowJSON is the JSON form of a Row: Value is a number, or "+Inf"/"-Inf",
// which JSON numbers cannot hold.
type rowJSON struct {
	Scheme string    `json:"scheme"`
	Metric string    `json:"metric"`
	Value  jsonFloat `json:"value"`
	X      float64   `json:"x,omitempty"`
}

// MarshalJSON writes r with an infinite Value as "+Inf" or "-Inf"; NaN is
// an error.
func (r Row) MarshalJSON() ([]byte, error) {
	return json.Marshal(rowJSON{r.Scheme, r.Metric, jsonFloat(r.Value), r.X})
}

// UnmarshalJSON reads what MarshalJSON writes; unknown fields are errors.
func (r *Row) UnmarshalJSON(data []byte) error {
	var j rowJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	*r = Row{Scheme: j.Scheme, Metric: j.Metric, Value: float64(j.Value), X: j.X}
	return nil
}

type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return json.Marshal(v) // NaN: an error
}

func (f *jsonFloat) UnmarshalJSON(data []byte) error {
	switch string(data) {
	case `"+Inf"`:
		*f = jsonFloat(math.Inf(1))
		return nil
	case `"-Inf"`:
		*f = jsonFloat(math.Inf(-1))
		return nil
	}
	var v float64
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("value %s: want a number, \"+Inf\" or \"-Inf\"", short(data))
	}
	*f = jsonFloat(v)
	return nil
}
