package main

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wcmc-project/wcmc/experiment"
	"github.com/wcmc-project/wcmc/reproduce"
	"github.com/wcmc-project/wcmc/runner"
)

// wrapWidths are the widths the layout tests try: minWidth, where some
// real words (a long path, a long list of choices) are wider than a line,
// and wider ones where every word fits.
var wrapWidths = []int{minWidth, 60, 80, 100, 132}

// hugeWidth wraps nothing: every entry stays on one line.
const hugeWidth = 100000

// checkWidth fails for a line over width, except one that holds a single
// word longer than the room after its indent, which wrap may not break;
// from 80 columns on, every word of the real output fits.
func checkWidth(t *testing.T, what string, out string, width int) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		n := utf8.RuneCountInString(l)
		if n <= width {
			continue
		}
		word := strings.TrimLeft(l, " ")
		if width >= 80 || strings.Contains(word, " ") {
			t.Errorf("%s at width %d: line of %d runes: %q", what, width, n, l)
		}
	}
}

// capture runs wcmc with args on specs, $COLUMNS set to width.
func capture(t *testing.T, specs []runner.Spec, width int, args ...string) string {
	t.Helper()
	t.Setenv("COLUMNS", strconv.Itoa(width))
	var out, errOut bytes.Buffer
	if code := execute(t.Context(), specs, args, &out, &errOut); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
	}
	return out.String()
}

func TestWrap(t *testing.T) {
	words := strings.Fields("alpha beta=1,2,3 γδε --set x=1 a bb ccc [0, 1]")
	words = append(words, "≥ 0", strings.Repeat("w", 30))
	for width := 5; width <= 60; width++ {
		lines := wrap("head: ", 4, words, width)
		if !strings.HasPrefix(lines[0], "head:") {
			t.Errorf("width %d: first line %q", width, lines[0])
		}
		var got []string
		for i, l := range lines {
			if l != strings.TrimRight(l, " ") {
				t.Errorf("width %d: trailing space in %q", width, l)
			}
			body := l
			if i == 0 {
				body = strings.TrimPrefix(l, "head:")
			} else if !strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "     ") {
				t.Errorf("width %d: line %q not indented by 4", width, l)
			}
			body = strings.TrimLeft(body, " ")
			if n := utf8.RuneCountInString(l); n > width && slices.Index(words, body) < 0 {
				t.Errorf("width %d: line %q of %d runes holds more than one word", width, l, n)
			}
			if body != "" {
				got = append(got, body)
			}
		}
		// The words come back in order, none broken.
		if j := strings.Join(got, " "); j != strings.Join(words, " ") {
			t.Errorf("width %d: words %q", width, j)
		}
		// Greedy: no line could have taken the next line's first word.
		for i := 0; i+1 < len(lines); i++ {
			next := strings.TrimLeft(lines[i+1], " ")
			if first, _, _ := strings.Cut(next, " "); slices.Contains(words, first) &&
				utf8.RuneCountInString(lines[i])+1+utf8.RuneCountInString(first) <= width {
				t.Errorf("width %d: %q fits on %q", width, first, lines[i])
			}
		}
	}
}

// entry is one parameter of `wcmc show`: its section heading and its
// words, continuation lines joined.
type entry struct {
	heading string
	words   []string
}

// parseShow returns the parameter entries of `wcmc show` output: the
// lines under a heading up to the next empty line, an entry starting at
// an indent of 2 and continuing at 6.
func parseShow(t *testing.T, out string) []entry {
	t.Helper()
	var entries []entry
	heading := ""
	for _, l := range strings.Split(out, "\n") {
		switch {
		case l == paperHeading || l == beyondHeading:
			heading = l
		case l == "":
			heading = ""
		case heading == "":
		case strings.HasPrefix(l, "      ") && len(entries) > 0:
			e := &entries[len(entries)-1]
			e.words = append(e.words, strings.Fields(l)...)
		case strings.HasPrefix(l, "  ") && l[2] != ' ':
			entries = append(entries, entry{heading, strings.Fields(l)})
		default:
			t.Errorf("line %q under %q is no parameter", l, heading)
		}
	}
	return entries
}

