package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchCommand checks that `wcmc bench` is registered with its flags
// and reports an unusable output directory before measuring anything.
func TestBenchCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := execute(context.Background(), nil, []string{"bench", "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("bench --help: exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"--out", "--quick", "bench.md", "scaling.png"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	code := execute(context.Background(), nil, []string{"bench", "--quick", "--out", filepath.Join(file, "sub")}, &stdout, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "output directory") {
		t.Errorf("bench into a file: exit %d, stderr %q", code, stderr.String())
	}
}
