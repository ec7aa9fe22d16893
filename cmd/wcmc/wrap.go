package main

import (
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

const (
	// defaultWidth is the width of `wcmc list` and `wcmc show` output
	// that goes to no terminal when $COLUMNS is unset.
	defaultWidth = 100
	// minWidth is the narrowest output: narrower settings are raised to
	// it, so that a hanging indent still leaves room for words.
	minWidth = 40
)

// outputWidth returns the columns to wrap text written to w at: the
// terminal's width when w is a terminal, else $COLUMNS when it is a
// positive number, else defaultWidth; never less than minWidth. The
// terminal comes first because an exported $COLUMNS goes stale when the
// window is resized.
func outputWidth(w io.Writer) int {
	width := defaultWidth
	if c, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && c > 0 {
		width = c
	}
	if f, ok := w.(*os.File); ok {
		if c, ok := terminalWidth(f); ok && c > 0 {
			width = c
		}
	}
	return max(width, minWidth)
}

// wrap fills words into lines of at most width runes, separated by single
// spaces: the first line starts with first, the others with indent
// spaces. A word is never broken: one longer than a whole line gets a line
// of its own and overflows it. Lines carry no trailing spaces.
func wrap(first string, indent int, words []string, width int) []string {
	pad := strings.Repeat(" ", indent)
	var lines []string
	line, n, empty := first, utf8.RuneCountInString(first), true
	for _, w := range words {
		wn := utf8.RuneCountInString(w)
		switch {
		case empty && (n+wn <= width || n <= indent):
			line, n = line+w, n+wn
		case !empty && n+1+wn <= width:
			line, n = line+" "+w, n+1+wn
		default:
			lines = append(lines, strings.TrimRight(line, " "))
			line, n = pad+w, indent+wn
		}
		empty = false
	}
	return append(lines, strings.TrimRight(line, " "))
}

// writeLines writes lines to w, each ended by a newline.
func writeLines(w io.Writer, lines []string) error {
	for _, l := range lines {
		if _, err := io.WriteString(w, l+"\n"); err != nil {
			return err
		}
	}
	return nil
}
