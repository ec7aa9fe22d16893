// Package atomicfile writes files so that readers never see a partial one:
// the content goes to a temporary file in the same directory, is synced,
// and is renamed into place only when complete. On error nothing is left
// behind.
//
// A process that is killed while writing leaves its temporary file, named
// ".NAME.tmpDIGITS" beside NAME. Two remedies: a process about to exit on
// a signal calls RemovePending, which deletes the temporary files of the
// writes still in progress; and a process that starts over a directory
// where an earlier one may have been killed (SIGKILL cannot be caught)
// calls RemoveStale for the files it is about to write.
//
// A Set renames several files into place together: a process killed
// between those renames leaves a commit record beside them, and the next
// writer of those files finishes the commit (Recover, which RemoveStale
// and Set.Commit call first); Unfinished describes it to a reader.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Write creates or replaces path with what write produces.
func Write(path string, write func(io.Writer) error) (err error) {
	p, err := Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			p.Abort()
		}
	}()
	if err = write(p.File); err != nil {
		return p.named(err)
	}
	if err = p.Close(); err != nil {
		return p.named(err)
	}
	return p.Commit()
}

// Pending is a file being written under a temporary name beside Path:
// write to File, then Close and Commit (rename into place), or Abort.
// Until Commit or Abort it is registered for RemovePending.
type Pending struct {
	*os.File
	Path   string // the final name
	closed bool
}

// pending holds the temporary names of the writes in progress.
var pending struct {
	sync.Mutex
	names map[string]bool
}

func register(name string, on bool) {
	pending.Lock()
	defer pending.Unlock()
	if pending.names == nil {
		pending.names = map[string]bool{}
	}
	if on {
		pending.names[name] = true
	} else {
		delete(pending.names, name)
	}
}

// ErrLink is wrapped by the error of a write to a path that is a symbolic
// link: the file would be written through it, or the link replaced.
var ErrLink = errors.New("is a symbolic link")

// CheckNotLink returns an error wrapping ErrLink, naming path and where
// it points, when path is a symbolic link (dangling or not).
func CheckNotLink(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	target, _ := os.Readlink(path)
	return fmt.Errorf("%s %w (to %s): wcmc does not write through links; remove it or write elsewhere", path, ErrLink, target)
}

// rename is os.Rename; tests replace it to make a rename fail.
var rename = os.Rename

// Create starts writing path: a temporary file ".BASE.tmp*" in path's
// directory, with mode 0644. A path that is a symbolic link is refused
// (CheckNotLink).
func Create(path string) (*Pending, error) {
	if err := CheckNotLink(path); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), tempPrefix(path)+"*")
	if err != nil {
		return nil, err
	}
	register(f.Name(), true)
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		register(f.Name(), false)
		return nil, err
	}
	return &Pending{File: f, Path: path}, nil
}

// Close syncs the content to disk and closes the temporary file; the file
// is not in place until Commit.
func (p *Pending) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	err := p.File.Sync()
	if cerr := p.File.Close(); err == nil {
		err = cerr
	}
	return err
}

// Commit renames the closed temporary file to Path.
func (p *Pending) Commit() error {
	if !p.closed {
		return fmt.Errorf("atomicfile: commit of %s before Close", p.Path)
	}
	KillPoint(KillFileRename, nil, nil)
	if err := rename(p.Name(), p.Path); err != nil {
		return err
	}
	register(p.Name(), false)
	KillPoint(KillFileDone, nil, nil)
	return nil
}

// named returns err, an error of writing the temporary file, with the
// temporary file's name, which Abort removes, replaced by Path in its
// message: "write DIR/.NAME.tmp123: file too large" becomes "write
// DIR/NAME: file too large". It wraps err.
func (p *Pending) named(err error) error {
	msg := err.Error()
	if !strings.Contains(msg, p.Name()) {
		return err
	}
	return &renamedError{strings.ReplaceAll(msg, p.Name(), p.Path), err}
}

// renamedError is an error with another message.
type renamedError struct {
	msg string
	err error
}

func (e *renamedError) Error() string { return e.msg }
func (e *renamedError) Unwrap() error { return e.err }

// Abort closes and removes the temporary file.
func (p *Pending) Abort() {
	if !p.closed {
		p.closed = true
		p.File.Close()
	}
	os.Remove(p.Name())
	register(p.Name(), false)
}

// RemovePending deletes the temporary files of every write in progress in
// this process, for a process about to exit before they finish (on a
// signal). The writes themselves then fail.
func RemovePending() {
	pending.Lock()
	defer pending.Unlock()
	for name := range pending.names {
		os.Remove(name)
	}
	clear(pending.names)
}

// tempPrefix is the start of the temporary names of path.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp" }

