// Package journal makes sweeps durable. A journaled run (Run) appends
// each finished task to a journal file and syncs it to disk, so that a run
// killed at any instant loses no finished task; a resumed run keeps the
// journaled tasks and runs only the others, ending with the same result as
// an uninterrupted run; one process at a time may write a journal (a file
// lock); and the journals of the shards of one run, run apart, merge into
// the result of the whole run (Merge).
//
// A journaled run keeps two files in its directory:
//
//   - ID.run.json, the Identity of the run, written (atomically) before
//     any task runs;
//   - ID.journal.jsonl, one JSON line per finished task (a TaskResult and
//     the time it finished), appended and fsynced as each task finishes,
//     ending with a checksum of the line (format 2; see Record.Sum).
//
// A process killed at any instant leaves at worst a torn last line, which
// readers detect and ignore; every complete line is a finished task. A line
// whose checksum does not match its content was edited or damaged, and is
// refused wherever it is.
package journal

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/wcmc-project/wcmc/internal/atomicfile"
	"github.com/wcmc-project/wcmc/runner"
)

// Format is the version of the journal and identity file format written:
// 2 since journal lines carry a checksum (Record.Sum), 3 since they may
// name their session's machine and workers (Record.Machine, .Workers),
// which a wcmc reading format 2 would take for a damaged line, 4 since the
// identity file carries a checksum too (Identity.Sum). Format 1
// journals, whose lines have none, are still read (and resumed, new lines
// getting checksums); a journal line of format 2 or later without a
// checksum is refused, and so is an identity of format 4 or later without
// one. Resuming a journal of format 2 or later makes it of this format, so
// that an older wcmc refuses it by its identity rather than misread it.
const Format = 4

// Path and IdentityPath return the paths of the journal and the run
// identity of experiment id in dir.
func Path(dir, id string) string         { return filepath.Join(dir, id+".journal.jsonl") }
func IdentityPath(dir, id string) string { return filepath.Join(dir, id+".run.json") }

// Record is one journal line: a finished task, when it finished, and when
// the process that ran it began the run (its session; absent in journals
// written before sessions were recorded).
type Record struct {
	runner.TaskResult
	Done  time.Time `json:"done"`
	Began time.Time `json:"began,omitzero"`
	// Machine is the machine the session ran on and Workers the tasks it
	// ran at once (runner.Options.Machine, .Workers); absent in journals
	// written before they were recorded (and Machine when not given).
	Machine string `json:"machine,omitempty"`
	Workers int    `json:"workers,omitempty"`
	// Sum is the checksum of the line: the first 8 bytes of the SHA-256 of
	// the line as written without its "sum" field, in hex. Written last on
	// the line; absent in format-1 journals.
	Sum string `json:"sum,omitempty"`
}

// ErrChecksum is wrapped by the error of a journal line whose content does
// not match its checksum: it was edited or damaged after it was written.
var ErrChecksum = errors.New("checksum mismatch")

// lineSum is the checksum of body, a record's JSON without its sum.
func lineSum(body []byte) string {
	h := sha256.Sum256(body)
	return hex.EncodeToString(h[:8])
}

// sumSuffix is how a line written by encodeRecord ends.
func sumSuffix(sum string) string { return `,"sum":"` + sum + `"}` }

// encodeRecord writes r as one JSON line (without the newline) ending with
// its checksum.
func encodeRecord(r Record) ([]byte, error) {
	r.Sum = ""
	body, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return append(body[:len(body)-1], sumSuffix(lineSum(body))...), nil
}

// verifySum checks the checksum of a parsed line, if it has one.
func verifySum(text []byte, rec Record) error {
	if rec.Sum == "" {
		return nil
	}
	suffix := sumSuffix(rec.Sum)
	if !bytes.HasSuffix(text, []byte(suffix)) {
		return fmt.Errorf("%w: the \"sum\" field is not where wcmc writes it (the line was rewritten)", ErrChecksum)
	}
	body := append(slices.Clone(text[:len(text)-len(suffix)]), '}')
	if got := lineSum(body); got != rec.Sum {
		return fmt.Errorf("%w: the line's content has checksum %s, the line says %s (edited or damaged after it was written)", ErrChecksum, got, rec.Sum)
	}
	return nil
}

// checkSums refuses, in a journal of the given format, records that carry
// no checksum although the format requires one, and in a journal of format
// 1 (whose lines have none) records that carry one: its identity's format
// was edited.
func checkSums(c Contents, format int, path string) error {
	for i, r := range c.Records {
		if format < 2 && r.Sum != "" {
			return fmt.Errorf("journal %s, record %d: has a checksum, but the run's identity says format %d, whose lines have none (the identity was edited)", path, i+1, format)
		}
		if format >= 2 && r.Sum == "" {
			return fmt.Errorf("journal %s, record %d: no checksum, but the journal is of format %d, whose every line has one (the line was edited)", path, i+1, format)
		}
	}
	return nil
}

