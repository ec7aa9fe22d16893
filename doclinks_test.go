package wcmc_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// mdLink matches a Markdown link or image and captures its target.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// mdHeading matches an ATX heading and captures its text.
var mdHeading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)

// inlineCode matches a code span.
var inlineCode = regexp.MustCompile("`[^`]*`")

// mdProse returns the lines of a Markdown text outside fenced code blocks.
func mdProse(text string) []string {
	var lines []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			lines = append(lines, line)
		}
	}
	return lines
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown text: lower case, punctuation dropped, spaces as hyphens, and
// -1, -2, … appended to repeats.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range mdProse(text) {
		m := mdHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.ReplaceAll(m[1], "`", "")) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// TestDocLinksResolve checks every relative link of the repository's
// Markdown files: its file exists, and an anchor into a Markdown file
// names one of its headings.
func TestDocLinksResolve(t *testing.T) {
	links := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || path == "results") {
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Ext(path) != ".md" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, line := range mdProse(string(b)) {
			for _, m := range mdLink.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if i := strings.Index(target, ":"); i > 0 && !strings.ContainsAny(target[:i], "/#.") {
					continue // a URL
				}
				links++
				file, anchor, _ := strings.Cut(target, "#")
				dest := path
				if file != "" {
					dest = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %s: %v", path, target, err)
					continue
				}
				if anchor == "" || filepath.Ext(dest) != ".md" {
					continue
				}
				text, err := os.ReadFile(dest)
				if err != nil {
					return err
				}
				if !headingAnchors(string(text))[anchor] {
					t.Errorf("%s: link %s: %s has no heading with that anchor", path, target, dest)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if links == 0 {
		t.Fatal("no relative links found in the Markdown files")
	}
}
