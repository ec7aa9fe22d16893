package dataset

import (
	"strings"
	"testing"
)

// TestReadCSVFirstRow: a headerless file starting with a byte order mark
// keeps its first row, a header (with or without the mark) is skipped, and
// a first row that is neither is refused rather than dropped.
func TestReadCSVFirstRow(t *testing.T) {
	const bom = "\uFEFF"
	for _, c := range []struct {
		name, in string
		n        int
	}{
		{"BOM, no header", bom + "1,0.5\n0,2\n", 2},
		{"BOM, header", bom + "label,x1\n1,0.5\n0,2\n", 2},
		{"header", "label,x1\n1,0.5\n", 1},
		{"no header", "1,0.5\n0,2\n", 2},
	} {
		s, err := ReadCSV(strings.NewReader(c.in), "f.csv")
		if err != nil || s.Len() != c.n {
			t.Errorf("%s: N = %d, %v; want N = %d", c.name, s.Len(), err, c.n)
		}
	}
	for _, in := range []string{"1,abc\n0,2\n", "label,0.5\n0,2\n", "\"1 \",0.5\n0,2\n"} {
		if _, err := ReadCSV(strings.NewReader(in), "f.csv"); err == nil || !strings.Contains(err.Error(), "line 1 is neither a header") {
			t.Errorf("%q: %v", in, err)
		}
	}
}
