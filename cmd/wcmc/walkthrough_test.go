package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/internal/dgemm"
	"github.com/wcmc-project/wcmc/internal/machine"
)

// docBlock returns the body of the first fenced block (```lang) after
// the line after in text, the contents of walkthroughDoc.
func docBlock(t *testing.T, text, after, lang string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, after)
	if !ok {
		t.Fatalf("%s: no %q", walkthroughDoc, after)
	}
	_, rest, ok = strings.Cut(rest, "\n```"+lang+"\n")
	body, _, ok2 := strings.Cut(rest, "\n```")
	if !ok || !ok2 {
		t.Fatalf("%s: no ```%s block after %q", walkthroughDoc, lang, after)
	}
	return body
}

// walkthroughDoc holds the walkthrough of the protocol's steps, under
// "### Walkthrough", relative to the repository root.
const walkthroughDoc = "docs/OWN_DATA.md"

var (
	shAssign = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=(\S+)$`)
	shSeqFor = regexp.MustCompile(`^for ([a-z]+) in \$\(seq 1 (\S+)\); do$`)
)

// runWalkthrough runs the walkthrough's shell script, as far as it goes: comments,
// `go build`, VAR=value, `for v in $(seq 1 N); do … done` and ./wcmc
// commands (in process), with $VAR expanded and * globbed when the command
// runs. It returns the stdout of each wcmc command.
func runWalkthrough(t *testing.T, script string) []string {
	t.Helper()
	vars := map[string]string{}
	expand := func(s string) string { return os.Expand(s, func(k string) string { return vars[k] }) }
	var outs []string
	var exec func(lines []string)
	exec = func(lines []string) {
		for i := 0; i < len(lines); i++ {
			line := strings.TrimSpace(lines[i])
			switch m := shSeqFor.FindStringSubmatch(line); {
			case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "go build "):
			case m != nil:
				end := i + 1
				for end < len(lines) && strings.TrimSpace(lines[end]) != "done" {
					end++
				}
				if end == len(lines) {
					t.Fatalf("walkthrough: %q has no done", line)
				}
				n, err := strconv.Atoi(expand(m[2]))
				if err != nil {
					t.Fatalf("walkthrough: %q: %v", line, err)
				}
				for v := 1; v <= n; v++ {
					vars[m[1]] = strconv.Itoa(v)
					exec(lines[i+1 : end])
				}
				i = end
			case shAssign.MatchString(line):
				a := shAssign.FindStringSubmatch(line)
				vars[a[1]] = expand(a[2])
			case strings.HasPrefix(line, "./wcmc "):
				var args []string
				for _, f := range strings.Fields(expand(strings.TrimPrefix(line, "./wcmc "))) {
					if strings.Contains(f, "*") {
						matches, err := filepath.Glob(f)
						if err != nil || len(matches) == 0 {
							t.Fatalf("walkthrough: %s matches nothing (%v)", f, err)
						}
						args = append(args, matches...) // sorted, as the shell does
						continue
					}
					args = append(args, f)
				}
				outs = append(outs, mustRun(t, args...))
			default:
				t.Fatalf("walkthrough: a line this test cannot run: %q", line)
			}
		}
	}
	exec(strings.Split(strings.ReplaceAll(script, "\\\n", " "), "\n"))
	return outs
}

// TestOwnDataWalkthrough runs the walkthrough of walkthroughDoc as written —
// its commands, from the root of a checkout holding its data set — and
// checks that the last one prints what the document says it prints. The digits are
// those of package dgemm's arithmetic (the default build on amd64 CPUs with
// AVX2 and FMA, any number of cores); under other arithmetic the last
// digits move (docs/PERFORMANCE.md, "Same bits where") and only the
// commands are checked.
func TestOwnDataWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the walkthrough's samplers (-short)")
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", walkthroughDoc))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	script := docBlock(t, text, "### Walkthrough", "sh")
	want := docBlock(t, text, "The last command prints", "")
	data, err := os.ReadFile(stepsData)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "dataset", "testdata"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "dataset", "testdata", "probit-small.csv"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)

	outs := runWalkthrough(t, script)
	// partition, K samples, transmit, two aggregates, posterior, evaluate.
	if len(outs) != 10 {
		t.Fatalf("the walkthrough ran %d wcmc commands, want 10", len(outs))
	}
	got := strings.TrimSpace(outs[len(outs)-1])
	if arith := machine.Arithmetic(machine.Describe()); arith != dgemm.Name {
		t.Skipf("the document's digits are %s's; this build's arithmetic is %s, which moves the last digits; it printed:\n%s", dgemm.Name, arith, got)
	}
	if got != strings.TrimSpace(want) {
		t.Errorf("the walkthrough's last command printed\n%s\nthe document says it prints\n%s\n(update the block after %q)", got, want, "The last command prints")
	}
}
