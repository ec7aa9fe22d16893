package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wcmc/experiment"
	"wcmc/runner"
)

// reproRun runs `wcmc args…` and returns the exit status, stdout and
// stderr.
func reproRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := execute(context.Background(), experiment.All(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// reproFigures parses an HTML report strictly as XML and returns, per
// element id, the number of <svg> elements inside that element.
func reproFigures(t *testing.T, doc []byte) map[string]int {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict = true
	var open []string // ids of the open elements ("" if none)
	svgs := map[string]int{}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("report.html does not parse: %v", err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			id := ""
			for _, a := range tk.Attr {
				if a.Name.Local == "id" {
					id = a.Value
					svgs[id] += 0
				}
			}
			if tk.Name.Local == "svg" {
				for _, o := range open {
					if o != "" {
						svgs[o]++
					}
				}
			}
			open = append(open, id)
		case xml.EndElement:
			open = open[:len(open)-1]
		}
	}
	if len(open) != 0 {
		t.Fatalf("report.html leaves %d elements open", len(open))
	}
	return svgs
}

// withoutGenerated drops the lines that carry the generation time.
func withoutGenerated(b []byte) string {
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, "Generated ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func TestReproduceQuickEndToEndAndReuse(t *testing.T) {
	dir := t.TempDir()
	args := []string{"reproduce", "--quick", "--only", "gauss-snr,gauss-blocks", "--out", dir}
	code, stdout, stderr := reproRun(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	md1, err := os.ReadFile(filepath.Join(dir, "REPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	html1, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	svgs := reproFigures(t, html1)
	for _, id := range []string{"gauss-snr", "gauss-blocks"} {
		spec, _ := experiment.Lookup(id)
		for _, m := range spec.Metrics {
			if n := svgs["fig-"+id+"-"+m]; n != 1 {
				t.Errorf("figure %s %s: %d inline <svg>", id, m, n)
			}
		}
	}
	if !strings.Contains(stdout, "**total**") || !strings.Contains(stdout, "REPORT.md") {
		t.Errorf("stdout:\n%s", stdout)
	}
	// Fig. 2 comes before Fig. 3 whatever the order of --only.
	if i, j := bytes.Index(md1, []byte("## Fig. 2")), bytes.Index(md1, []byte("## Fig. 3")); i < 0 || j < i {
		t.Error("sections are not in figure order")
	}

	// Same directory and seed: the stored results are reused and the
	// report is the same apart from its generation time.
	code, _, stderr = reproRun(t, args...)
	if code != 0 {
		t.Fatalf("rerun: exit %d\n%s", code, stderr)
	}
	if strings.Count(stderr, "reusing the results") != 2 || strings.Contains(stderr, "running") {
		t.Errorf("rerun did not reuse both experiments:\n%s", stderr)
	}
	md2, _ := os.ReadFile(filepath.Join(dir, "REPORT.md"))
	html2, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if withoutGenerated(md1) != withoutGenerated(md2) || withoutGenerated(html1) != withoutGenerated(html2) {
		t.Error("the rerun's report differs beyond its generation time")
	}

	// A lost figure is redrawn from the stored results, not recomputed.
	os.Remove(filepath.Join(dir, "gauss-snr.err2_fresh.svg"))
	code, _, stderr = reproRun(t, args...)
	if code != 0 || !strings.Contains(stderr, "redrawing the missing figures") {
		t.Errorf("missing figure: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "gauss-snr.err2_fresh.svg")); err != nil {
		t.Error(err)
	}

	// Another seed: the stored results do not match and are recomputed.
	code, _, stderr = reproRun(t, "reproduce", "--quick", "--only", "gauss-snr", "--out", dir, "--seed", "2")
	if code != 0 || !strings.Contains(stderr, "stored results differ") || !strings.Contains(stderr, "seed") {
		t.Errorf("other seed: exit %d\n%s", code, stderr)
	}
	md3, _ := os.ReadFile(filepath.Join(dir, "REPORT.md"))
	if !bytes.Contains(md3, []byte("seed 2")) {
		t.Error("the report does not state seed 2")
	}
}

func TestReproduceMissingMNISTData(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nothing-here")
	// Asked for explicitly, an MNIST experiment without data is an
	// experiment that could not run: non-zero exit, but still a report.
	code, _, stderr := reproRun(t, "reproduce", "--quick", "--only", "mnist-snr", "--out", dir, "--data-dir", missing)
	if code == 0 {
		t.Fatal("exit 0 for an experiment that could not run")
	}
	if !strings.Contains(stderr, "no MNIST data") || !strings.Contains(stderr, "could not run") {
		t.Errorf("stderr:\n%s", stderr)
	}
	md, err := os.ReadFile(filepath.Join(dir, "REPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(md, []byte("experiment not run: no MNIST data")) {
		t.Error("the report does not say why mnist-snr did not run")
	}
}

func TestMNISTSets(t *testing.T) {
	none := reproduceConfig{dataDir: filepath.Join(t.TempDir(), "absent")}
	if _, _, why, fatal := mnistSets(none, nil); why == "" || fatal {
		t.Errorf("absent default folder: why %q fatal %v; want a reason, not fatal", why, fatal)
	}
	none.dataSet = true
	if _, _, why, fatal := mnistSets(none, nil); why == "" || !fatal {
		t.Errorf("absent --data-dir: why %q fatal %v; want fatal", why, fatal)
	}

	dir := t.TempDir()
	for _, f := range []string{"t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"} {
		os.WriteFile(filepath.Join(dir, f), nil, 0o644)
	}
	cfg := reproduceConfig{dataDir: dir}
	sets, setting, why, _ := mnistSets(cfg, nil)
	if why != "" || strings.Join(sets, " ") != "data_dir="+dir+" split=t10k" || !strings.Contains(setting, "reduced") {
		t.Errorf("test files only: sets %v setting %q why %q", sets, setting, why)
	}
	os.WriteFile(filepath.Join(dir, "train-images-idx3-ubyte"), nil, 0o644)
	if sets, _, _, _ := mnistSets(cfg, nil); strings.Join(sets, " ") != "data_dir="+dir+" split=full" {
		t.Errorf("with training images: sets %v", sets)
	}
	if sets, _, _, _ := mnistSets(cfg, map[string]bool{"split": true}); strings.Join(sets, " ") != "data_dir="+dir {
		t.Errorf("--set split given: sets %v", sets)
	}
	if sets, _, why, _ := mnistSets(none, map[string]bool{"data_dir": true}); sets != nil || why != "" {
		t.Errorf("--set data_dir given: sets %v why %q", sets, why)
	}
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
	dir := t.TempDir()
	// Two documents in one run (--update-doc is repeatable).
	doc := filepath.Join(dir, "README.md")
	doc2 := filepath.Join(dir, "REPRODUCING.md")
	os.WriteFile(doc, []byte("# Title\n\nbefore\n"+docBegin+"\nold table\n"+docEnd+"\nafter\n"), 0o644)
	os.WriteFile(doc2, []byte(docBegin+"\nold\n"+docEnd+"\n"), 0o644)
	code, _, stderr := reproRun(t, "reproduce", "--quick", "--only", "gauss-blocks", "--out", dir, "--update-doc", doc, "--update-doc", doc2)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(doc)
	s := string(b)
	if strings.Contains(s, "old table") || !strings.Contains(s, "| Fig. 2 | gauss-blocks |") ||
		!strings.HasPrefix(s, "# Title\n\nbefore\n"+docBegin+"\n") || !strings.HasSuffix(s, docEnd+"\nafter\n") {
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

// An interrupted reproduce continues from its journal and ends with the
// results of an uninterrupted one; the journal of a run with other settings
// is discarded rather than blocking the run.
func TestReproduceResumesJournal(t *testing.T) {
	ref := t.TempDir()
	if code, _, stderr := reproRun(t, "reproduce", "--quick", "--only", "gauss-snr", "--out", ref); code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, stderr)
	}
	want, err := os.ReadFile(filepath.Join(ref, "gauss-snr.csv"))
	if err != nil {
		t.Fatal(err)
	}

	spec, _ := experiment.Lookup("gauss-snr")
	interrupt := func(dir string, seed uint64) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		opts := runner.Options{Seed: seed, Quick: true, Workers: 1, Dir: dir,
			OnTask: func(runner.TaskResult) error { cancel(); return nil }}
		if _, err := runner.Run(ctx, spec, opts); err == nil {
			t.Fatal("the cancelled run finished")
		}
		if _, err := os.Stat(runner.JournalPath(dir, spec.ID)); err != nil {
			t.Fatalf("no journal after the interruption: %v", err)
		}
	}

	dir := t.TempDir()
	interrupt(dir, 1)
	code, _, stderr := reproRun(t, "reproduce", "--quick", "--only", "gauss-snr", "--out", dir)
	if code != 0 || !strings.Contains(stderr, "resuming") {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "gauss-snr.csv")); !bytes.Equal(got, want) {
		t.Error("the resumed run's CSV differs from the uninterrupted one")
	}

	other := t.TempDir()
	interrupt(other, 7)
	code, _, stderr = reproRun(t, "reproduce", "--quick", "--only", "gauss-snr", "--out", other)
	if code != 0 || !strings.Contains(stderr, "discarding") {
		t.Fatalf("journal of another seed: exit %d\n%s", code, stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(other, "gauss-snr.csv")); !bytes.Equal(got, want) {
		t.Error("after discarding the other journal, the CSV differs from the reference")
	}
}
