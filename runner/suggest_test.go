package runner

import "testing"

// A swap of two adjacent letters is one edit, so that "trails" suggests
// "trials".
func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "abc", 0}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"trails", "trials", 1},
		{"onyl", "only", 1}, {"ab", "ba", 1}, {"abcd", "badc", 2}, {"ca", "abc", 3}} {
		if got := editDistance(c.a, c.b); got != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
		if got := editDistance(c.b, c.a); got != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.b, c.a, got, c.d)
		}
	}
}
