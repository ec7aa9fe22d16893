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
		return err
	}
	if err = p.Close(); err != nil {
		return err
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

// Create starts writing path: a temporary file ".BASE.tmp*" in path's
// directory, with mode 0644.
func Create(path string) (*Pending, error) {
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
	if err := os.Rename(p.Name(), p.Path); err != nil {
		return err
	}
	register(p.Name(), false)
	KillPoint(KillFileDone, nil, nil)
	return nil
}

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
// returns their paths. Only those are touched, so processes writing other
// files in dir are not disturbed; the caller must be the only one writing
// the names it accepts (a lock, or files that only it writes).
func RemoveStale(dir string, match func(name string) bool) ([]string, error) {
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