// sessions are the sessions behind records, in the order they began: for
// each, the tasks it finished, its machine and workers, and its time from
// its start to its last finished task (the work a killed session did after
// that was lost, not spent on this result). Records without a session
// start are one session that began at runStart.
func sessions(records []Record, runStart time.Time) []runner.Session {
	at := map[time.Time]int{}
	var out []runner.Session
	for _, r := range records {
		b := r.Began
		if b.IsZero() {
			b = runStart
		}
		i, ok := at[b]
		if !ok {
			i = len(out)
			at[b] = i
			out = append(out, runner.Session{Began: b, Machine: r.Machine, Workers: r.Workers})
		}
		s := &out[i]
		s.Tasks++
		if d := r.Done.Sub(b); d > s.Wall {
			s.Wall = d
		}
	}
	sortSessions(out)
	return out
}

// sortSessions orders sessions by their start.
func sortSessions(ss []runner.Session) {
	slices.SortStableFunc(ss, func(a, b runner.Session) int { return a.Began.Compare(b.Began) })
}

// computingTime is the time during which at least one of the sessions was
// computing: the length of the union of their intervals [Began, Began +
// Wall] — their sum for sessions one after another (a resumed run), less
// for shards that ran at the same time.
func computingTime(ss []runner.Session) time.Duration {
	ss = slices.Clone(ss)
	sortSessions(ss)
	var (
		total    time.Duration
		from, to time.Time
	)
	for i, s := range ss {
		end := s.Began.Add(s.Wall)
		switch {
		case i == 0:
			from, to = s.Began, end
		case s.Began.After(to):
			total += to.Sub(from)
			from, to = s.Began, end
		case end.After(to):
			to = end
		}
	}
	if len(ss) > 0 {
		total += to.Sub(from)
	}
	return total
}

// Contents is what a journal holds.
type Contents struct {
	Records []Record
	// Valid is the length in bytes of the complete lines; a writer
	// continuing the journal truncates it there.
	Valid int64
	// Torn is the text after the last complete line (a record cut short by
	// a crash), ignored.
	Torn string
}

// maxLine bounds one journal line (a task's rows, skips and info).
const maxLine = 256 << 20

// Read parses a journal: one JSON Record per line. The last line may be
// torn (cut short by a crash: no newline, or not valid JSON); it is
// reported in Torn and ignored. Any other line that is not a valid record,
// and any line whose checksum does not match (ErrChecksum), is an error
// naming the line. Records are not checked against a run; see
// runner.Plan.CheckRecord.
func Read(r io.Reader) (Contents, error) {
	var out Contents
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
			return out, fmt.Errorf("journal line %d is not a task record: %s", pendingLine, quoteShort(pending))
		}
		complete := err == nil // ends with a newline
		rec, perr := parseRecord(text)
		switch {
		case errors.Is(perr, ErrChecksum):
			return out, fmt.Errorf("journal line %d: %w", line, perr)
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
		if len(buf) > maxLine {
			return nil, fmt.Errorf("journal line longer than %d bytes", maxLine)
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

// quoteShort quotes the start of a line for an error message.
func quoteShort(b []byte) string {
	const n = 80
	s := strconv.Quote(string(b[:min(n, len(b))]))
	if len(b) > n {
		s += "…"
	}
	return s
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
	if err := verifySum(text, rec); err != nil {
		return Record{}, err
	}
	return rec, nil
}

// file appends task records to a journal file, one durable line each.
type file struct {
	f       *os.File
	path    string
	n       int            // records appended by this file
	session runner.Session // this session: its start, machine and workers
	last    time.Time      // when this session's last record finished
	// earlier are the sessions whose records the journal already held
	// (see sessions).
	earlier []runner.Session
	// created lists what this session created for a run with no finished
	// task (identity, journal, directory), removed by discard.
	created []string
}

// discard closes the journal of a run that finished no task and removes
// the files (and directory) its session created for it, so that a run
// that failed in its setup leaves nothing behind.
func (j *file) discard() {
	if j.n > 0 {
		return
	}
	j.Close()
	for _, p := range j.created {
		os.Remove(p) // a directory only if empty
	}
	j.created = nil
}

// Append writes r as one line and syncs it to disk before returning.
func (j *file) Append(r runner.TaskResult) error {
	rec := Record{TaskResult: r, Done: time.Now().UTC(), Began: j.session.Began, Machine: j.session.Machine, Workers: j.session.Workers}
	line, err := encodeRecord(rec)
	if err != nil {
		return fmt.Errorf("journal %s: task %s trial %d: %w", j.path, runner.FormatX(r.X), r.Trial, err)
	}
	line = append(line, '\n')
	atomicfile.KillPoint(atomicfile.KillJournalAppend, j.f, line)
	if _, err := j.f.Write(line); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	j.n++
	j.last = rec.Done
	atomicfile.KillPoint(atomicfile.KillTaskSaved, nil, nil)
	return nil
}

// Path returns the journal's file name.
func (j *file) Path() string { return j.path }

// Close releases the journal.
func (j *file) Close() error {
	if j == nil || j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}

// Remove deletes the journal and identity of experiment id in dir, once
// the run's final files are written.
func Remove(dir, id string) error {
	var errs []error
	for _, p := range []string{Path(dir, id), IdentityPath(dir, id)} {
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
