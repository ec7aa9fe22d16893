package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/xml"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"wcmc/claims"
	"wcmc/experiment"
	"wcmc/runner"
	"wcmc/scheme"
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
		if _, _, err := runner.WriteFiles(dir, res); err != nil {
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

func TestNewEvaluatesClaims(t *testing.T) {
	dir, runs := quickRuns(t)
	r := New(dir, testMeta, runs)
	want := 0
	for _, run := range runs {
		want += len(claims.For(run.Spec.ID))
	}
	if r.NumClaims() != want {
		t.Errorf("%d claims, want %d", r.NumClaims(), want)
	}
	// Every claim is judged under its two protocols.
	total := 0
	for _, p := range scheme.Protocols {
		total += r.Totals().Judged(p)
	}
	if total != 2*want {
		t.Errorf("totals add up to %d, want %d", total, 2*want)
	}
	for _, s := range r.Sections {
		for _, c := range s.Claims {
			if len(c.Outcomes) != len(c.Claim.Protocols()) {
				t.Errorf("%s: %d outcomes for protocols %v", c.Claim.ID, len(c.Outcomes), c.Claim.Protocols())
			}
			for i, o := range c.Outcomes {
				if o.Protocol != c.Claim.Protocols()[i] {
					t.Errorf("%s: outcome %d under %s, want %s", c.Claim.ID, i, o.Protocol, c.Claim.Protocols()[i])
				}
			}
		}
		if s.Result == nil {
			for _, c := range s.Claims {
				for _, o := range c.Outcomes {
					if o.Verdict != claims.NotEvaluated || !strings.Contains(o.Reason, "experiment not run") {
						t.Errorf("%s of a run that did not happen: %v %q", c.Claim.ID, o.Verdict, o.Reason)
					}
				}
			}
			continue
		}
		if len(s.Figures) != len(s.Spec.Metrics) {
			t.Errorf("%s: %d figures, want %d", s.Spec.ID, len(s.Figures), len(s.Spec.Metrics))
		}
		for _, f := range s.Figures {
			if f.SVG == nil {
				t.Errorf("%s: figure %s unusable: %s", s.Spec.ID, f.File, f.Err)
			}
		}
		for _, c := range s.Claims {
			for _, o := range c.Outcomes {
				if o.Reason == "" {
					t.Errorf("%s under %s: empty reason", c.Claim.ID, o.Protocol)
				}
			}
		}
	}
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
			if ids[sectionID(run.Spec)] == nil {
				t.Errorf("no section for %s", run.Spec.ID)
			}
			continue
		}
		for _, m := range run.Spec.Metrics {
			fig := ids[figureID(run.Spec, m)]
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

func TestVerdictTable(t *testing.T) {
	dir, runs := quickRuns(t)
	r := New(dir, testMeta, runs)
	var b bytes.Buffer
	if err := r.WriteVerdictTable(&b); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, run := range runs {
		if !strings.Contains(s, "| "+run.Spec.ID) {
			t.Errorf("no row for %s:\n%s", run.Spec.ID, s)
		}
	}
	if !strings.Contains(s, "mnist-snr (not run)") || !strings.Contains(s, "**total**") {
		t.Errorf("table:\n%s", s)
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

// synthetic returns a gauss-snr result of n trials whose per-trial values
// make fig3-wvcmc-best hold under the paper and default protocols and
// fail under the converged one: the WVCMC rows of each protocol have their
// own means (log-normal trials, σ = 0.1, shared per trial).
func synthetic(t *testing.T, n int) (runner.Spec, *runner.Result) {
	t.Helper()
	spec, err := experiment.Lookup("gauss-snr")
	if err != nil {
		t.Fatal(err)
	}
	v, trials, err := runner.Resolve(spec, nil, false, n)
	if err != nil {
		t.Fatal(err)
	}
	res := &runner.Result{Spec: spec, Values: v, Trials: trials, Seed: 1}
	mean := map[string]float64{"gcmc": 0.5, "wgcmc-oma": 0.3, "wgcmc-noma": 0.4, "cmc-noiseless": 0.1}
	rng := rand.New(rand.NewPCG(1, 2))
	for p, x := range v.XList() {
		for tr := range trials {
			task := runner.TaskResult{TaskKey: runner.TaskKey{Point: p, X: x, Trial: tr}}
			u := rng.NormFloat64()
			for _, m := range spec.Metrics {
				for s, mu := range mean {
					task.Rows = append(task.Rows, runner.Row{Scheme: s, Metric: m, Value: mu * math.Exp(0.07*u+0.07*rng.NormFloat64())})
				}
				for _, pr := range scheme.Protocols {
					mu := 0.05
					if pr == scheme.Converged {
						mu = 2
					}
					for _, s := range scheme.Variational {
						task.Rows = append(task.Rows, runner.Row{Scheme: scheme.Under(s, pr), Metric: m, Value: mu * math.Exp(0.07*u+0.07*rng.NormFloat64())})
					}
				}
			}
			// Rows in a fixed order, whatever the map's.
			slices.SortFunc(task.Rows, func(a, b runner.Row) int { return strings.Compare(a.Scheme+a.Metric, b.Scheme+b.Metric) })
			res.Tasks = append(res.Tasks, task)
		}
	}
	return spec, res
}

// Per claim, the verdict under each protocol is shown side by side, and
// claims.csv has one row per claim and protocol with the deciding numbers.
func TestProtocolsSideBySide(t *testing.T) {
	spec, res := synthetic(t, 40)
	r := New(t.TempDir(), testMeta, []Run{{Spec: spec, Result: res}})
	want := map[scheme.Protocol]claims.Verdict{scheme.Paper: claims.Holds, scheme.Converged: claims.Fails, scheme.Default: claims.Holds}
	for _, c := range r.Sections[0].Claims {
		if c.Claim.ID != "fig3-wvcmc-best" && c.Claim.ID != "fig3-wvcmc-best-fresh" {
			continue
		}
		for _, o := range c.Outcomes {
			if o.Verdict != want[o.Protocol] {
				t.Errorf("%s under %s: %v (%s), want %v", c.Claim.ID, o.Protocol, o.Verdict, o.Reason, want[o.Protocol])
			}
		}
	}
	md, _ := render(t, r)
	if !strings.Contains(string(md), "| [fig3-wvcmc-best](#fig3-wvcmc-best) | Fig. 3 | err2 | **holds** | **fails** | – |") ||
		!strings.Contains(string(md), "| [fig3-wvcmc-best-fresh](#fig3-wvcmc-best-fresh) | Fig. 3 | err2_fresh | – | **fails** | **holds** |") {
		t.Errorf("the claims table does not show the verdicts side by side:\n%s", md[:min(len(md), 4000)])
	}

	var b bytes.Buffer
	if err := r.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rows[0], ","); got != "claim,figure,metric,protocol,verdict,estimate,ci_low,ci_high,trials,trials_to_decide" {
		t.Fatalf("header %q", got)
	}
	n := 0
	for _, c := range r.Sections[0].Claims {
		n += len(c.Claim.Protocols())
	}
	if len(rows)-1 != n {
		t.Errorf("%d rows, want one per claim and protocol (%d)", len(rows)-1, n)
	}
	found := 0
	for _, row := range rows[1:] {
		if !slices.Contains([]string{"holds", "fails", "inconclusive", "not-evaluated"}, row[4]) {
			t.Errorf("verdict %q", row[4])
		}
		if row[4] != "inconclusive" && row[9] != "" {
			t.Errorf("%s %s: trials_to_decide %q for a %s claim", row[0], row[3], row[9], row[4])
		}
		if row[0] != "fig3-wvcmc-best" {
			continue
		}
		found++
		est, _ := strconv.ParseFloat(row[5], 64)
		lo, _ := strconv.ParseFloat(row[6], 64)
		hi, _ := strconv.ParseFloat(row[7], 64)
		// The deciding ratio: WVCMC at 0.05 against gcmc, wgcmc at ≥ 0.3
		// holds by ≥ 6×; at 2 it fails against wgcmc-oma at 0.3 by ≤ 0.15×.
		switch row[3] {
		case "paper":
			if row[4] != "holds" || !(lo > 1 && lo <= est && est <= hi && math.Abs(est-6) < 1) || row[8] != "40" {
				t.Errorf("paper row %v", row)
			}
		case "converged":
			if row[4] != "fails" || !(hi < 1 && lo <= est && est <= hi && math.Abs(est-0.15) < 0.03) {
				t.Errorf("converged row %v", row)
			}
		default:
			t.Errorf("fig3-wvcmc-best judged under %s", row[3])
		}
	}
	if found != 2 {
		t.Errorf("fig3-wvcmc-best has %d rows, want 2", found)
	}
}

// A run without a protocol's WVCMC rows leaves the claims about WVCMC
// under that protocol not evaluated, saying so.
func TestProtocolNotRun(t *testing.T) {
	dir, runs := quickRuns(t)
	r := New(dir, testMeta, runs)
	for _, s := range r.Sections {
		if s.Result == nil || claims.HasProtocol(s.Result, scheme.Paper) {
			continue
		}
		for _, c := range s.Claims {
			o, ok := c.Under(scheme.Paper)
			if ok && strings.Contains(c.Claim.ID, "wvcmc") && (o.Verdict != claims.NotEvaluated || !strings.Contains(o.Reason, "without the paper protocol")) {
				t.Errorf("%s under paper, not run: %v (%s)", c.Claim.ID, o.Verdict, o.Reason)
			}
		}
	}
}

// Claims read the per-trial values of ID.csv: a result loaded back from
// its files gives the same outcomes as the run that wrote them.
func TestClaimsFromStoredResults(t *testing.T) {
	dir, runs := quickRuns(t)
	var loaded []Run
	for _, run := range runs {
		if run.Result == nil {
			continue
		}
		res, err := runner.LoadResult(dir, run.Spec)
		if err != nil {
			t.Fatal(err)
		}
		loaded = append(loaded, Run{Spec: run.Spec, Result: res})
	}
	a := New(dir, testMeta, runs[:len(loaded)])
	b := New(dir, testMeta, loaded)
	var ca, cb bytes.Buffer
	if err := a.WriteCSV(&ca); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteCSV(&cb); err != nil {
		t.Fatal(err)
	}
	if ca.String() != cb.String() {
		t.Errorf("claims from stored results differ:\n%s\nvs\n%s", ca.String(), cb.String())
	}
	for i, s := range a.Sections {
		for j, c := range s.Claims {
			for k, o := range c.Outcomes {
				if o.Reason != b.Sections[i].Claims[j].Outcomes[k].Reason {
					t.Errorf("%s under %s: %q vs %q", c.Claim.ID, o.Protocol, o.Reason, b.Sections[i].Claims[j].Outcomes[k].Reason)
				}
			}
		}
	}
}
