package inferencedata

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteKeepsForeignContent: a zarr store holding groups or files that
// Write did not write, or one another tool wrote, is refused and left as
// it was; a store Write wrote is still replaced.
func TestWriteKeepsForeignContent(t *testing.T) {
	d := testData()
	for _, c := range []struct {
		name string
		add  func(store string) error
	}{
		{"foreign group", func(s string) error {
			if err := os.Mkdir(filepath.Join(s, "observed_data"), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(s, "observed_data", ".zgroup"), []byte(`{"zarr_format": 2}`), 0o644)
		}},
		{"foreign file", func(s string) error {
			return os.WriteFile(filepath.Join(s, "posterior", "theta", "notes.txt"), []byte("mine"), 0o644)
		}},
		{"another tool's store", func(s string) error {
			return os.WriteFile(filepath.Join(s, ".zattrs"), []byte("{}"), 0o644)
		}},
	} {
		store := filepath.Join(t.TempDir(), "s.zarr")
		if err := Write(store, d); err != nil {
			t.Fatal(err)
		}
		if err := c.add(store); err != nil {
			t.Fatal(err)
		}
		before := listTree(t, store)
		err := Write(store, d)
		if err == nil || !strings.Contains(err.Error(), "not overwriting it") {
			t.Errorf("%s: Write over it: %v", c.name, err)
		}
		if after := listTree(t, store); after != before {
			t.Errorf("%s: the store changed:\n%s\nnow\n%s", c.name, before, after)
		}
	}
}

// listTree lists the files under dir with their contents.
func listTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		b.WriteString(p + " " + string(data) + "\n")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
