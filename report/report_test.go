package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"html"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wcmc-project/wcmc/experiment"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/results"
)

var (
	sharedDir  string
	sharedRuns []Run
)

// TestMain runs gauss-snr and gauss-blocks once in their --quick form
// (well under a second each), writes their files to a temporary
// directory, and adds mnist-snr as not run.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "report-test")
	if err != nil {
		panic(err)
	}
	sharedDir = dir
	for _, id := range []string{"gauss-blocks", "gauss-snr"} {
		spec, err := experiment.Lookup(id)
		if err != nil {
			panic(err)
		}
		res, err := runner.Run(context.Background(), spec, runner.Options{Seed: 3, Quick: true})
		if err != nil {
			panic(err)
		}
		if _, _, err := results.WriteFiles(dir, res); err != nil {
			panic(err)
		}
		sharedRuns = append(sharedRuns, Run{Spec: spec, Result: res})
	}
	mn, err := experiment.Lookup("mnist-snr")
	if err != nil {
		panic(err)
	}
	sharedRuns = append(sharedRuns, Run{Spec: mn, NotRun: "no MNIST data <here> & there"})
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// quickRuns returns the shared runs and their directory.
func quickRuns(t *testing.T) (string, []Run) {
	t.Helper()
	return sharedDir, sharedRuns
}

var testMeta = Meta{Command: "wcmc reproduce --quick", Version: "test", Seed: 3, Quick: true,
	Settings:  []string{`odd <b>"setting"</b> & 'quotes'`},
	Generated: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), Wall: 1500 * time.Millisecond}

func render(t *testing.T, r *Report) (md, htm []byte) {
	t.Helper()
	var a, b bytes.Buffer
	if err := r.WriteMarkdown(&a); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	return a.Bytes(), b.Bytes()
}

// element is a parsed XML element.
type element struct {
	name     string
	attr     map[string]string
	children []*element
	text     strings.Builder
}

// parseXML parses a whole document strictly into a tree of elements.
func parseXML(t *testing.T, doc []byte) *element {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict = true
	root := &element{name: "#document"}
	stack := []*element{root}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("report.html is not well-formed: %v", err)
		}
		top := stack[len(stack)-1]
		switch tk := tok.(type) {
		case xml.StartElement:
			e := &element{name: tk.Name.Local, attr: map[string]string{}}
			for _, a := range tk.Attr {
				e.attr[a.Name.Local] = a.Value
			}
			top.children = append(top.children, e)
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			top.text.Write(tk)
		}
	}
	if len(stack) != 1 {
		t.Fatalf("unclosed elements: %d", len(stack)-1)
	}
	return root
}

func (e *element) walk(f func(*element)) {
	f(e)
	for _, c := range e.children {
		c.walk(f)
	}
}

func TestHTMLParsesAndHasEveryFigure(t *testing.T) {
	dir, runs := quickRuns(t)
	r := New(dir, testMeta, runs)
	_, htm := render(t, r)
	root := parseXML(t, htm)

	ids := map[string]*element{}
	var allText strings.Builder
	root.walk(func(e *element) {
		if id := e.attr["id"]; id != "" {
			if ids[id] != nil {
				t.Errorf("duplicate id %q", id)
			}
			ids[id] = e
		}
		switch e.name {
		case "script", "iframe", "object", "embed", "link", "img":
			t.Errorf("external or active element <%s>", e.name)
		}
		for k, v := range e.attr {
			if (k == "href" || k == "src") && !strings.HasPrefix(v, "#") {
				t.Errorf("<%s %s=%q> leaves the page", e.name, k, v)
			}
		}
		allText.WriteString(e.text.String())
	})
	for _, run := range runs {
		if run.Result == nil {
			if ids[sectionID(run.Spec.ID)] == nil {
				t.Errorf("no section for %s", run.Spec.ID)
			}
			continue
		}
		for _, m := range run.Spec.Metrics {
			fig := ids[figureID(run.Spec.ID, m)]
			if fig == nil {
				t.Errorf("no figure for %s %s", run.Spec.ID, m)
				continue
			}
			nsvg := 0
			fig.walk(func(e *element) {
				if e.name == "svg" {
					nsvg++
				}
			})
			if nsvg != 1 {
				t.Errorf("figure %s %s holds %d <svg> elements", run.Spec.ID, m, nsvg)
			}
		}
	}
	for _, s := range r.Sections {
		for _, c := range s.Claims {
			if ids[c.Claim.ID] == nil {
				t.Errorf("no element for claim %s", c.Claim.ID)
			}
		}
	}
	// Text round-trips through the escaping.
	for _, s := range []string{testMeta.Settings[0], "no MNIST data <here> & there"} {
		if !strings.Contains(allText.String(), s) {
			t.Errorf("the page does not show %q", s)
		}
	}
}

