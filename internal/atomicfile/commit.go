package atomicfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A Set's commit record: before its first rename, Commit writes in each
// directory of the set a file ".NAME.commit" (NAME the set's first file in
// that directory) listing that directory's files, whose new content is
// complete and synced under temporary names; it removes the record after
// the last rename. A record left behind means a process was killed between
// the renames (or is renaming now): Recover finishes such a commit, and
// Unfinished describes it.
const (
	recordSuffix = ".commit"
	recordFormat = "wcmc-commit/1"
	maxRecord    = 1 << 20 // bytes: far more than any set's names
)

// commitRecord is the content of a commit record.
type commitRecord struct {
	Format string        `json:"format"`
	Files  []commitEntry `json:"files"`
}

// commitEntry is one file of a commit record, by names in its directory.
type commitEntry struct {
	Name   string `json:"name"`             // the final name
	Temp   string `json:"temp"`             // the temporary file holding the new content
	Backup string `json:"backup,omitempty"` // the backup of the file replaced, if any
}

// backupName is the name of the backup Commit keeps of path: a temporary
// name (RemoveStale removes it after a kill) that no Create makes, those
// having no leading zero.
func backupName(path string) string {
	return filepath.Join(filepath.Dir(path), tempPrefix(path)+"0"+strconv.Itoa(os.Getpid()))
}

// writeRecords writes the commit record of each directory of files, synced
// with its directory, and returns their paths by directory. On error the
// records written are removed.
func writeRecords(files []*Pending) (map[string]string, error) {
	byDir := map[string]*commitRecord{}
	var dirs []string
	for _, p := range files {
		dir := filepath.Dir(p.Path)
		if byDir[dir] == nil {
			byDir[dir] = &commitRecord{Format: recordFormat}
			dirs = append(dirs, dir)
		}
		byDir[dir].Files = append(byDir[dir].Files, commitEntry{
			Name: filepath.Base(p.Path), Temp: filepath.Base(p.Name()), Backup: filepath.Base(backupName(p.Path))})
	}
	records := map[string]string{}
	for _, dir := range dirs {
		rec := byDir[dir]
		path := filepath.Join(dir, "."+rec.Files[0].Name+recordSuffix)
		if err := writeRecord(path, rec); err != nil {
			removeRecords(records)
			return nil, fmt.Errorf("writing the commit record %s: %w", path, err)
		}
		records[dir] = path
	}
	return records, nil
}

// writeRecord writes rec to path and syncs it and its directory.
func writeRecord(path string, rec *commitRecord) error {
	if err := CheckNotLink(path); err != nil {
		return err
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

// removeRecords removes the commit records and syncs their directories.
func removeRecords(records map[string]string) {
	for dir, path := range records {
		os.Remove(path)
		syncDir(dir)
	}
}

// syncDir makes the renames and removals in dir durable, where the system
// supports it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// readRecord reads the commit record at path. ok is false for a record cut
// short while being written (no file of its set was renamed yet); an error
// reports one that is not a record Commit writes.
func readRecord(path string) (rec commitRecord, ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return rec, false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRecord+1))
	if err != nil {
		return rec, false, err
	}
	if len(b) > maxRecord || json.Unmarshal(b, &rec) != nil || rec.Format != recordFormat {
		return rec, false, nil
	}
	// Only names Commit writes: files of the directory, temporary names of
	// theirs, so that a forged record renames nothing else.
	for _, f := range rec.Files {
		if !validEntry(f) {
			return rec, false, fmt.Errorf("%s is not a commit record wcmc wrote (entry %+v): remove it", path, f)
		}
	}
	return rec, len(rec.Files) > 0, nil
}

