package figure

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// normalChains returns c chains of s iid N(shift·k, 1) draws, k the chain.
func normalChains(rng *rand.Rand, c, s int, shift float64) [][]float64 {
	x := make([][]float64, c)
	for k := range x {
		x[k] = make([]float64, s)
		for i := range x[k] {
			x[k][i] = shift*float64(k) + rng.NormFloat64()
		}
	}
	return x
}

func TestRankCountsSumAndUniformity(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const c, s, bins = 4, 2000, 20
	counts := RankCounts(normalChains(rng, c, s, 0), bins)
	// Under mixing each count is Binomial-like with mean s/bins and
	// variance below s/bins: allow 5 sd.
	mean := float64(s) / bins
	for k, h := range counts {
		sum := 0
		for _, n := range h {
			sum += n
			if math.Abs(float64(n)-mean) > 5*math.Sqrt(mean) {
				t.Errorf("chain %d: bin count %d far from %g", k+1, n, mean)
			}
		}
		if sum != s {
			t.Errorf("chain %d: counts sum to %d, want %d", k+1, sum, s)
		}
	}
}

func TestRankCountsNonMixing(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	// Chains 100 sd apart: chain k holds exactly the ranks of block k.
	counts := RankCounts(normalChains(rng, 2, 100, 100), 4)
	want := [][]int{{50, 50, 0, 0}, {0, 0, 50, 50}}
	for k := range want {
		for b := range want[k] {
			if counts[k][b] != want[k][b] {
				t.Fatalf("counts %v, want %v", counts, want)
			}
		}
	}
}

func TestRankCountsTies(t *testing.T) {
	// All draws equal: every draw has the mean rank (N+1)/2, the middle bin.
	counts := RankCounts([][]float64{{1, 1, 1}, {1, 1, 1}}, 3)
	if counts[0][1] != 3 || counts[1][1] != 3 {
		t.Errorf("tied counts %v, want all in bin 2", counts)
	}
}

// svgCount returns how many times s occurs as a text element in svg.
func svgCount(svg []byte, s string) int {
	return strings.Count(string(svg), ">"+s+"</text>")
}

func TestChainGridPanels(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, kind := range []ChainKind{Trace, Rank} {
		g := ChainGrid{Title: "chains", Kind: kind}
		for p := range 5 {
			g.Names = append(g.Names, "theta["+string(rune('1'+p))+"]")
			g.Draws = append(g.Draws, normalChains(rng, 3, 500, 0.1))
		}
		var b bytes.Buffer
		if err := g.Encode(&b, "svg"); err != nil {
			t.Fatal(err)
		}
		for _, name := range g.Names {
			if n := svgCount(b.Bytes(), name); n != 1 {
				t.Errorf("kind %d: panel %s drawn %d times", kind, name, n)
			}
		}
		for c := range 3 {
			if n := svgCount(b.Bytes(), "chain "+string(rune('1'+c))); n != 1 {
				t.Errorf("kind %d: legend entry chain %d drawn %d times", kind, c+1, n)
			}
		}
		if cols, rows := g.size(); cols != 3 || rows != 2 {
			t.Errorf("5 panels in %d×%d, want 3 columns × 2 rows", cols, rows)
		}
		base := filepath.Join(t.TempDir(), "g")
		files, err := g.Save(base, "png", "svg")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil || len(b) < 1000 {
				t.Errorf("%s: %d bytes, %v", f, len(b), err)
			}
		}
		if len(files) != 2 || files[0] != base+".png" || files[1] != base+".svg" {
			t.Errorf("files %v", files)
		}
	}
}

func TestTracePointsKeepExtremes(t *testing.T) {
	x := make([]float64, 40*maxTracePoints)
	x[12345] = 99
	x[54321] = -99
	pts := tracePoints(x)
	if len(pts) > maxTracePoints {
		t.Errorf("%d points, want ≤ %d", len(pts), maxTracePoints)
	}
	var hi, lo bool
	for i, p := range pts {
		hi = hi || (p.X == 12345 && p.Y == 99)
		lo = lo || (p.X == 54321 && p.Y == -99)
		if i > 0 && p.X <= pts[i-1].X {
			t.Fatalf("points out of order at %d", i)
		}
	}
	if !hi || !lo {
		t.Errorf("extremes dropped: max kept %v, min kept %v", hi, lo)
	}
}

func TestChainGridErrors(t *testing.T) {
	for name, g := range map[string]ChainGrid{
		"empty":     {},
		"no draws":  {Names: []string{"a"}, Draws: [][][]float64{{{}}}},
		"names":     {Names: []string{"a", "b"}, Draws: [][][]float64{{{1}}}},
		"ragged":    {Names: []string{"a"}, Draws: [][][]float64{{{1, 2}, {1}}}},
		"chain cnt": {Names: []string{"a", "b"}, Draws: [][][]float64{{{1}}, {{1}, {2}}}},
	} {
		if err := g.Encode(&bytes.Buffer{}, "svg"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
