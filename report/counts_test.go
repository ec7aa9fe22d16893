package report

// Every count a report states must match the rows it lists: the headline
// against the claims table, the experiments table against the claims
// table, and each outcome's "k of m comparisons …" against its comparison
// table and the line that counts the comparisons left out.

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/claims"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

// mdCells splits a Markdown table row into its cells (escaped pipes kept).
func mdCells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(strings.TrimSuffix(line, "|"), "|")
	parts := regexp.MustCompile(`[^\\]\|`).FindAllStringIndex(line, -1)
	var out []string
	start := 0
	for _, p := range parts {
		out = append(out, strings.TrimSpace(line[start:p[0]+1]))
		start = p[1]
	}
	return append(out, strings.TrimSpace(line[start:]))
}

// verdictWord maps a table's verdict cell to a verdict.
func verdictWord(cell string) (claims.Verdict, bool) {
	cell = strings.Trim(cell, "* ")
	for _, v := range claims.Verdicts {
		if v.String() == cell {
			return v, true
		}
	}
	return 0, false
}

// checkCounts checks the counts a Markdown report states against its rows.
func checkCounts(t *testing.T, md string) {
	t.Helper()
	lines := strings.Split(md, "\n")
	// The claims table: verdict counts per protocol column, the project's
	// additions left out, and per figure.
	colCounts := map[string]map[claims.Verdict]int{}
	figCounts := map[string]map[string]map[claims.Verdict]int{} // figure → protocol → verdict
	var cols []string
	i := 0
	for ; i < len(lines) && lines[i] != "## Claims"; i++ {
	}
	if i == len(lines) {
		t.Fatal("no claims table")
	}
	for ; i < len(lines) && !strings.HasPrefix(lines[i], "| Claim |"); i++ {
	}
	cols = mdCells(lines[i])[3:]
	rows := 0
	for i += 2; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
		cells := mdCells(lines[i])
		if strings.Contains(cells[0], "addition") {
			continue
		}
		rows++
		fig := cells[1]
		if figCounts[fig] == nil {
			figCounts[fig] = map[string]map[claims.Verdict]int{}
		}
		for j, c := range cells[3:] {
			if v, ok := verdictWord(c); ok {
				if colCounts[cols[j]] == nil {
					colCounts[cols[j]] = map[claims.Verdict]int{}
				}
				if figCounts[fig][cols[j]] == nil {
					figCounts[fig][cols[j]] = map[claims.Verdict]int{}
				}
				colCounts[cols[j]][v]++
				figCounts[fig][cols[j]][v]++
			}
		}
	}
	// The headline.
	head := regexp.MustCompile(`\*\*Does it reproduce\?\*\* (\d+) claims? of the paper`).FindStringSubmatch(md)
	if head == nil {
		t.Fatal("no headline")
	}
	if n, _ := strconv.Atoi(head[1]); n != rows {
		t.Errorf("headline: %d claims; the claims table lists %d of the paper's", n, rows)
	}
	for _, p := range cols {
		v := colCounts[p]
		if len(v) == 0 {
			continue
		}
		want := fmt.Sprintf("%s: %d hold, %d fail, %d inconclusive, %d not evaluated", p,
			v[claims.Holds], v[claims.Fails], v[claims.Inconclusive], v[claims.NotEvaluated])
		if !strings.Contains(lines[2], want) {
			t.Errorf("headline %q lacks %q, the claims table's count", lines[2], want)
		}
	}
	// The experiments table.
	for ; i < len(lines) && !strings.HasPrefix(lines[i], "| Experiment |"); i++ {
	}
	if i == len(lines) {
		t.Fatal("no experiments table")
	}
	head2 := mdCells(lines[i])
	for i += 2; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
		cells := mdCells(lines[i])
		fig := cells[1]
		for j, h := range head2 {
			k := slices.Index(cols, h)
			if k < 0 {
				continue
			}
			v := figCounts[fig][cols[k]]
			want := "–"
			if len(v) > 0 {
				want = fmt.Sprintf("%d/%d/%d/%d", v[claims.Holds], v[claims.Fails], v[claims.Inconclusive], v[claims.NotEvaluated])
			}
			if cells[j] != want {
				t.Errorf("experiments table, %s under %s: %q; the claims table gives %q", fig, h, cells[j], want)
			}
		}
	}
	// Each outcome's reason against its comparisons.
	reasonRE := regexp.MustCompile(`(\d+) of (\d+) comparisons (hold|fail)`)
	extraRE := regexp.MustCompile(`(\d+) fail, (\d+) undecided`)
	omitRE := regexp.MustCompile(`^\((\d+) other comparisons? not listed: (.*)\.\)$`)
	claim := ""
	reasons := map[string]string{} // protocol → reason, of the current claim
	checked := 0
	for ; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "#### "):
			claim, reasons = strings.TrimPrefix(l, "#### "), map[string]string{}
		case strings.HasPrefix(l, "| ") && claim != "" && len(mdCells(l)) == len(outcomeHeader):
			if cells := mdCells(l); cells[0] != "Protocol" {
				reasons[cells[0]] = cells[len(cells)-1]
			}
		case strings.HasPrefix(l, "Comparisons under "):
			p := strings.TrimSuffix(strings.TrimPrefix(l, "Comparisons under "), ":")
			count := map[claims.Verdict]int{}
			j := i + 4 // the blank line, the header, the separator
			for ; j < len(lines) && strings.HasPrefix(lines[j], "|"); j++ {
				cells := mdCells(lines[j])
				result := cells[len(cells)-1]
				found := false
				for _, v := range []claims.Verdict{claims.NotEvaluated, claims.Inconclusive, claims.Holds, claims.Fails} {
					if strings.HasPrefix(result, v.String()) {
						count[v]++
						found = true
						break
					}
				}
				if !found {
					t.Errorf("%s under %s: comparison result %q", claim, p, result)
				}
			}
			if j+1 < len(lines) {
				if m := omitRE.FindStringSubmatch(lines[j+1]); m != nil {
					n, _ := strconv.Atoi(m[1])
					sum := 0
					for _, part := range strings.Split(m[2], ", ") {
						k, word, _ := strings.Cut(part, " ")
						c, _ := strconv.Atoi(k)
						sum += c
						switch word {
						case "hold", "holds":
							count[claims.Holds] += c
						case "fail", "fails":
							count[claims.Fails] += c
						case "inconclusive":
							count[claims.Inconclusive] += c
						case "not evaluated":
							count[claims.NotEvaluated] += c
						default:
							t.Errorf("%s under %s: omitted line %q", claim, p, lines[j+1])
						}
					}
					if sum != n {
						t.Errorf("%s under %s: %q adds up to %d", claim, p, lines[j+1], sum)
					}
				}
			}
			total := count[claims.Holds] + count[claims.Fails] + count[claims.Inconclusive] + count[claims.NotEvaluated]
			r := reasons[p]
			if m := reasonRE.FindStringSubmatch(r); m != nil {
				k, _ := strconv.Atoi(m[1])
				n, _ := strconv.Atoi(m[2])
				v := claims.Holds
				if m[3] == "fail" {
					v = claims.Fails
				}
				if n != total || count[v] != k {
					t.Errorf("%s under %s: reason says %s; the table lists %d comparisons, %d %s", claim, p, m[0], total, count[v], m[3])
				}
				if e := extraRE.FindStringSubmatch(r); e != nil {
					f, _ := strconv.Atoi(e[1])
					u, _ := strconv.Atoi(e[2])
					if count[claims.Fails] != f || count[claims.Inconclusive]+count[claims.NotEvaluated] != u {
						t.Errorf("%s under %s: reason says %s; the table lists %d fail, %d undecided", claim, p, e[0],
							count[claims.Fails], count[claims.Inconclusive]+count[claims.NotEvaluated])
					}
				}
				checked++
			}
			i = j
		}
	}
	if checked == 0 {
		t.Error("no outcome's comparison counts were checked")
	}
}

