package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteAllKeepsReplacedFilesOnFailure(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	os.WriteFile(a, []byte("old"), 0o644)
	// The second file cannot be renamed into place: a directory is in its way.
	os.MkdirAll(filepath.Join(b, "sub"), 0o755)
	text := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	if err := writeAll([]outFile{{a, text("new")}, {b, text("new")}}); err == nil {
		t.Fatal("the write succeeded")
	}
	if got, err := os.ReadFile(a); err != nil || string(got) != "old" {
		t.Errorf("a.json after the failed commit: %q, %v; want the old content", got, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d entries after the failed commit, want 2", len(entries))
	}
}
