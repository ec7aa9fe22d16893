package reproduce

import (
	"path/filepath"
	"runtime"
	"testing"
)

// TestShownPath: a report names no directory of the machine it was made
// on outside the checkout: relative paths stay as typed, absolute ones in
// the working directory or beside it become relative, any other becomes
// the placeholder.
func TestShownPath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix paths")
	}
	wd := filepath.FromSlash("/home/u/wcmc")
	for _, c := range []struct{ path, want string }{
		{"", ""},
		{"results/reproduce", "results/reproduce"},
		{"./results//x/", "results/x"},
		{"../shared/data/mnist", "../shared/data/mnist"},
		{"/home/u/wcmc", "."},
		{"/home/u/wcmc/docs/full-run", "docs/full-run"},
		{"/home/u/fullrun-out", "../fullrun-out"},
		{"/home/u/shared/data/mnist", "../shared/data/mnist"},
		{"/home/u", "P"},
		{"/home/other/out", "P"},
		{"/tmp/out", "P"},
		{"/home/u/wcmc/../x/../../y", "P"}, // /home/y
	} {
		if got := ShownPath(filepath.FromSlash(c.path), wd, "P"); got != c.want {
			t.Errorf("ShownPath(%q) = %q, want %q", c.path, got, c.want)
		}
	}
	if got := ShownPath(filepath.FromSlash("/home/u/wcmc/x"), "", "P"); got != "P" {
		t.Errorf("without a working directory: %q, want the placeholder", got)
	}
	cache := filepath.FromSlash("/root/go/pkg/mod")
	gm := filepath.Join(cache, "github.com", "petar", "!go!m!n!i!s!t@v0", "data")
	if got := shownMNISTDir(gm, cache); got != "$GOMODCACHE/github.com/petar/!go!m!n!i!s!t@v0/data" {
		t.Errorf("the module cache's MNIST folder is shown as %q", got)
	}
	if got := shownMNISTDir(filepath.FromSlash("/data/mnist"), cache); got != MNISTPlaceholder {
		t.Errorf("an MNIST folder outside the checkout is shown as %q, want %q", got, MNISTPlaceholder)
	}
}
