package report

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/claims"
	"github.com/wcmc-project/wcmc/runner"
)

// The page opens with a table of contents linking every section, each
// figure and each experiment's claims, and every link lands on an element
// of the page.
func TestHTMLTableOfContents(t *testing.T) {
	dir, runs := quickRuns(t)
	_, htm := render(t, New(dir, testMeta, runs))
	root := parseXML(t, htm)
	ids := map[string]bool{}
	var nav *element
	root.walk(func(e *element) {
		if id := e.attr["id"]; id != "" {
			ids[id] = true
		}
		if e.name == "nav" && nav == nil {
			nav = e
		}
	})
	if nav == nil || nav.attr["id"] != "contents" {
		t.Fatal("no <nav id=\"contents\">")
	}
	var links []string
	nav.walk(func(e *element) {
		if e.name == "a" {
			links = append(links, strings.TrimPrefix(e.attr["href"], "#"))
		}
	})
	for _, want := range []string{"claims", "method", "experiments"} {
		if !slices.Contains(links, want) {
			t.Errorf("the contents lack #%s", want)
		}
	}
	for _, r := range runs {
		if !slices.Contains(links, sectionID(r.Spec.ID)) {
			t.Errorf("the contents lack the section of %s", r.Spec.ID)
		}
		if r.Result == nil {
			continue
		}
		for _, m := range r.Spec.Metrics {
			if !slices.Contains(links, figureID(r.Spec.ID, m)) {
				t.Errorf("the contents lack the figure %s %s", r.Spec.ID, m)
			}
		}
		if !slices.Contains(links, claimsID(r.Spec.ID)) {
			t.Errorf("the contents lack the claims of %s", r.Spec.ID)
		}
	}
	// Every in-page link, anywhere, has its target.
	root.walk(func(e *element) {
		if h := e.attr["href"]; strings.HasPrefix(h, "#") && !ids[h[1:]] {
			t.Errorf("link %s has no target", h)
		}
	})

	md, _ := render(t, New(dir, testMeta, runs))
	if !strings.Contains(string(md), "**Contents:** [Claims](#claims)") {
		t.Error("REPORT.md has no contents line")
	}
	for _, r := range runs {
		if !strings.Contains(string(md), "- ["+title(r.Spec)+"](#"+anchor(title(r.Spec))+")") {
			t.Errorf("REPORT.md's contents lack %s", r.Spec.ID)
		}
	}
}

// Identifiers (metric and claim names) never break inside a word, and
// figures take the text's width.
func TestHTMLStyleKeepsWordsWhole(t *testing.T) {
	if strings.Contains(css, "word-break") || strings.Contains(css, "overflow-wrap: anywhere") {
		t.Error("the style sheet breaks words anywhere")
	}
	for _, rule := range []string{"td code, th code, .id { white-space: nowrap; }", "figure svg { width: 100%; height: auto; }"} {
		if !strings.Contains(css, rule) {
			t.Errorf("the style sheet lacks %q", rule)
		}
	}
	dir, runs := quickRuns(t)
	_, htm := render(t, New(dir, testMeta, runs))
	if !strings.Contains(string(htm), "<td><code>err2_fresh</code></td>") {
		t.Error("the claims table does not set metric names as code")
	}
}

// What a reader cannot look up is not cited: no issue numbers of the
// project's tracker, in either document.
func TestNoIssueCitations(t *testing.T) {
	dir, runs := quickRuns(t)
	md, htm := render(t, New(dir, testMeta, runs))
	issue := regexp.MustCompile(`\bissues? \d`)
	for name, doc := range map[string][]byte{"REPORT.md": md, "report.html": htm} {
		if m := issue.Find(doc); m != nil {
			t.Errorf("%s cites %q", name, m)
		}
	}
	for src, want := range map[string][]string{
		"paper; issue 2":                                                              nil,
		"paper; issues 2, 9":                                                          nil,
		"issue 4's reading of the paper":                                              {"the project's reading of the paper, not a quotation"},
		`paper; issue 3 ("degrades only slightly at low SNR")`:                        {`"degrades only slightly at low SNR" made precise by the threshold`},
		"paper; issue 2; checked on fresh signals (issue 8)":                          {"checked on fresh signals"},
		`paper; issue 4 ("can fall below the single-worker benchmark"); checked on x`: {`"can fall below the single-worker benchmark" made precise by the threshold`, "checked on x"},
	} {
		if got := sourceNotes(src); !slices.Equal(got, want) {
			t.Errorf("sourceNotes(%q) = %q, want %q", src, got, want)
		}
	}
	c := claims.Claim{Section: "Sec. VI-A, Error vs SNR", Figure: "Fig. 3", Source: "paper; issue 3"}
	if got := source(c); got != "Sec. VI-A, Error vs SNR, Fig. 3" {
		t.Errorf("source = %q", got)
	}
}

// The settings line states the trials the experiments ran, not "each
// experiment's default trials".
func TestSettingsStateTrials(t *testing.T) {
	dir, runs := quickRuns(t)
	r := New(dir, testMeta, runs)
	got := strings.Join(r.settings(), " · ")
	want := countOf(runs[0].Result.Trials, "trial") + " per point"
	if !strings.Contains(got, want) {
		t.Errorf("settings %q lack %q", got, want)
	}
	// Different trials per experiment: each is named.
	mixed := slices.Clone(runs)
	res := *mixed[1].Result
	res.Trials = 7
	mixed[1].Result = &res
	got = strings.Join(New(dir, testMeta, mixed).settings(), " · ")
	if want := fmt.Sprintf("trials per point: gauss-blocks %d, gauss-snr 7", runs[0].Result.Trials); !strings.Contains(got, want) {
		t.Errorf("settings %q do not name each experiment's trials", got)
	}
	// Nothing ran: the override, or the experiments' defaults.
	none := []Run{{Spec: runner.Spec{ID: "x"}, NotRun: "no data"}}
	if got := strings.Join(New(dir, testMeta, none).settings(), " · "); !strings.Contains(got, "each experiment's default trials") {
		t.Errorf("settings %q", got)
	}
}

// The summary tables head their columns with the paper's scheme names.
func TestGridSchemeNames(t *testing.T) {
	dir, runs := quickRuns(t)
	l := New(dir, testMeta, runs).layout()
	g := l.sections[0].grids[0]
	if !slices.Contains(g.schemes, "WGCMC-NOMA") || slices.Contains(g.schemes, "wgcmc-noma") {
		t.Errorf("grid columns %q", g.schemes)
	}
}

// The experiments table gives the first line of a failure (a stack trace
// belongs in the section), cut to a readable length.
func TestStatusShort(t *testing.T) {
	s := Section{Run: Run{NotRun: "experiment x: trial 1: panic: boom\ngoroutine 7 [running]:\nmain.f()", Failed: true}}
	if got := status(s); got != "failed: experiment x: trial 1: panic: boom … (see its section)" {
		t.Errorf("status %q", got)
	}
	s.NotRun = strings.Repeat("a", 300)
	if got := status(s); len([]rune(got)) > maxStatus+40 || !strings.HasSuffix(got, "(see its section)") {
		t.Errorf("status %q", got)
	}
	s = Section{Run: Run{NotRun: "no MNIST data"}}
	if got := status(s); got != "not run: no MNIST data" {
		t.Errorf("status %q", got)
	}
}