// RemoveStale deletes the temporary files that earlier, killed writes of
// files dir/NAME left in dir, for the names NAME that match accepts, and
// returns their paths; it first finishes the commits of Sets cut short
// with such a file (Recover). Only those are touched, so processes writing other
// files in dir are not disturbed; the caller must be the only one writing
// the names it accepts (a lock, or files that only it writes).
func RemoveStale(dir string, match func(name string) bool) ([]string, error) {
	// A commit cut short needs its temporary files: finish it first.
	if _, err := Recover(dir, match); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, ".") {
			continue
		}
		i := strings.LastIndex(name, ".tmp")
		if i < 1 || strings.Trim(name[i+len(".tmp"):], "0123456789") != "" || !match(name[1:i]) {
			continue
		}
		path := filepath.Join(dir, name)
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, err
		}
		removed = append(removed, path)
	}
	return removed, nil
}

// Set writes several files all or nothing: each is written in full under
// a temporary name (Add), and Commit renames them all into place, keeping
// a backup of each file it replaces until every rename has succeeded, so
// that a failed Commit leaves the files as they were. A process killed
// between the renames leaves a commit record (see Recover) from which the
// next writer of those files finishes the commit.
type Set struct {
	files []*Pending
}

// Add writes path's content (via write) to a temporary file beside it.
// On error the set is aborted.
func (s *Set) Add(path string, write func(io.Writer) error) error {
	p, err := Create(path)
	if err != nil {
		s.Abort()
		return err
	}
	s.files = append(s.files, p)
	if err := write(p.File); err != nil {
		s.Abort()
		return p.named(err)
	}
	if err := p.Close(); err != nil {
		s.Abort()
		return p.named(err)
	}
	return nil
}

// Paths returns the final paths of the files added, in order.
func (s *Set) Paths() []string {
	out := make([]string, len(s.files))
	for i, p := range s.files {
		out[i] = p.Path
	}
	return out
}

// Commit renames every file into place. Before the first rename it writes
// a commit record in each directory of the set (see Recover) and removes
// it after the last. If a rename fails, the files already renamed go back
// to their temporary names, those they replaced are restored, and the
// temporary files removed.
func (s *Set) Commit() error {
	for _, p := range s.files {
		if err := CheckNotLink(p.Path); err != nil {
			s.Abort()
			return err
		}
		if fi, err := os.Lstat(p.Path); err == nil && fi.IsDir() {
			s.Abort()
			return fmt.Errorf("writing %s: it is a directory", p.Path)
		}
	}
	// This process writes these names: a record of an earlier, killed
	// commit with one of them is finished first, not left to replace the
	// new files with its older ones later.
	mine := map[string]map[string]bool{} // directory → names
	for _, p := range s.files {
		dir := filepath.Dir(p.Path)
		if mine[dir] == nil {
			mine[dir] = map[string]bool{}
		}
		mine[dir][filepath.Base(p.Path)] = true
	}
	for dir, names := range mine {
		if _, err := Recover(dir, func(name string) bool { return names[name] }); err != nil {
			s.Abort()
			return err
		}
	}
	records, err := writeRecords(s.files)
	if err != nil {
		s.Abort()
		return err
	}
	type done struct {
		p      *Pending
		backup string // "" when p.Path did not exist
	}
	var committed []done
	undo := func() {
		for i := len(committed) - 1; i >= 0; i-- {
			c := committed[i]
			// Back to the temporary name, so that the record stays true
			// until it is removed: a kill here still finishes the commit.
			os.Rename(c.p.Path, c.p.Name())
			if c.backup != "" {
				os.Rename(c.backup, c.p.Path)
			}
		}
		removeRecords(records)
		s.Abort()
	}
	for _, p := range s.files {
		backup := ""
		if _, err := os.Lstat(p.Path); err == nil {
			backup = backupName(p.Path)
			os.Remove(backup)
			// A hard link keeps the old file in place until the rename
			// replaces it; where links are not supported, move it aside.
			if err := os.Link(p.Path, backup); err != nil {
				if err := rename(p.Path, backup); err != nil {
					undo()
					return fmt.Errorf("keeping a backup of %s: %w", p.Path, err)
				}
			}
		}
		if err := p.Commit(); err != nil {
			if _, err := os.Lstat(p.Path); backup != "" && err == nil {
				os.Remove(backup) // a link: the old file is still in place
			} else if backup != "" {
				os.Rename(backup, p.Path) // moved aside: back
			}
			undo()
			return fmt.Errorf("writing %s: %w", p.Path, err)
		}
		committed = append(committed, done{p, backup})
	}
	for dir := range records {
		syncDir(dir)
	}
	for _, c := range committed {
		if c.backup != "" {
			os.Remove(c.backup)
		}
	}
	removeRecords(records)
	s.files = nil
	return nil
}

// Abort removes the temporary files not yet committed; it is a no-op after
// Commit.
func (s *Set) Abort() {
	for _, p := range s.files {
		p.Abort()
	}
	s.files = nil
}
