package wcmc_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// libraryDoc holds the library example between its markers.
const libraryDoc = "docs/LIBRARY.md"

// TestLibraryFromAnotherModule builds the library example of libraryDoc
// (between its "library example" markers) as the main package of a
// separate module that requires this one through a replace directive, as
// libraryDoc tells users to, and runs it on the small CSV data set. The
// build works offline: the module's dependencies are those of this
// module, already in the module cache (GOPROXY=off).
func TestLibraryFromAnotherModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module (-short)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	doc, err := os.ReadFile(libraryDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := bytes.Cut(doc, []byte("<!-- BEGIN library example -->"))
	block, _, ok2 := bytes.Cut(rest, []byte("<!-- END library example -->"))
	code, ok3 := strings.CutPrefix(strings.TrimSpace(string(block)), "```go")
	code, ok4 := strings.CutSuffix(code, "```")
	if !ok || !ok2 || !ok3 || !ok4 {
		t.Fatal(libraryDoc + ": no ```go block between the library example markers")
	}
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.go", code)
	write("go.mod", "module example.com/mystudy\n\ngo 1.26\n\nrequire github.com/wcmc-project/wcmc v0.0.0\n\nreplace github.com/wcmc-project/wcmc => "+root+"\n")
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	write("go.sum", string(sum))
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(goBin, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("build", "-o", "study", ".")
	cmd := exec.Command(filepath.Join(dir, "study"), filepath.Join(root, "dataset", "testdata", "probit-small.csv"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("running the example: %v\n%s", err, out)
	}
	if want := "500 global samples of θ ∈ R^3"; !strings.Contains(string(out), want) {
		t.Errorf("the example printed %q, want %q", out, want)
	}
}
