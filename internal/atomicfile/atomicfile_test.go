package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "old"); return err }); err != nil {
		t.Fatal(err)
	}
	// A failing writer leaves the previous file intact and no temporary.
	boom := errors.New("boom")
	err := Write(path, func(w io.Writer) error { io.WriteString(w, "partial"); return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("error %v", err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "old" {
		t.Fatalf("content %q after a failed write", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("%d files left in the directory", len(entries))
	}
}

// TestWriteErrorNamesTheFile: an error of writing the temporary file (a
// full disk, a file size limit) names the file being written, not the
// temporary file, which is removed; for Write and Set.Add alike.
func TestWriteErrorNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.png")
	failing := func(w io.Writer) error {
		w.(*os.File).Close() // the next write fails with an *fs.PathError naming the open file
		_, err := io.WriteString(w, "pixels")
		return fmt.Errorf("png: %w", err)
	}
	var set Set
	for name, err := range map[string]error{"Write": Write(path, failing), "Set.Add": set.Add(path, failing)} {
		if err == nil || !strings.Contains(err.Error(), "png: write "+path+": ") || strings.Contains(err.Error(), ".tmp") || !errors.Is(err, os.ErrClosed) {
			t.Errorf("%s: error %q, want it to name %s and no temporary file, and to wrap the write's error", name, err, path)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files left: %v", entries)
	}
}

func TestRemoveStaleNames(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{".a.csv.tmp12", ".a.png.tmp3", ".a.csv.tmpx", "a.csv.tmp4", ".ab.csv.tmp5", ".b.csv.tmp6", ".a.csv"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	removed, err := RemoveStale(dir, func(n string) bool { return strings.HasPrefix(n, "a.") })
	if err != nil {
		t.Fatal(err)
	}
	for i := range removed {
		removed[i] = filepath.Base(removed[i])
	}
	if want := []string{".a.csv.tmp12", ".a.png.tmp3"}; !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	if r, err := RemoveStale(filepath.Join(dir, "none"), func(string) bool { return true }); err != nil || r != nil {
		t.Errorf("missing directory: %v, %v", r, err)
	}
}

func TestWriteRefusesLinks(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "one-line.txt")
	os.WriteFile(target, []byte("keep\n"), 0o644)
	for name, to := range map[string]string{"link": target, "dangling": filepath.Join(outside, "absent.txt")} {
		path := filepath.Join(dir, name)
		if err := os.Symlink(to, path); err != nil {
			t.Skip(err)
		}
		err := Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err })
		if !errors.Is(err, ErrLink) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming the link", name, err)
		}
		if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s: the link was replaced (%v)", name, err)
		}
	}
	if got, _ := os.ReadFile(target); string(got) != "keep\n" {
		t.Errorf("the link's target holds %q", got)
	}
	if _, err := os.Stat(filepath.Join(outside, "absent.txt")); err == nil {
		t.Error("a file was created through the dangling link")
	}
}

func TestSetCommitRestoresOnFailure(t *testing.T) {
	dir := t.TempDir()
	names := []string{"a.csv", "b.csv", "c.json"}
	for _, n := range names[:2] {
		os.WriteFile(filepath.Join(dir, n), []byte("old "+n), 0o644)
	}
	fail := filepath.Join(dir, "c.json")
	boom := errors.New("boom")
	rename = func(from, to string) error {
		if to == fail {
			return boom
		}
		return os.Rename(from, to)
	}
	defer func() { rename = os.Rename }()
	var s Set
	for _, n := range names {
		if err := s.Add(filepath.Join(dir, n), func(w io.Writer) error { _, err := io.WriteString(w, "new "+n); return err }); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Commit(); !errors.Is(err, boom) {
		t.Fatalf("commit: %v, want the rename's error", err)
	}
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, names[:2]) {
		t.Errorf("files after a failed commit: %v, want %v", left, names[:2])
	}
	for _, n := range names[:2] {
		if got, _ := os.ReadFile(filepath.Join(dir, n)); string(got) != "old "+n {
			t.Errorf("%s holds %q after a failed commit, want the old content", n, got)
		}
	}

	rename = os.Rename
	s = Set{}
	for _, n := range names {
		s.Add(filepath.Join(dir, n), func(w io.Writer) error { _, err := io.WriteString(w, "new "+n); return err })
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	entries, _ = os.ReadDir(dir)
	if len(entries) != len(names) {
		t.Errorf("%d entries after a commit, want %d (no backup left)", len(entries), len(names))
	}
	for _, n := range names {
		if got, _ := os.ReadFile(filepath.Join(dir, n)); string(got) != "new "+n {
			t.Errorf("%s holds %q", n, got)
		}
	}
}

// TestRecoverRefusesForgedRecords: a commit record naming files outside
// its directory, or temporary files of other names, renames nothing.
func TestRecoverRefusesForgedRecords(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ".a.csv.tmp123"), []byte("x"), 0o644)
	for _, files := range []string{
		`[{"name":"../a.csv","temp":"..a.csv.tmp123"}]`,
		`[{"name":"a.csv","temp":".b.csv.tmp123"}]`,
		`[{"name":"a.csv","temp":".a.csv.tmp123","backup":"../.a.csv.tmp0123"}]`,
	} {
		record := filepath.Join(dir, ".a.csv"+recordSuffix)
		os.WriteFile(record, []byte(`{"format":"`+recordFormat+`","files":`+files+`}`), 0o644)
		renamed, err := Recover(dir, func(string) bool { return true })
		if err == nil || !strings.Contains(err.Error(), "not a commit record wcmc wrote") || len(renamed) != 0 {
			t.Errorf("record %s: renamed %v, error %v", files, renamed, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "a.csv")); err == nil {
			t.Errorf("record %s: a.csv was put in place", files)
		}
	}
}

// TestSetCommitFailureLeavesNoBackup: a rename that fails over an
// existing file leaves that file as it was and no backup beside it.
func TestSetCommitFailureLeavesNoBackup(t *testing.T) {
	dir := t.TempDir()
	names := []string{"a.csv", "b.csv"}
	for _, n := range names {
		os.WriteFile(filepath.Join(dir, n), []byte("old "+n), 0o644)
	}
	boom := errors.New("boom")
	rename = func(from, to string) error {
		if to == filepath.Join(dir, "b.csv") {
			return boom
		}
		return os.Rename(from, to)
	}
	defer func() { rename = os.Rename }()
	var s Set
	for _, n := range names {
		s.Add(filepath.Join(dir, n), func(w io.Writer) error { _, err := io.WriteString(w, "new "+n); return err })
	}
	if err := s.Commit(); !errors.Is(err, boom) {
		t.Fatalf("commit: %v, want the rename's error", err)
	}
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, names) {
		t.Errorf("files after the failed commit: %v, want %v", left, names)
	}
	for _, n := range names {
		if got, _ := os.ReadFile(filepath.Join(dir, n)); string(got) != "old "+n {
			t.Errorf("%s holds %q, want the old content", n, got)
		}
	}
}
