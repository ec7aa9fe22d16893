package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// root is the module root, two levels above this package.
var root = filepath.Join("..", "..")

// TestDocMatchesGraph fails while docs/ARCHITECTURE.md is out of date:
// its generated package graph differs from the packages' imports, or its
// package list misses a package or names one that does not exist.
func TestDocMatchesGraph(t *testing.T) {
	pkgs, err := Graph(root)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, Doc))
	if err != nil {
		t.Fatal(err)
	}
	updated, problems, err := Check(doc, pkgs)
	if err != nil {
		t.Fatal(err)
	}
	if string(updated) != string(doc) {
		t.Errorf("the package graph in %s is out of date; run `go run ./internal/archdoc` at the module root", Doc)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestGraph checks the two rules of the graph that imports alone could
// break: the sweep engine (runner) depends on no plotting, not even
// through another package, and only the command imports cobra.
func TestGraph(t *testing.T) {
	pkgs, err := Graph(root)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]Package{}
	for _, p := range pkgs {
		byPath[p.Path] = p
	}
	if _, ok := byPath["wcmc/runner"]; !ok {
		t.Fatalf("no wcmc/runner among %d packages", len(pkgs))
	}
	deps := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		for _, imp := range byPath[p].Imports {
			if !deps[imp] {
				deps[imp] = true
				walk(imp)
			}
		}
	}
	walk("wcmc/runner")
	for d := range deps {
		if d == "wcmc/figure" || slices.ContainsFunc(byPath[d].Others, func(o string) bool { return strings.HasPrefix(o, "gonum.org/v1/plot") }) {
			t.Errorf("the sweep engine depends on plotting through %s", d)
		}
	}
	for _, p := range pkgs {
		if p.Name != "main" && slices.ContainsFunc(p.Others, func(o string) bool { return strings.HasPrefix(o, "github.com/spf13/") }) {
			t.Errorf("library package %s imports cobra or pflag; only commands parse flags", p.Path)
		}
	}
}

// TestCheckNamesProblems: a package missing from the hand-written list and
// a listed package that does not exist are both named.
func TestCheckNamesProblems(t *testing.T) {
	pkgs := []Package{{Path: "m/a"}, {Path: "m/b", Imports: []string{"m/a"}, Layer: 1}}
	doc := "- `m/a` — a\n- `m/gone` — gone\n" + BeginMarker + "\nold\n" + EndMarker + "\n"
	updated, problems, err := Check([]byte(doc), pkgs)
	if err != nil {
		t.Fatal(err)
	}
	want := "- `m/a` — a\n- `m/gone` — gone\n" + BeginMarker + "\n" + Generated(pkgs) + EndMarker + "\n"
	if string(updated) != want {
		t.Errorf("updated:\n%s\nwant:\n%s", updated, want)
	}
	if len(problems) != 2 || !strings.Contains(problems[0], "m/b") || !strings.Contains(problems[1], "m/gone") {
		t.Errorf("problems %q", problems)
	}
	if !strings.Contains(Generated(pkgs), "| 1 | `m/b` | `m/a` |") {
		t.Errorf("generated:\n%s", Generated(pkgs))
	}
	if _, _, err := Check([]byte("no markers"), pkgs); err == nil {
		t.Error("a document without markers accepted")
	}
}

// TestGraphSkipsNestedModules: a directory with its own go.mod is another
// module, whose packages are not the root module's.
func TestGraphSkipsNestedModules(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module m\n")
	write("a/a.go", "package a\n")
	write("sub/go.mod", "module m/sub\n")
	write("sub/s.go", "package sub\n")
	write("sub/inner/i.go", "package inner\n")
	pkgs, err := Graph(dir)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, p := range pkgs {
		paths = append(paths, p.Path)
	}
	if !slices.Equal(paths, []string{"wcmc/a"}) {
		t.Errorf("packages %q, want only wcmc/a", paths)
	}
}