// validEntry reports whether e names a file of the record's directory and
// temporary files of that file.
func validEntry(e commitEntry) bool {
	temp := func(s string, backup bool) bool {
		digits, ok := strings.CutPrefix(s, tempPrefix(e.Name))
		return ok && digits != "" && strings.Trim(digits, "0123456789") == "" && (!backup || digits[0] == '0')
	}
	return e.Name != "" && e.Name != "." && e.Name != ".." && filepath.Base(e.Name) == e.Name && !strings.ContainsAny(e.Name, `/\`) &&
		temp(e.Temp, false) && (e.Backup == "" || temp(e.Backup, true))
}

// records calls visit for each commit record in dir with a file that
// match accepts; a record cut short while being written is passed with
// ok false and its set's first file as its only entry.
func records(dir string, match func(name string) bool, visit func(path string, rec commitRecord, ok bool) error) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		first, isRecord := strings.CutSuffix(e.Name(), recordSuffix)
		first, dotted := strings.CutPrefix(first, ".")
		if !isRecord || !dotted || first == "" || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		rec, ok, err := readRecord(path)
		if err != nil {
			return err
		}
		if !ok {
			rec.Files = []commitEntry{{Name: first}}
		}
		if !slices.ContainsFunc(rec.Files, func(f commitEntry) bool { return match(f.Name) }) {
			continue
		}
		if err := visit(path, rec, ok); err != nil {
			return err
		}
	}
	return nil
}

// Recover finishes the commits of Sets that a killed process left half
// done in dir, those with a file whose name match accepts: every file
// still under its temporary name (complete, as the record says) is renamed
// into place, the backups are removed, then the record; a record cut short
// while being written (no file renamed yet) is removed. It returns the
// paths of the files it renamed into place. As for RemoveStale, the caller
// must be the only one writing the names it accepts, since a commit in
// progress looks the same as one cut short.
func Recover(dir string, match func(name string) bool) ([]string, error) {
	var renamed []string
	err := records(dir, match, func(path string, rec commitRecord, ok bool) error {
		if !ok {
			return removeIgnoringAbsent(path)
		}
		for _, f := range rec.Files {
			temp, final := filepath.Join(dir, f.Temp), filepath.Join(dir, f.Name)
			fi, err := os.Lstat(temp)
			if errors.Is(err, fs.ErrNotExist) {
				continue // renamed before the kill
			}
			if err == nil && !fi.Mode().IsRegular() {
				err = fmt.Errorf("%s is not a regular file", temp)
			}
			if err == nil {
				err = rename(temp, final)
			}
			if err != nil {
				return fmt.Errorf("finishing the interrupted replacement of %s (%s): %w; fix the cause and run again, or remove those files and %s and compute them again",
					strings.Join(names(rec), ", "), path, err, path)
			}
			renamed = append(renamed, final)
		}
		for _, f := range rec.Files {
			if f.Backup != "" {
				if err := removeIgnoringAbsent(filepath.Join(dir, f.Backup)); err != nil {
					return err
				}
			}
		}
		syncDir(dir)
		return removeIgnoringAbsent(path)
	})
	if err == nil && len(renamed) > 0 {
		syncDir(dir)
	}
	return renamed, err
}

// Unfinished returns an error describing the commits in dir with a file
// that match accepts which a process has not finished: it was killed
// between the renames, or is renaming now. The error names the files
// already replaced and those not yet; the next writer of the files
// finishes the commit (Recover). It returns nil when there is none.
func Unfinished(dir string, match func(name string) bool) error {
	var msgs []string
	err := records(dir, match, func(path string, rec commitRecord, ok bool) error {
		if !ok {
			return nil // cut short before any rename: the files are as they were
		}
		var done, old []string
		for _, f := range rec.Files {
			if _, err := os.Lstat(filepath.Join(dir, f.Temp)); err == nil {
				old = append(old, f.Name)
			} else {
				done = append(done, f.Name)
			}
		}
		msg := fmt.Sprintf("the files %s in %s were being replaced together when the writing process stopped (or it is still running), as %s records", strings.Join(names(rec), ", "), dir, path)
		if len(old) > 0 {
			msg += fmt.Sprintf(": %s replaced, %s not yet", listOrNone(done), strings.Join(old, ", "))
		}
		msgs = append(msgs, msg)
		return nil
	})
	if err != nil {
		return err
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%s; the next command that writes them finishes the replacement first", strings.Join(msgs, "; "))
}

// names lists the final names of rec's files.
func names(rec commitRecord) []string {
	out := make([]string, len(rec.Files))
	for i, f := range rec.Files {
		out[i] = f.Name
	}
	return out
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// removeIgnoringAbsent removes path; an absent path is no error.
func removeIgnoringAbsent(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
