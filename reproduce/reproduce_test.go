package reproduce

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/dataset"
	"github.com/wcmc-project/wcmc/experiment"
	"github.com/wcmc-project/wcmc/internal/mnisttest"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/journal"
)

// run runs a reproduction of cfg over the paper's experiments and returns
// its summary, progress log and error.
func run(t *testing.T, cfg Config) (*Summary, string, error) {
	t.Helper()
	var log bytes.Buffer
	sum, err := Run(context.Background(), experiment.All(), cfg, &log)
	return sum, log.String(), err
}

// quick is the configuration of a quick reproduction of ids into out.
func quick(out string, ids ...string) Config {
	return Config{Quick: true, Only: ids, Out: out, Seed: 1, DataDir: DefaultMNISTDir}
}

// reproFigures parses an HTML report strictly as XML and returns, per
// element id, the number of <svg> elements inside that element.
func figuresByID(t *testing.T, doc []byte) map[string]int {
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

func TestRunQuickEndToEndAndReuse(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a quick reproduction (-short)")
	}
	dir := t.TempDir()
	cfg := quick(dir, "gauss-snr", "gauss-blocks")
	sum, log, err := run(t, cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	md1, err := os.ReadFile(filepath.Join(dir, "REPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	html1, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	svgs := figuresByID(t, html1)
	for _, id := range []string{"gauss-snr", "gauss-blocks"} {
		spec, _ := experiment.Lookup(id)
		for _, m := range spec.Metrics {
			if n := svgs["fig-"+id+"-"+m]; n != 1 {
				t.Errorf("figure %s %s: %d inline <svg>", id, m, n)
			}
		}
	}
	if len(sum.Failed) != 0 || !slices.Contains(sum.Files, filepath.Join(dir, "REPORT.md")) || !slices.Contains(sum.Files, filepath.Join(dir, "claims.csv")) {
		t.Errorf("summary: failed %v, files %v", sum.Failed, sum.Files)
	}
	// Fig. 2 comes before Fig. 3 whatever the order of --only.
	if i, j := bytes.Index(md1, []byte("## Fig. 2")), bytes.Index(md1, []byte("## Fig. 3")); i < 0 || j < i {
		t.Error("sections are not in figure order")
	}

	// Same directory and seed: the stored results are reused and the
	// report is the same apart from its generation time.
	if _, log, err = run(t, cfg); err != nil {
		t.Fatalf("rerun: %v\n%s", err, log)
	}
	if strings.Count(log, "reusing the results") != 2 || strings.Contains(log, "running") {
		t.Errorf("rerun did not reuse both experiments:\n%s", log)
	}
	md2, _ := os.ReadFile(filepath.Join(dir, "REPORT.md"))
	html2, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if withoutGenerated(md1) != withoutGenerated(md2) || withoutGenerated(html1) != withoutGenerated(html2) {
		t.Error("the rerun's report differs beyond its generation time")
	}

	// A lost figure is redrawn from the stored results, not recomputed.
	os.Remove(filepath.Join(dir, "gauss-snr.err2_fresh.svg"))
	if _, log, err = run(t, cfg); err != nil || !strings.Contains(log, "redrawing the missing figures") {
		t.Errorf("missing figure: %v\n%s", err, log)
	}
	if _, err := os.Stat(filepath.Join(dir, "gauss-snr.err2_fresh.svg")); err != nil {
		t.Error(err)
	}

	// Another seed: the stored results do not match and are recomputed.
	other := quick(dir, "gauss-snr")
	other.Seed = 2
	if _, log, err = run(t, other); err != nil || !strings.Contains(log, "stored results differ") || !strings.Contains(log, "seed") {
		t.Errorf("other seed: %v\n%s", err, log)
	}
	md3, _ := os.ReadFile(filepath.Join(dir, "REPORT.md"))
	if !bytes.Contains(md3, []byte("seed 2")) {
		t.Error("the report does not state seed 2")
	}
}

func TestRunMissingMNISTData(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nothing-here")
	// Asked for explicitly, an MNIST experiment without data is an
	// experiment that could not run: non-zero exit, but still a report.
	cfg := quick(dir, "mnist-snr")
	cfg.DataDir, cfg.DataDirGiven = missing, true
	sum, log, err := run(t, cfg)
	if err == nil || !strings.Contains(err.Error(), "could not run") || sum == nil || !slices.Equal(sum.Failed, []string{"mnist-snr"}) {
		t.Fatalf("an experiment that could not run: error %v, summary %+v", err, sum)
	}
	if !strings.Contains(log, "no MNIST data") {
		t.Errorf("log:\n%s", log)
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
	// An IDX header: zero, zero, the type (0x08: unsigned bytes), the
	// number of dimensions, then each dimension as a big-endian uint32.
	header := func(dims ...int) []byte {
		b := []byte{0, 0, 0x08, byte(len(dims))}
		for _, d := range dims {
			b = binary.BigEndian.AppendUint32(b, uint32(d))
		}
		return b
	}
	digits := make([]byte, n)
	for i := range digits {
		digits[i] = byte(i % 3)
	}
	for path, data := range map[string][]byte{images: append(header(n, 2, 2), make([]byte, 4*n)...), labels: append(header(n), digits...)} {
		if err := os.WriteFile(filepath.Join(dir, path), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMNISTSets(t *testing.T) {
	cache := t.TempDir() // an empty Go module cache
	t.Setenv("GOMODCACHE", cache)
	none := Config{DataDir: filepath.Join(t.TempDir(), "absent")}
	if _, _, why, fatal := mnistSets(none, nil); !strings.Contains(why, dataset.GoMNISTDownload) || fatal {
		t.Errorf("absent default folder: why %q fatal %v; want the download command, not fatal", why, fatal)
	}
	none.DataDirGiven = true
	if _, _, why, fatal := mnistSets(none, nil); !strings.Contains(why, dataset.GoMNISTDownload) || !fatal {
		t.Errorf("absent --data-dir: why %q fatal %v; want the download command, fatal", why, fatal)
	}

	// The two t10k files: 10 test images, digits 0, 1, 2, 0, …: 4 zeros
	// and 3 ones, too few for t10k to hold any out (every 5th of a class).
	dir := t.TempDir()
	writeTinyIDX(t, dir, dataset.MNISTTestImages, dataset.MNISTTestLabels, 10)
	cfg := Config{DataDir: dir}
	sets, setting, why, _ := mnistSets(cfg, nil)
	if why != "" || strings.Join(sets, " ") != "data_dir="+dir+" split=t10k" || !strings.Contains(setting, "reduced") ||
		!strings.Contains(setting, "split t10k: N = 7 training and N_t = 0 held-out") {
		t.Errorf("test files only: sets %v setting %q why %q", sets, setting, why)
	}
	// All four: 12 training images (4 + 4 of digits 0 and 1).
	writeTinyIDX(t, dir, dataset.MNISTTrainImages, dataset.MNISTTrainLabels, 12)
	sets, setting, _, _ = mnistSets(cfg, nil)
	// The sets name the folder; the report's setting shows a folder
	// outside the working directory as a placeholder (ShownPath).
	if strings.Join(sets, " ") != "data_dir="+dir+" split=full" || setting != "MNIST data: "+MNISTPlaceholder+", split full: N = 8 training and N_t = 7 test digits (0 vs 1)" {
		t.Errorf("four files: sets %v, setting %q", sets, setting)
	}
	cfg.Sets = []string{"class_b=2"}
	if _, setting, _, _ := mnistSets(cfg, nil); !strings.Contains(setting, "N = 8 training and N_t = 7 test digits (0 vs 2)") {
		t.Errorf("class_b=2: setting %q", setting)
	}
	cfg.Sets = []string{"split=t10k"}
	if sets, setting, _, _ := mnistSets(cfg, map[string]bool{"split": true}); strings.Join(sets, " ") != "data_dir="+dir ||
		!strings.Contains(setting, "split t10k: N = 7") || strings.Contains(setting, "reduced") {
		t.Errorf("--set split given: sets %v, setting %q", sets, setting)
	}
	none.Sets = []string{"data_dir=" + dir}
	if sets, setting, why, _ := mnistSets(none, map[string]bool{"data_dir": true}); sets != nil || why != "" ||
		setting != "MNIST data: "+MNISTPlaceholder+" (as given by --set data_dir), split full: N = 8 training and N_t = 7 test digits (0 vs 1)" {
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
		sets, setting, why, fatal := mnistSets(Config{DataDir: c.dir, DataDirGiven: c.given}, nil)
		if strings.Join(sets, " ") != c.wantSets || why != "" || fatal {
			t.Errorf("--data-dir %s (given %v): sets %v, why %q; want %s", c.dir, c.given, sets, why, c.wantSets)
		}
		rel, _ := filepath.Rel(cache, gm)
		if !c.given && setting != "MNIST data: $GOMODCACHE/"+filepath.ToSlash(rel)+" (the Go module "+dataset.GoMNISTModule+"@"+dataset.GoMNISTVersion+
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
	mnisttest.Dir(t)
	sets, setting, why, _ := mnistSets(Config{DataDir: mnisttest.SharedDir}, nil)
	if why != "" || !strings.HasSuffix(strings.Join(sets, " "), " split=full") ||
		!strings.HasSuffix(setting, "split full: N = 12665 training and N_t = 2115 test digits (0 vs 1)") {
		t.Fatalf("sets %v, setting %q, why %q; want the full split with N = 12665 and N_t = 2115", sets, setting, why)
	}
	t.Log(setting)
}

// An interrupted reproduce continues from its journal and ends with the
// results of an uninterrupted one; the journal of a run with other settings
// is discarded rather than blocking the run.
func TestRunResumesJournal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a quick reproduction (-short)")
	}
	ref := t.TempDir()
	if _, log, err := run(t, quick(ref, "gauss-snr")); err != nil {
		t.Fatalf("reference run: %v\n%s", err, log)
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
		opts := journal.Options{Options: runner.Options{Seed: seed, Quick: true, Workers: 1, Sets: []string{"protocols=" + AllProtocols()},
			OnTask: func(runner.TaskResult) error { cancel(); return nil }}, Dir: dir}
		if _, err := journal.Run(ctx, spec, opts); err == nil {
			t.Fatal("the cancelled run finished")
		}
		if _, err := os.Stat(journal.Path(dir, spec.ID)); err != nil {
			t.Fatalf("no journal after the interruption: %v", err)
		}
	}

	for _, c := range []struct {
		seed      uint64
		say, what string
	}{
		{1, "resuming", "the resumed run"},
		{7, "discarding", "after discarding the journal of another seed, the run"},
	} {
		dir := t.TempDir()
		interrupt(dir, c.seed)
		if _, log, err := run(t, quick(dir, "gauss-snr")); err != nil || !strings.Contains(log, c.say) {
			t.Fatalf("seed %d: %v\n%s", c.seed, err, log)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "gauss-snr.csv")); !bytes.Equal(got, want) {
			t.Errorf("%s: the CSV differs from the uninterrupted one", c.what)
		}
	}
}

// A full-size reproduction runs every protocol except where the converged
// one is unaffordable, and says so in the settings; --quick runs them all,
// and --set protocols overrides the choice.
func TestPlanProtocols(t *testing.T) {
	for _, c := range []struct {
		quick   bool
		sets    []string
		want    string
		setting bool
	}{
		{false, nil, "paper,default", true},
		{true, nil, AllProtocols(), false},
		{false, []string{"protocols=converged"}, "converged", false},
	} {
		jobs, settings, err := plan(experiment.All(), Config{Only: []string{"probit-highdim", "probit-snr"}, Quick: c.quick, Sets: c.sets}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, j := range jobs {
			got[j.spec.ID] = j.plan.Values.String("protocols")
		}
		snr := AllProtocols()
		if len(c.sets) > 0 {
			snr = c.want
		}
		if got["probit-highdim"] != c.want || got["probit-snr"] != snr {
			t.Errorf("quick=%v sets=%v: protocols %v", c.quick, c.sets, got)
		}
		said := slices.ContainsFunc(settings, func(s string) bool {
			return strings.HasPrefix(s, "probit-highdim: converged protocol not run")
		})
		if said != c.setting {
			t.Errorf("quick=%v sets=%v: settings %q", c.quick, c.sets, settings)
		}
	}
}

// Results of another wcmc version are recomputed, unless that version is
// named with ReuseVersions: then they are reused, the report says so, and
// the files rewritten keep the version that computed them.
func TestReuseVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a quick reproduction (-short)")
	}
	dir := t.TempDir()
	cfg := quick(dir, "gauss-snr")
	if _, log, err := run(t, cfg); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	old := runner.Version
	runner.Version = old + "-later"
	defer func() { runner.Version = old }()

	reuse := cfg
	reuse.ReuseVersions = []string{old}
	reuse.RedrawFigures = true // rewrites the files from the stored results
	_, log, err := run(t, reuse)
	if err != nil || !strings.Contains(log, "reusing the results") {
		t.Fatalf("with --reuse-version %s: %v\n%s", old, err, log)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "REPORT.md"))
	// The settings name the version that computed the results and the one
	// that drew the report; the generation line says that this invocation
	// computed nothing.
	for _, want := range []string{"results: gauss-snr computed by wcmc " + old, "report drawn by wcmc " + runner.Version,
		"from the stored results of 1 experiment in ", "reading them and judging the claims: nothing was computed."} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("the report does not say %q:\n%s", want, md)
		}
	}
	js, _ := os.ReadFile(filepath.Join(dir, "gauss-snr.json"))
	if !bytes.Contains(js, []byte(`"version": "`+old+`"`)) {
		t.Errorf("gauss-snr.json no longer records the version that computed it")
	}
	if _, log, err = run(t, cfg); err != nil || !strings.Contains(log, "stored results differ") || !strings.Contains(log, "version") {
		t.Errorf("without --reuse-version: %v\n%s", err, log)
	}
}

// A spec that draws another's streams (runner.Spec.Streams) with the same
// settings is the same computation: reproduce shows the other's result
// under its own ID instead of computing it again, and computed on its own
// it gives the same numbers.
func TestSharedStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a quick reproduction (-short)")
	}
	base, err := experiment.Lookup("gauss-snr")
	if err != nil {
		t.Fatal(err)
	}
	view := base
	view.ID, view.Figure, view.Streams = "gauss-snr-view", "Fig. 3", "gauss-snr"
	specs := []runner.Spec{base, view}
	var log bytes.Buffer
	dir := t.TempDir()
	cfg := quick(dir, "gauss-snr", "gauss-snr-view")
	if _, err := Run(context.Background(), specs, cfg, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "gauss-snr-view: the results of gauss-snr") || strings.Count(log.String(), "running") != 1 {
		t.Errorf("the view was computed again:\n%s", log.String())
	}
	rows := func(dir, id string) string {
		b, err := os.ReadFile(filepath.Join(dir, id+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.ReplaceAll(string(b), id+",", "ID,")
	}
	if rows(dir, "gauss-snr") != rows(dir, "gauss-snr-view") {
		t.Error("the view's rows differ from the run it shows")
	}
	md, _ := os.ReadFile(filepath.Join(dir, "REPORT.md"))
	if !bytes.Contains(md, []byte("of wall time in all: the 1 experiment run, as recorded")) || !bytes.Contains(md, []byte("Not counted again: gauss-snr-view (the run of gauss-snr).")) {
		t.Error("the report's compute line counts the shared run twice or does not say so")
	}
	alone := t.TempDir()
	if _, err := Run(context.Background(), specs, quick(alone, "gauss-snr-view"), io.Discard); err != nil {
		t.Fatal(err)
	}
	if rows(alone, "gauss-snr-view") != rows(dir, "gauss-snr") {
		t.Error("computed on its own, the view gives other numbers than the run it shares streams with")
	}
}