func TestMarkdown(t *testing.T) {
	dir, runs := quickRuns(t)
	r := New(dir, testMeta, runs)
	md, _ := render(t, r)
	text := string(md)
	for _, s := range r.Sections {
		for _, f := range s.Figures {
			if !strings.Contains(text, "]("+f.File+")") {
				t.Errorf("no link to %s", f.File)
			}
		}
		for _, c := range s.Claims {
			if !strings.Contains(text, "| ["+c.Claim.ID+"](#"+c.Claim.ID+") |") || !strings.Contains(text, "#### "+c.Claim.ID+"\n") {
				t.Errorf("claim %s missing from the table or the sections", c.Claim.ID)
			}
		}
	}
	// Every table row has as many cells as its header.
	var cols int
	for i, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "|") {
			cols = 0
			continue
		}
		n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|")
		if cols == 0 {
			cols = n
		} else if n != cols {
			t.Errorf("line %d has %d cell separators, its table %d: %s", i+1, n, cols, line)
		}
	}
	if !strings.Contains(text, r.totalsLine()) {
		t.Error("no totals line")
	}
}

func TestReportDeterministic(t *testing.T) {
	dir, runs := quickRuns(t)
	md1, h1 := render(t, New(dir, testMeta, runs))
	md2, h2 := render(t, New(dir, testMeta, runs))
	if !bytes.Equal(md1, md2) || !bytes.Equal(h1, h2) {
		t.Fatal("two renders of the same inputs differ")
	}
	later := testMeta
	later.Generated = later.Generated.Add(time.Hour)
	later.Wall = 42 * time.Second
	md3, h3 := render(t, New(dir, later, runs))
	for _, p := range [][2][]byte{{md1, md3}, {h1, h3}} {
		a, b := strings.Split(string(p[0]), "\n"), strings.Split(string(p[1]), "\n")
		if len(a) != len(b) {
			t.Fatalf("line counts differ: %d vs %d", len(a), len(b))
		}
		for i := range a {
			if a[i] != b[i] && !strings.Contains(a[i], "Generated ") {
				t.Errorf("line %d differs beyond the generation time:\n%s\n%s", i+1, a[i], b[i])
			}
		}
	}
}

func TestWrite(t *testing.T) {
	src, runs := quickRuns(t)
	dir := t.TempDir()
	files, err := Write(dir, New(src, testMeta, runs))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{MarkdownFile, HTMLFile, CSVFile} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
	if len(files) != 3 {
		t.Errorf("files %v", files)
	}
}

