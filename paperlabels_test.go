package wcmc_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// labelDoc holds the table of the paper's equation labels, under
// labelHeading.
const (
	labelDoc     = "docs/MATH.md"
	labelHeading = "## The paper's equation labels"
)

// labelRow matches a table row and captures its label, the first cell.
var labelRow = regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")

// commentBreak is a line break inside a Go comment, with the next
// line's comment marker; citations wrap across it.
var commentBreak = regexp.MustCompile(`\n[ \t]*//[ \t]?`)

// labelTable splits the text of labelDoc into the label table's section
// and the rest, and returns the labels of the table's rows.
func labelTable(t *testing.T, doc string) (labels []string, rest string) {
	t.Helper()
	start := strings.Index(doc, labelHeading)
	if start < 0 {
		t.Fatalf("%s has no section %q", labelDoc, labelHeading)
	}
	end := len(doc)
	if i := strings.Index(doc[start+len(labelHeading):], "\n## "); i >= 0 {
		end = start + len(labelHeading) + i
	}
	for _, m := range labelRow.FindAllStringSubmatch(doc[start:end], -1) {
		labels = append(labels, m[1])
	}
	if len(labels) == 0 {
		t.Fatalf("%s: the section %q has no table rows", labelDoc, labelHeading)
	}
	return labels, doc[:start] + doc[end:]
}

// citedLabel returns the longest label that text starts with and that
// ends at a word boundary, or "" if there is none.
func citedLabel(text string, labels []string) string {
	best := ""
	for _, l := range labels {
		if len(l) <= len(best) || !strings.HasPrefix(text, l) {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(text[len(l):]); unicode.IsLetter(r) || unicode.IsDigit(r) {
			continue
		}
		best = l
	}
	return best
}

// citations calls cite for every citation of a paper label in text, the
// contents of a .go or .md file: "eq: " at the start of a word and
// followed by a letter or digit. cite gets the citation's line and the
// text from "eq: " on, with comment markers of wrapped Go comments
// dropped and white space collapsed.
func citations(text string, goFile bool, cite func(line int, from string)) {
	for i := 0; ; {
		j := strings.Index(text[i:], "eq: ")
		if j < 0 {
			return
		}
		at := i + j
		i = at + len("eq: ")
		if prev, _ := utf8.DecodeLastRuneInString(text[:at]); at > 0 && (unicode.IsLetter(prev) || unicode.IsDigit(prev)) {
			continue
		}
		if next, _ := utf8.DecodeRuneInString(text[i:]); !unicode.IsLetter(next) && !unicode.IsDigit(next) {
			continue
		}
		window := text[at:min(len(text), at+200)]
		if goFile {
			window = commentBreak.ReplaceAllString(window, " ")
		}
		cite(strings.Count(text[:at], "\n")+1, strings.Join(strings.Fields(window), " "))
	}
}

// TestPaperLabelsTabled checks the table of the paper's equation labels in
// docs/MATH.md against the repository's .go and .md files: every label
// they cite is a row of the table, and every row is cited somewhere
// outside the table.
func TestPaperLabelsTabled(t *testing.T) {
	doc, err := os.ReadFile(labelDoc)
	if err != nil {
		t.Fatal(err)
	}
	labels, _ := labelTable(t, string(doc))
	uses := make(map[string]int, len(labels))
	files := 0
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(path)
		if ext != ".go" && ext != ".md" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		text := string(b)
		if filepath.ToSlash(path) == labelDoc {
			_, text = labelTable(t, text)
		}
		citations(text, ext == ".go", func(line int, from string) {
			l := citedLabel(from, labels)
			if l == "" {
				r := []rune(from)
				t.Errorf("%s:%d: %q… cites no label of the table in %s (%q)",
					path, line, string(r[:min(len(r), 50)]), labelDoc, labelHeading)
				return
			}
			uses[l]++
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("scanned %d .go and .md files; the walk missed the repository", files)
	}
	cited := 0
	for _, n := range uses {
		cited += n
	}
	t.Logf("%d citations of %d labels in %d files", cited, len(labels), files)
	for _, l := range labels {
		if uses[l] == 0 {
			t.Errorf("%s: the table row %q is cited nowhere; drop it", labelDoc, l)
		}
	}
}

// TestCitedLabel checks the matching rules of the label check on short
// texts: the longest label wins, a label must end at a word boundary,
// citations wrap across Go comment lines, and "eq:" inside a word or
// before a non-word character is no citation. The texts are built from
// the prefix eq so that this file cites nothing itself.
func TestCitedLabel(t *testing.T) {
	const eq = "eq: "
	labels := []string{eq + "est theta", eq + "est theta NOMA", eq + "err2"}
	for _, c := range []struct{ text, want string }{
		{eq + "est theta NOMA).", eq + "est theta NOMA"},
		{eq + "est theta, and", eq + "est theta"},
		{eq + "est thetas", ""},
		{eq + "err2", eq + "err2"},
		{eq + "err3", ""},
	} {
		if got := citedLabel(c.text, labels); got != c.want {
			t.Errorf("citedLabel(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	src := "x // see (" + eq + "est theta\n\t// NOMA) and freq: 3, " + eq + "\"\", seq: x, " + eq + "err2"
	var got []string
	citations(src, true, func(line int, from string) {
		got = append(got, citedLabel(from, labels))
	})
	if want := []string{eq + "est theta NOMA", eq + "err2"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("citations found %q, want %q", got, want)
	}
}
