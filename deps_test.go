package wcmc_test

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// allowedDirect is the library's dependency set: the modules go.mod may
// require directly, each with what uses it. A module a user's build pulls
// in is a deliberate choice; to add one, import it, run `go mod tidy`, and
// add its path here with the package that needs it. Modules that only a
// recipe or tool outside the library needs belong in a module of their own
// (as deploy/ is).
var allowedDirect = []string{
	"codeberg.org/go-pdf/fpdf", // figure: PDF output
	"github.com/google/pprof",  // internal/stageprof: profiles by stage
	"github.com/spf13/cobra",   // cmd/wcmc
	"github.com/spf13/pflag",   // cmd/wcmc
	"golang.org/x/image",       // figure: fonts
	"golang.org/x/sys",         // internal/dgemm, model, bench: CPU features
	"gonum.org/v1/gonum",       // numerics throughout
	"gonum.org/v1/netlib",      // internal/openblas (build tag openblas)
	"gonum.org/v1/plot",        // figure, runner/results
}

// requirements returns the module paths of a go.mod's require directives
// (single-line and blocks), split into direct and indirect ("// indirect").
func requirements(gomod string) (direct, indirect []string) {
	inBlock := false
	for line := range strings.Lines(gomod) {
		line = strings.TrimSpace(line)
		var req string
		switch {
		case inBlock && line == ")":
			inBlock = false
			continue
		case inBlock:
			req = line
		case line == "require (":
			inBlock = true
			continue
		case strings.HasPrefix(line, "require "):
			req = strings.TrimPrefix(line, "require ")
		default:
			continue
		}
		spec, comment, _ := strings.Cut(req, "//")
		fields := strings.Fields(spec)
		if len(fields) == 0 {
			continue
		}
		path := strings.Trim(fields[0], `"`)
		if strings.TrimSpace(comment) == "indirect" {
			indirect = append(indirect, path)
		} else {
			direct = append(direct, path)
		}
	}
	return direct, indirect
}

// TestDependencySet fails when go.mod's direct requirements differ from
// allowedDirect, or when any requirement is a Kubernetes module (those
// belong to deploy/go.mod).
func TestDependencySet(t *testing.T) {
	data, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	direct, indirect := requirements(string(data))
	if len(direct) == 0 {
		t.Fatal("go.mod: no direct requirement found; has its format changed?")
	}
	for _, m := range direct {
		if !slices.Contains(allowedDirect, m) {
			t.Errorf("go.mod requires %s, which is not in allowedDirect (deps_test.go): if the library needs it deliberately, add it there with the package that uses it; otherwise drop the import and run `go mod tidy`", m)
		}
	}
	for _, m := range allowedDirect {
		if !slices.Contains(direct, m) {
			t.Errorf("allowedDirect (deps_test.go) lists %s, which go.mod does not require directly: remove it from the list", m)
		}
	}
	for _, m := range append(direct, indirect...) {
		if strings.HasPrefix(m, "k8s.io/") || strings.Contains(m, ".k8s.io/") {
			t.Errorf("go.mod requires %s: the Kubernetes API modules are for deploy/'s test only and belong in deploy/go.mod", m)
		}
	}
}

// TestRequirements: both forms of the require directive are read, with
// comments, quotes and the indirect marker.
func TestRequirements(t *testing.T) {
	gomod := `module example.com/m

go 1.26.0

require example.com/single v1.0.0
require example.com/single/indirect v1.0.0 // indirect

require (
	example.com/a v1.2.3
	"example.com/quoted" v0.1.0 // a comment
	// a comment line

	example.com/b v0.0.0-20200101000000-abcdef012345 // indirect
)

replace example.com/a => ../a
`
	direct, indirect := requirements(gomod)
	if want := []string{"example.com/single", "example.com/a", "example.com/quoted"}; !slices.Equal(direct, want) {
		t.Errorf("direct %q, want %q", direct, want)
	}
	if want := []string{"example.com/single/indirect", "example.com/b"}; !slices.Equal(indirect, want) {
		t.Errorf("indirect %q, want %q", indirect, want)
	}
}