// Every parameter appears once, as "name=default" at the start of an
// entry under the heading its Beyond marker says, in the spec's order and
// with its whole doc; at any width the words are those of the unwrapped
// output, and no line is wider than the width.
func TestShowLayout(t *testing.T) {
	specs := experiment.All()
	beyond := 0
	for _, s := range specs {
		wide := capture(t, specs, hugeWidth, "show", s.ID)
		for _, width := range wrapWidths {
			out := capture(t, specs, width, "show", s.ID)
			checkWidth(t, s.ID, out, width)
			if !slices.Equal(strings.Fields(out), strings.Fields(wide)) {
				t.Errorf("%s at width %d: words differ from the unwrapped output", s.ID, width)
			}
			entries := parseShow(t, out)
			if len(entries) != len(s.Params) {
				t.Fatalf("%s at width %d: %d parameter entries, want %d", s.ID, width, len(entries), len(s.Params))
			}
			// Paper parameters first, then the beyond ones, each in spec order.
			var want []runner.Param
			for _, p := range s.Params {
				if !p.Beyond {
					want = append(want, p)
				}
			}
			for _, p := range s.Params {
				if p.Beyond {
					want = append(want, p)
				}
			}
			for i, p := range want {
				e := entries[i]
				heading := paperHeading
				if p.Beyond {
					heading = beyondHeading
				}
				if e.heading != heading {
					t.Errorf("%s: %s under %q, want %q", s.ID, p.Name, e.heading, heading)
				}
				if e.words[0] != p.Name+"="+p.Default {
					t.Errorf("%s: entry %d starts %q, want %s=%s", s.ID, i, e.words[0], p.Name, p.Default)
				}
				doc := strings.Fields(p.Doc)
				if len(e.words) < len(doc) || !slices.Equal(e.words[len(e.words)-len(doc):], doc) {
					t.Errorf("%s: %s entry %q does not end with its doc", s.ID, p.Name, strings.Join(e.words, " "))
				}
				// `grep '^  name='` finds exactly this entry.
				if n := strings.Count("\n"+out, "\n  "+p.Name+"="); n != 1 {
					t.Errorf("%s at width %d: %d lines start with %s=", s.ID, width, n, p.Name)
				}
			}
		}
		for _, p := range s.Params {
			if p.Beyond {
				beyond++
			}
		}
	}
	if beyond == 0 {
		t.Error("no spec has a parameter marked Beyond: the split is untested")
	}
}

// The toy spec has no Beyond parameter: no beyond heading.
func TestShowWithoutBeyond(t *testing.T) {
	out := capture(t, toySpecs(), 100, "show", "toy")
	if !strings.Contains(out, "\n"+paperHeading+"\n") || strings.Contains(out, beyondHeading) {
		t.Errorf("headings:\n%s", out)
	}
}

// `wcmc list` keeps one entry per experiment in figure order, its ID at
// the start of a line; at any width the words are those of the unwrapped
// output, and no line is wider than the width.
func TestListLayout(t *testing.T) {
	specs := experiment.All()
	wide := capture(t, specs, hugeWidth, "list")
	var ids []string
	for _, s := range reproduce.FigureOrder(specs) {
		ids = append(ids, s.ID)
	}
	for _, width := range wrapWidths {
		out := capture(t, specs, width, "list")
		checkWidth(t, "list", out, width)
		if !slices.Equal(strings.Fields(out), strings.Fields(wide)) {
			t.Errorf("width %d: words differ from the unwrapped output", width)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			if !strings.HasPrefix(l, " ") {
				got = append(got, strings.Fields(l)[0])
			}
		}
		if !slices.Equal(got, ids) {
			t.Errorf("width %d: entries %q, want %q", width, got, ids)
		}
	}
}

func TestOutputWidth(t *testing.T) {
	for _, c := range []struct {
		columns string
		want    int
	}{{"", defaultWidth}, {"junk", defaultWidth}, {"-5", defaultWidth}, {"132", 132}, {"10", minWidth}} {
		t.Setenv("COLUMNS", c.columns)
		if got := outputWidth(&bytes.Buffer{}); got != c.want {
			t.Errorf("COLUMNS=%q: width %d, want %d", c.columns, got, c.want)
		}
	}
}
