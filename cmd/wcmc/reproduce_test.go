package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/experiment"
	"github.com/wcmc-project/wcmc/reproduce"
)

// reproRun runs `wcmc args…` and returns the exit status, stdout and
// stderr.
func reproRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := execute(context.Background(), experiment.All(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestReproduceBadFlags(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--only", "gauss-snr", "--set", "nosuch=1"}, `no selected experiment has a parameter "nosuch"`},
		{[]string{"--only", "gauss-snr", "--set", "data_dir=x"}, `"data_dir"`},
		{[]string{"--only", "gauss-snrr"}, "unknown experiment"},
		{[]string{"--only", "gauss-snr", "--trials", "0"}, "--trials must be ≥ 1"},
		{[]string{"--only", "gauss-snr", "--set", "snr_db=abc"}, "snr_db"},
	} {
		code, _, stderr := reproRun(t, append([]string{"reproduce", "--quick", "--out", dir}, c.args...)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error naming %s", c.args, code, stderr, c.want)
		}
	}
}

func TestReproduceUpdateDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a quick reproduction (-short)")
	}
	dir := t.TempDir()
	// Two documents in one run (--update-doc is repeatable).
	doc := filepath.Join(dir, "README.md")
	doc2 := filepath.Join(dir, "REPRODUCING.md")
	os.WriteFile(doc, []byte("# Title\n\nbefore\n"+reproduce.DocBegin+"\nold table\n"+reproduce.DocEnd+"\nafter\n"), 0o644)
	os.WriteFile(doc2, []byte(reproduce.DocBegin+"\nold\n"+reproduce.DocEnd+"\n"), 0o644)
	code, stdout, stderr := reproRun(t, "reproduce", "--quick", "--only", "gauss-blocks", "--out", dir, "--update-doc", doc, "--update-doc", doc2)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// The command prints the verdict table and the files written.
	if !strings.Contains(stdout, "**total**") || !strings.Contains(stdout, "wrote:\n  "+filepath.Join(dir, "REPORT.md")) || !strings.Contains(stdout, "  "+doc2+"\n") {
		t.Errorf("stdout:\n%s", stdout)
	}
	b, _ := os.ReadFile(doc)
	s := string(b)
	// One column of verdict counts per protocol, from the report's code.
	if !strings.Contains(s, "| Figure | Experiment | Claims | paper (hold/fail/inc./n.e.) | converged (hold/fail/inc./n.e.) | default (hold/fail/inc./n.e.) |") {
		t.Errorf("the updated doc has no per-protocol verdict columns:\n%s", s)
	}
	if strings.Contains(s, "old table") || !strings.Contains(s, "| Fig. 2 | gauss-blocks |") ||
		!strings.HasPrefix(s, "# Title\n\nbefore\n"+reproduce.DocBegin+"\n") || !strings.HasSuffix(s, reproduce.DocEnd+"\nafter\n") {
		t.Errorf("updated doc:\n%s", s)
	}
	if b2, _ := os.ReadFile(doc2); strings.Contains(string(b2), "\nold\n") || !strings.Contains(string(b2), "| Fig. 2 | gauss-blocks |") {
		t.Errorf("second doc:\n%s", b2)
	}
	// A document without markers is refused before anything runs.
	os.WriteFile(doc, []byte("no markers\n"), 0o644)
	fresh := t.TempDir()
	if code, _, stderr := reproRun(t, "reproduce", "--quick", "--only", "gauss-blocks", "--out", fresh, "--update-doc", doc); code == 0 || !strings.Contains(stderr, "markers") {
		t.Errorf("doc without markers: exit %d, %s", code, stderr)
	}
	if entries, _ := os.ReadDir(fresh); len(entries) != 0 {
		t.Errorf("a refused --update-doc still ran: %d files in --out", len(entries))
	}
}

