package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/wcmc-project/wcmc/runner"
)

// --version and `wcmc version` both name the version recorded in results;
// a build that recorded no commit says so and how to record it.
func TestVersionFlag(t *testing.T) {
	code, out, _ := runCLI(t, "--version")
	if code != 0 || out != versionLine()+"\n" || !strings.HasPrefix(out, "wcmc "+runner.Version+" ") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	code, out, _ = runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(out, versionLine()+"\n") || !strings.Contains(out, "commit:") || !strings.Contains(out, paperURL) {
		t.Errorf("version: exit %d, %q", code, out)
	}
	if b := readBuildInfo(); !b.stamped && !strings.Contains(out, "-buildvcs=true") {
		t.Errorf("a build without its commit does not say how to record it:\n%s", out)
	}
}

// A mistyped flag gets the closest flags of its command.
func TestFlagSuggestions(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "toy", "--quik"}, "unknown flag: --quik; did you mean --quick?"},
		{[]string{"run", "toy", "--trails", "3"}, "did you mean --trials?"},
		{[]string{"reproduce", "--onyl", "toy"}, "did you mean --only?"},
		{[]string{"run", "toy", "--qiuet"}, "did you mean --quiet?"}, // an inherited flag
		{[]string{"list", "--zzzzzz"}, "unknown flag: --zzzzzz\n(see 'wcmc list --help'"},
	} {
		code, _, errOut := runCLI(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", c.args, code, errOut, c.want)
		}
	}
}

// The former upper-case flags still work, as hidden aliases of their new
// names.
func TestRenamedFlags(t *testing.T) {
	cmd := newRootCmd(toySpecs(), &bytes.Buffer{}, &bytes.Buffer{})
	for old, name := range renamed {
		found := false
		for _, c := range cmd.Commands() {
			if f := c.Flags().Lookup(name); f != nil {
				found = true
				if c.Flags().Lookup(old) != f {
					t.Errorf("%s: --%s is not an alias of --%s", c.Name(), old, name)
				}
			}
			c.Flags().VisitAll(func(f *pflag.Flag) {
				if f.Name == old {
					t.Errorf("%s: flag --%s is still listed under its old name", c.Name(), old)
				}
			})
		}
		if !found {
			t.Errorf("no command has --%s", name)
		}
	}
	sample, _, err := cmd.Find([]string{"sample"})
	if err != nil {
		t.Fatal(err)
	}
	if err := sample.ParseFlags([]string{"--K", "7", "--S", "30"}); err != nil {
		t.Fatal(err)
	}
	if k, _ := sample.Flags().GetInt("num-workers"); k != 7 || !sample.Flags().Changed("K") {
		t.Errorf("--K 7 gave --num-workers %d", k)
	}
	if s, _ := sample.Flags().GetInt("samples"); s != 30 {
		t.Errorf("--S 30 gave --samples %d", s)
	}
}

// --quiet silences progress and notes; results and errors still print.
func TestQuiet(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "run", "toy", "--out", dir, "--quiet")
	if code != 0 || errOut != "" || !strings.Contains(out, "wrote:") {
		t.Errorf("--quiet: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, _, errOut = runCLI(t, "run", "toy", "--out", t.TempDir())
	if code != 0 || !strings.Contains(errOut, "note: late not applicable") {
		t.Errorf("without --quiet: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "run", "toi", "-q"); code == 0 || !strings.Contains(errOut, "unknown experiment") {
		t.Errorf("-q hides the error: %q", errOut)
	}
}

// stderr that is not a terminal gets plain lines, never control
// characters; a terminal gets a statusWriter.
func TestProgressNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	if w := progressWriter(&buf); w != &buf {
		t.Errorf("a buffer got %T", w)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if w := progressWriter(f); w != f {
		t.Errorf("a regular file got %T", w)
	}
	code, _, errOut := runCLI(t, "run", "toy", "--out", t.TempDir())
	if code != 0 || strings.ContainsAny(errOut, "\r\x1b") || !strings.Contains(errOut, "toy: 12 tasks done in") {
		t.Errorf("stderr %q", errOut)
	}
}

// The status writer keeps its line at the bottom: text written goes above
// it, and the line is cut to the terminal's width.
func TestStatusWriter(t *testing.T) {
	var buf bytes.Buffer
	s := &statusWriter{w: &buf, width: 20}
	s.Status("toy ███░░ 3/5")
	s.Write([]byte("note: hello\n"))
	s.Status(strings.Repeat("x", 40))
	s.Status("")
	want := clear + "toy ███░░ 3/5" + clear + "note: hello\n" + "toy ███░░ 3/5" + clear + strings.Repeat("x", 18) + "…" + clear
	if got := buf.String(); got != want {
		t.Errorf("output\n%q\nwant\n%q", got, want)
	}
}

// `wcmc list` follows the paper's figures, not the alphabet.
func TestListFigureOrder(t *testing.T) {
	specs := toySpecs()
	specs[0].ID, specs[0].Figure = "zeta", "Fig. 10"
	specs[1].ID, specs[1].Figure = "alpha", "Fig. 9"
	var out bytes.Buffer
	if code := execute(t.Context(), specs, []string{"list"}, &out, &bytes.Buffer{}); code != 0 {
		t.Fatal(code)
	}
	if !strings.HasPrefix(out.String(), "alpha ") || !strings.Contains(out.String(), "\nzeta ") {
		t.Errorf("list:\n%s", out.String())
	}
}

// Completion offers --set names, then the named parameter's values.
func TestCompleteSets(t *testing.T) {
	complete := func(args ...string) []string {
		var out bytes.Buffer
		execute(t.Context(), toySpecs(), append([]string{"__complete"}, args...), &out, &bytes.Buffer{})
		var lines []string
		for _, l := range strings.Split(out.String(), "\n") {
			if l != "" && !strings.HasPrefix(l, ":") {
				v, _, _ := strings.Cut(l, "\t")
				lines = append(lines, v)
			}
		}
		return lines
	}
	if got := complete("run", "toy", "--set", ""); !slices.Equal(got, []string{"x=", "k=", "mode="}) {
		t.Errorf("names: %q", got)
	}
	if got := complete("run", "toy", "--set", "mode="); !slices.Equal(got, []string{"mode=a", "mode=b"}) {
		t.Errorf("choices: %q", got)
	}
	if got := complete("run", "toy", "--set", "k="); !slices.Equal(got, []string{"k=2"}) {
		t.Errorf("default: %q", got)
	}
	if got := complete("run", "toy", "--band", ""); !slices.Equal(got, []string{"ci", "spread"}) {
		t.Errorf("--band: %q", got)
	}
	if got := complete("reproduce", "--only", "toy,"); !slices.Equal(got, []string{"toy,toy-long-name"}) {
		t.Errorf("--only: %q", got)
	}
}
