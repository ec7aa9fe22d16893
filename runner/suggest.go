package runner

import (
	"fmt"
	"sort"
	"strings"
)

// Suggest returns the candidates close to name: those within edit distance
// max(1, len(name)/3), or having name as a prefix, closest first.
func Suggest(name string, candidates []string) []string {
	type c struct {
		s string
		d int
	}
	var out []c
	lname := strings.ToLower(name)
	limit := max(1, len(name)/3)
	for _, cand := range candidates {
		lc := strings.ToLower(cand)
		d := editDistance(lname, lc)
		if d <= limit || (len(lname) >= 2 && strings.HasPrefix(lc, lname)) {
			out = append(out, c{cand, d})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].d < out[j].d })
	res := make([]string, len(out))
	for i, x := range out {
		res[i] = x.s
	}
	return res
}

// editDistance is the optimal string alignment distance between a and b
// (bytes): the Levenshtein distance with the swap of two adjacent bytes
// counted as one edit, the commonest typo ("trails", "onyl").
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// Find returns the spec called id among specs; the error for an unknown
// id suggests close names (see Suggest).
func Find(specs []Spec, id string) (Spec, error) {
	ids := make([]string, len(specs))
	for i, s := range specs {
		if s.ID == id {
			return s, nil
		}
		ids[i] = s.ID
	}
	msg := fmt.Sprintf("unknown experiment %q", id)
	if sug := Suggest(id, ids); len(sug) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(sug, " or "))
	}
	return Spec{}, fmt.Errorf("%s; `wcmc list` shows the %d experiments", msg, len(specs))
}