// The committed full run's report states no count its rows contradict.
func TestCommittedReportCountsMatchRows(t *testing.T) {
	b, err := os.ReadFile("../docs/full-run/REPORT.md")
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, string(b))
}

// A report whose claims have more comparisons than a table lists counts
// the ones it leaves out by verdict, failing ones included.
func TestLongComparisonTablesCountWhatTheyOmit(t *testing.T) {
	spec, res := flatSynthetic(t)
	r := New(t.TempDir(), testMeta, []Run{{Spec: spec, Result: res}})
	md, _ := render(t, r)
	checkCounts(t, string(md))
	if !strings.Contains(string(md), "other comparisons not listed: ") {
		t.Fatal("no table left comparisons out: the test does not exercise the omitted line")
	}
	sc := bufio.NewScanner(strings.NewReader(string(md)))
	for sc.Scan() {
		if strings.Contains(sc.Text(), "not listed, all holding") {
			t.Errorf("a line claims the omitted comparisons all hold: %q", sc.Text())
		}
	}
}

// flatSynthetic returns a gauss-snr result whose wvcmc errors under the
// paper's protocol are flat at most SNRs and doubled at every third, so
// that fig3-wvcmc-flat has more comparisons than a table lists, failing
// and holding.
func flatSynthetic(t *testing.T) (runner.Spec, *runner.Result) {
	t.Helper()
	spec, res := synthetic(t, 40)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range res.Tasks {
		task := &res.Tasks[i]
		for j, r := range task.Rows {
			if r.Metric != "err2" || (r.Scheme != scheme.Under(scheme.WVCMCOMA, scheme.Paper) && r.Scheme != scheme.Under(scheme.WVCMCNOMA, scheme.Paper)) {
				continue
			}
			v := 0.1 * (1 + 0.1*rng.NormFloat64())
			if task.Point%3 == 0 {
				v *= 2
			}
			task.Rows[j].Value = v
		}
	}
	if n := len(res.Values.XList()); 2*n*(n-1) <= maxShown {
		t.Fatalf("%d SNRs give too few comparisons", n)
	}
	return spec, res
}
