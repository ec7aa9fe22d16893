package atomicfile

import (
	"errors"
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