// TestReproduceCommandLineKeepsEveryFlag: the command a stopped reproduce
// prints to resume it repeats every flag given, --profile and --workers
// included (a resume without --profile would stop profiling).
func TestReproduceCommandLineKeepsEveryFlag(t *testing.T) {
	cmd := newReproduceCmd(nil)
	args := []string{"--out", "o", "--only", "gauss-snr", "--seed", "7", "--trials", "3", "--set", "snr_db=5",
		"--data-dir", "m", "--reuse-version", "v1", "--workers", "1", "--max-rhat", "1.05", "--min-ess", "50",
		"--update-doc", "README.md", "--profile", "p"}
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	cfg := reproduce.Config{Out: "o", Only: []string{"gauss-snr"}, Seed: 7, Trials: 3, Sets: []string{"snr_db=5"},
		DataDir: "m", ReuseVersions: []string{"v1"}, Workers: 1, UpdateDoc: []string{"README.md"}, Profile: "p"}
	got := strings.Fields(reproduceCommandLine(cmd, cfg, nil))
	if len(got) < 2 || got[0] != "wcmc" || got[1] != "reproduce" {
		t.Fatalf("command line %q", got)
	}
	// The same flags, in any order.
	pairs := func(words []string) []string {
		var p []string
		for i := 0; i+1 < len(words); i += 2 {
			p = append(p, words[i]+" "+words[i+1])
		}
		slices.Sort(p)
		return p
	}
	if g, w := pairs(got[2:]), pairs(args); !slices.Equal(g, w) {
		t.Errorf("command line has flags\n%q\nwant\n%q", g, w)
	}
}

// TestReportLinesAreTrue: the report's command line names no directory of
// this machine (an --out outside the working directory is OUT_DIR), its
// generation line says what its wall time was spent on — computing the
// results, or only drawing the report from stored ones — and its compute
// line is the results' own computing time either way.
func TestReportLinesAreTrue(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a quick reproduction (-short)")
	}
	out := t.TempDir() // outside the working directory
	read := func() string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(out, "REPORT.md"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, c := range []struct {
		what string
		want []string
	}{
		{"computed", []string{"; this invocation took ", " of wall time, computing the results of 1 experiment."}},
		{"reused", []string{" from the stored results of 1 experiment in ", " of wall time, reading them and judging the claims: nothing was computed."}},
	} {
		if code, _, stderr := reproRun(t, "reproduce", "--quick", "--only", "gauss-blocks", "--out", out); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.what, code, stderr)
		}
		md := read()
		if strings.Contains(md, out) {
			t.Errorf("%s: the report names the output directory %s", c.what, out)
		}
		if !strings.Contains(md, "Command: `wcmc reproduce --quick --only gauss-blocks --out "+reproduce.OutPlaceholder+"`") {
			t.Errorf("%s: no command line with --out %s in\n%s", c.what, reproduce.OutPlaceholder, md)
		}
		want := append(c.want, "Computing the results took ", " of wall time in all: the 1 experiment run, as recorded when each was computed")
		for _, w := range want {
			if !strings.Contains(md, w) {
				t.Errorf("%s: the report does not say %q", c.what, w)
			}
		}
	}
}

// TestProfileNamesNoMachinePath: PROFILE.md states the command line as the
// report does, with an --out and a --profile outside the working directory
// shown as their placeholders and neither directory named.
func TestProfileNamesNoMachinePath(t *testing.T) {
	out, prof := t.TempDir(), t.TempDir() // outside the working directory
	if code, _, stderr := reproRun(t, "reproduce", "--quick", "--only", "gauss-snr", "--out", out, "--profile", prof); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(prof, "PROFILE.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, dir := range []string{out, prof} {
		if strings.Contains(md, dir) {
			t.Errorf("PROFILE.md names the directory %s:\n%s", dir, md)
		}
	}
	want := "`wcmc reproduce --quick --only gauss-snr --out " + reproduce.OutPlaceholder + " --profile " + reproduce.ProfilePlaceholder + "`"
	if !strings.Contains(md, want) {
		t.Errorf("PROFILE.md lacks the command line %s:\n%s", want, md)
	}
}