func TestInlineSVG(t *testing.T) {
	good := `<?xml version="1.0"?>
<!-- comment -->
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10">
<g><use xlink:href="#a"/><text>1 &lt; 2</text></g>
</svg>
`
	out, err := InlineSVG([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(out, []byte("<svg ")) || !bytes.HasSuffix(out, []byte("</svg>")) {
		t.Errorf("inlined: %q", out)
	}
	for name, doc := range map[string]string{
		"script":        `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`,
		"event":         `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>`,
		"external link": `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><image xlink:href="http://x/y.png"/></svg>`,
		"foreignObject": `<svg xmlns="http://www.w3.org/2000/svg"><foreignObject/></svg>`,
		"not svg":       `<html></html>`,
		"malformed":     `<svg><g></svg>`,
		"two roots":     `<svg></svg><svg></svg>`,
		"empty":         ``,
	} {
		if _, err := InlineSVG([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// A missing file is reported, not fatal.
	f := readFigure(filepath.Join(t.TempDir(), "none.svg"), "err2")
	if f.SVG != nil || f.Err == "" {
		t.Errorf("missing figure: %+v", f)
	}
}

func TestCountOfAgreesInNumber(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 experiments"}, {1, "1 experiment"}, {2, "2 experiments"}, {10, "10 experiments"}} {
		if got := countOf(c.n, "experiment"); got != c.want {
			t.Errorf("countOf(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// A summary cell whose mean lies outside its own 5–95% band (a few
// diverged trials carry it) is marked, and the caption says what the mark
// means; a cell with its mean inside the band is not.
func TestSkewedMeanMarked(t *testing.T) {
	g := summaryGrid{cell: map[string]map[int]results.SummaryRow{
		"sgld":      {0: {Mean: 7.9e25, Q05: 7.9, Q95: 2e23, N: 100}},
		"wvcmc-oma": {0: {Mean: 0.86, Q05: 0.47, Q95: 1.38, N: 100}},
		"low":       {0: {Mean: 0.1, Q05: 0.2, Q95: 0.3, N: 90}},
	}}
	for _, c := range []struct {
		scheme string
		want   string
		skewed bool
	}{
		{"sgld", "7.9e+25 [7.9, 2e+23] ‡", true},
		{"wvcmc-oma", "0.86 [0.47, 1.38]", false},
		{"low", "0.1 [0.2, 0.3] ‡ n=90", true},
		{"absent", "–", false},
	} {
		got, skewed := g.text(c.scheme, 0, 100)
		if got != c.want || skewed != c.skewed {
			t.Errorf("%s: cell %q (skewed %v), want %q (%v)", c.scheme, got, skewed, c.want, c.skewed)
		}
	}
	plain, marked := gridLayout{trials: 100}, gridLayout{trials: 100, skewed: true}
	if strings.Contains(plain.caption(), skewMark) {
		t.Errorf("caption without a marked cell explains the mark: %q", plain.caption())
	}
	if !strings.Contains(marked.caption(), skewMark+" : the mean lies outside its 5–95% band") {
		t.Errorf("caption with a marked cell does not explain the mark: %q", marked.caption())
	}
}

func TestWhereEachExperimentRanIsNamed(t *testing.T) {
	dir, runs := quickRuns(t)
	// with returns the runs with each computed result's sessions replaced
	// by sessions[i] (nil: stored before sessions were recorded).
	with := func(sessions ...[]runner.Session) []Run {
		out := slices.Clone(runs)
		for i, ss := range sessions {
			res := *out[i].Result
			res.Sessions = ss
			out[i].Result = &res
		}
		return out
	}
	one := func(machine string, workers int) []runner.Session {
		return []runner.Session{{Tasks: 12, Wall: 3 * time.Second, Machine: machine, Workers: workers}}
	}
	md, htm := render(t, New(dir, testMeta, with(one("CPU X, 2 CPUs", 2), one("CPU X, 2 CPUs", 2))))
	for _, doc := range []string{string(md), html.UnescapeString(string(htm))} {
		if n := strings.Count(doc, ", on CPU X, 2 CPUs, 2 workers."); n != 3 { // two experiments' facts and the compute line
			t.Errorf("the machine is named %d times, want 3 (each run and the total)", n)
		}
	}

	for _, c := range []struct {
		runs []Run
		want string
	}{
		{with(nil, nil), "as recorded when each was computed."},
		{with(one("", 2), one("", 1)), "as recorded when each was computed."},
		{with(one("A", 1), one("B", 1)), ", on 2 machines or settings (each experiment's section says which)."},
		{with(one("A", 1), one("A", 2)), ", on 2 machines or settings (each experiment's section says which)."},
		{with(one("A", 1), nil), ", on A, 1 worker and on machines not recorded (each experiment's section says which)."},
		{with(one("A", 1), one("B", 2)[:0]), ", on A, 1 worker and on machines not recorded (each experiment's section says which)."},
		{with(one("A", 1), one("", 2)), ", on A, 1 worker and on machines not recorded (each experiment's section says which)."},
		{with(one("A", 1), append(one("B", 0), one("", 1)...)), ", on 2 machines or settings and on machines not recorded (each experiment's section says which)."},
	} {
		if got := New(dir, testMeta, c.runs).computeLine(); !strings.HasSuffix(got, c.want) {
			t.Errorf("compute line %q\nwant it to end %q", got, c.want)
		}
	}

	at := time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC)
	res := &runner.Result{Sessions: []runner.Session{
		{Began: at, Tasks: 3, Wall: 5 * time.Minute, Machine: "A, 2 CPUs", Workers: 2},
		{Began: at.Add(time.Hour), Tasks: 1, Wall: 20 * time.Second},
		{Began: at.Add(2 * time.Hour), Tasks: 2, Wall: 2 * time.Minute, Machine: "A, 2 CPUs", Workers: 2},
		{Began: at.Add(3 * time.Hour), Tasks: 4, Wall: time.Minute, Machine: "B", Workers: 1},
		{Began: at.Add(4 * time.Hour), Tasks: 1, Wall: time.Minute, Machine: "A, 2 CPUs", Workers: 1},
	}}
	want := ", in 4 parts: 5 tasks in 7m0s on A, 2 CPUs, 2 workers; 1 task in 20.0 s on a machine not recorded; " +
		"4 tasks in 1m0s on B, 1 worker; 1 task in 1m0s on A, 2 CPUs, 1 worker"
	if got := computedOn(res); got != want {
		t.Errorf("computedOn = %q\nwant         %q", got, want)
	}
	for _, c := range []struct {
		sessions []runner.Session
		want     string
	}{
		{nil, ""}, // stored before sessions were recorded
		{[]runner.Session{{Tasks: 2, Workers: 2}}, ""},
		{[]runner.Session{{Tasks: 2, Machine: "B"}, {Tasks: 1, Machine: "B"}}, ", on B"},
		{[]runner.Session{{Tasks: 2, Machine: "B", Workers: 2}, {Tasks: 1, Machine: "B", Workers: 2}}, ", on B, 2 workers"},
	} {
		if got := computedOn(&runner.Result{Sessions: c.sessions}); got != c.want {
			t.Errorf("computedOn(%+v) = %q, want %q", c.sessions, got, c.want)
		}
	}
}

func TestMixedArithmeticIsSaid(t *testing.T) {
	zen := runner.Session{Tasks: 4, Machine: "AMD EPYC, 2 CPUs, linux/amd64, BLAS wcmc dgemm, AVX-512 (12×16)"}
	intel := runner.Session{Tasks: 2, Machine: "Intel Xeon, 2 CPUs, linux/amd64, BLAS wcmc dgemm, AVX2 (6×8)"}
	arm := runner.Session{Tasks: 1, Machine: "CPU model not reported, 4 CPUs, linux/arm64, BLAS gonum"}
	ob := runner.Session{Tasks: 1, Machine: "Intel Xeon, 2 CPUs, linux/amd64, BLAS OpenBLAS 0.3.21 (cgo), SkylakeX kernels, 1 thread"}
	for _, c := range []struct {
		sessions []runner.Session
		want     string // "" or the start of the sentence
	}{
		{nil, ""},
		{[]runner.Session{zen}, ""},
		{[]runner.Session{zen, intel, zen}, ""}, // dgemm's kernels give the same bits
		{[]runner.Session{zen, {Tasks: 3}}, ""}, // a machine not recorded says nothing
		{[]runner.Session{zen, arm, intel}, "computed with different arithmetic (wcmc dgemm; gonum, linux/arm64): "},
		{[]runner.Session{ob, zen}, "computed with different arithmetic (OpenBLAS 0.3.21 (cgo), SkylakeX kernels, 1 thread, linux/amd64; wcmc dgemm): "},
		{[]runner.Session{arm, {Tasks: 1, Machine: "Old x86, 2 CPUs, linux/amd64, BLAS gonum"}}, "computed with different arithmetic (gonum, linux/arm64; gonum, linux/amd64): "},
	} {
		got := MixedArithmetic(&runner.Result{Sessions: c.sessions})
		if c.want == "" && got != "" || !strings.HasPrefix(got, c.want) {
			t.Errorf("MixedArithmetic(%v) = %q, want it to begin %q", c.sessions, got, c.want)
		}
	}

	dir, runs := quickRuns(t)
	res := *runs[0].Result
	res.Sessions = []runner.Session{zen, arm}
	runs = slices.Clone(runs)
	runs[0].Result = &res
	md, htm := render(t, New(dir, testMeta, runs))
	for _, doc := range []string{string(md), html.UnescapeString(string(htm))} {
		if !strings.Contains(doc, "Computed with different arithmetic (wcmc dgemm; gonum, linux/arm64)") {
			t.Errorf("the report does not say that %s mixed arithmetic", res.Spec.ID)
		}
	}
}

// The report's three files are written all or nothing: with claims.csv a
// symbolic link, Write refuses and leaves REPORT.md and report.html as
// they were.
func TestWriteAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	old := []byte("old report\n")
	for _, f := range []string{MarkdownFile, HTMLFile} {
		if err := os.WriteFile(filepath.Join(dir, f), old, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outside := filepath.Join(t.TempDir(), "outside.csv")
	if err := os.WriteFile(outside, old, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, CSVFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, &Report{Meta: testMeta}); err == nil {
		t.Fatal("Write through a symbolic link succeeded")
	}
	for _, f := range []string{MarkdownFile, HTMLFile} {
		if b, _ := os.ReadFile(filepath.Join(dir, f)); string(b) != string(old) {
			t.Errorf("%s was replaced: %q", f, b)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != string(old) {
		t.Errorf("the file outside was written: %q", b)
	}
}
