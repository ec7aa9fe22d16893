package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/npy"
)

// runCmd runs cmd with args and returns stdout, stderr and the error.
func runCmd(cmd *cobra.Command, args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

// writeTestChains writes c seeded chains of s draws × d to dir/name
// (2-D for one chain) and returns the path and the chains.
func writeTestChains(t *testing.T, dir, name string, c, s, d int) (string, []*mat.Dense) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(c), uint64(d)))
	chains := make([]*mat.Dense, c)
	for k := range chains {
		chains[k] = mat.NewDense(s, d, nil)
		for i := range s {
			for j := range d {
				chains[k].Set(i, j, float64(j)+rng.NormFloat64())
			}
		}
	}
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if c == 1 {
		err = npy.Write(f, chains[0])
	} else {
		err = npy.WriteChains(f, chains)
	}
	if err != nil {
		t.Fatal(err)
	}
	return path, chains
}

// panelTitles returns the parameter names theta[j] drawn as text in svg.
func panelTitles(svg []byte) []string {
	var out []string
	for _, part := range strings.Split(string(svg), ">theta[")[1:] {
		if i := strings.Index(part, "]</text>"); i >= 0 {
			out = append(out, "theta["+part[:i]+"]")
		}
	}
	return out
}

func TestPlotTraceAndRankFiles(t *testing.T) {
	dir := t.TempDir()
	in, _ := writeTestChains(t, dir, "s.npy", 3, 200, 12)
	for _, kind := range []string{"trace", "rank"} {
		// Default: the first maxPanels parameters, with a note, beside the input.
		stdout, stderr, err := runCmd(newPlotCmd(), kind, in)
		if err != nil {
			t.Fatalf("plot %s: %v", kind, err)
		}
		base := filepath.Join(dir, "s."+kind)
		if got, want := strings.Fields(stdout), []string{base + ".png", base + ".svg"}; !slices.Equal(got, want) {
			t.Errorf("plot %s printed %q, want %q", kind, got, want)
		}
		if !strings.Contains(stderr, "1–9 of 12") {
			t.Errorf("plot %s: no note on the parameters left out: %q", kind, stderr)
		}
		png, err := os.ReadFile(base + ".png")
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Errorf("%s.png is not a PNG (%v)", base, err)
		}
		svg, err := os.ReadFile(base + ".svg")
		if err != nil {
			t.Fatal(err)
		}
		if got := panelTitles(svg); len(got) != maxPanels || got[0] != "theta[1]" || got[8] != "theta[9]" {
			t.Errorf("plot %s: panels %v, want theta[1]…theta[9]", kind, got)
		}

		// --params and --out.
		out := filepath.Join(dir, "chosen-"+kind)
		if _, _, err := runCmd(newPlotCmd(), kind, in, "--params", "2-3,12", "--out", out+".svg"); err != nil {
			t.Fatal(err)
		}
		svg, err = os.ReadFile(out + ".svg")
		if err != nil {
			t.Fatal(err)
		}
		if got := panelTitles(svg); !slices.Equal(got, []string{"theta[2]", "theta[3]", "theta[12]"}) {
			t.Errorf("plot %s --params 2-3,12: panels %v", kind, got)
		}
		if _, err := os.Stat(out + ".png"); err != nil {
			t.Error(err)
		}
	}
}

func TestPlotOneChain(t *testing.T) {
	in, _ := writeTestChains(t, t.TempDir(), "one.npy", 1, 100, 2)
	if _, _, err := runCmd(newPlotCmd(), "rank", in, "--bins", "10"); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(strings.TrimSuffix(in, ".npy") + ".rank.svg")
	if err != nil {
		t.Fatal(err)
	}
	if got := panelTitles(svg); len(got) != 2 {
		t.Errorf("panels %v, want 2", got)
	}
}

func TestPlotErrors(t *testing.T) {
	dir := t.TempDir()
	in, _ := writeTestChains(t, dir, "s.npy", 2, 20, 4)
	bad := filepath.Join(dir, "bad.npy")
	if err := os.WriteFile(bad, []byte("not numpy"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"trace", filepath.Join(dir, "missing.npy")}, "missing.npy"},
		{[]string{"trace", bad}, "bad.npy"},
		{[]string{"trace", in, "--params", "0-2"}, "outside the parameters 1–4"},
		{[]string{"trace", in, "--params", "3-5"}, "outside the parameters 1–4"},
		{[]string{"rank", in, "--params", "x"}, "not a parameter number"},
		{[]string{"rank", in, "--bins", "0"}, "--bins 0"},
		{[]string{"trace", in, "--out", filepath.Join(dir, "no", "such", "dir", "x")}, "writing"},
		{[]string{"trace"}, "accepts 1 arg"},
	} {
		_, _, err := runCmd(newPlotCmd(), c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("plot %v: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}

func TestParseParams(t *testing.T) {
	for spec, want := range map[string][]int{
		"":        {0, 1, 2, 3, 4},
		"all":     {0, 1, 2, 3, 4},
		"1-3":     {0, 1, 2},
		"5,1-2,2": {4, 0, 1},
		" 4 ":     {3},
	} {
		got, err := parseParams(spec, 5)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("parseParams(%q) = %v, %v; want %v", spec, got, err, want)
		}
	}
	for _, spec := range []string{"0", "6", "3-2", "1-", "a", "1,,2"} {
		if got, err := parseParams(spec, 5); err == nil {
			t.Errorf("parseParams(%q) = %v, want an error", spec, got)
		}
	}
}
