package main

// Regression tests of the sidecar and extreme-input audit: each case
// panicked, or succeeded with a meaningless answer, before.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/npy"

	"github.com/wcmc-project/wcmc/channel"
)

// scaleNPY multiplies the array at path by c in place.
func scaleNPY(t *testing.T, path string, c float64) {
	t.Helper()
	m := mustNPY(t, path)
	m.Scale(c, m)
	if err := npy.WriteFile(path, m); err != nil {
		t.Fatal(err)
	}
}

// editJSON rewrites the JSON object at path with edit applied.
func editJSON(t *testing.T, path string, edit func(map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	edit(v)
	if b, err = json.Marshal(v); err != nil {
		t.Fatal(err)
	}
	writeText(t, path, string(b))
}

// TestAggregateRefusesExtremeInputs: received signals or samples ×1e160,
// and a link.json with a denormal P_k, panicked with "consensus: symmetric
// eigendecomposition failed"; N0 = 1e300 gave all-zero samples and exit 0.
// Each is now an error naming the problem.
func TestAggregateRefusesExtremeInputs(t *testing.T) {
	dir := t.TempDir()
	stepsFixture(t, dir)
	p := func(n string) string { return filepath.Join(dir, n) }
	rx := func(name, src string, edit func(dir string)) string {
		d := p(name)
		copyDir(t, p(src), d)
		edit(d)
		return d
	}
	big := func(d string) {
		files, _ := filepath.Glob(filepath.Join(d, "*.npy"))
		for _, f := range files {
			scaleNPY(t, f, 1e160)
		}
	}
	link := func(edit func(map[string]any)) func(string) {
		return func(d string) { editJSON(t, filepath.Join(d, "link.json"), edit) }
	}
	bigOMA := rx("big-oma", "rx-oma", big)
	bigNOMA := rx("big-noma", "rx-noma", big)
	tinyPk := rx("tiny-pk", "rx-oma", link(func(v map[string]any) { v["P_k"] = []float64{5e-324, 5e-324} }))
	hugeN0 := rx("huge-n0", "rx-oma", link(func(v map[string]any) { v["N0"] = 1e300 }))
	hugeN0NOMA := rx("huge-n0-noma", "rx-noma", link(func(v map[string]any) { v["N0"] = 1e300 }))
	for _, s := range []string{"1", "2"} {
		src := p("samples/samples-" + s + ".npy")
		b, _ := os.ReadFile(src)
		writeText(t, p("big-samples/samples-"+s+".npy"), string(b))
		scaleNPY(t, p("big-samples/samples-"+s+".npy"), 1e160)
	}
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"wgcmc oma ×1e160", []string{"--rx", bigOMA, "--scheme", "wgcmc"}, []string{"received-1.npy", "rescale"}},
		{"gcmc oma ×1e160", []string{"--rx", bigOMA, "--scheme", "gcmc"}, []string{"received-1.npy", "rescale"}},
		{"wgcmc noma ×1e160", []string{"--rx", bigNOMA, "--scheme", "wgcmc"}, []string{"received.npy", "rescale"}},
		{"cmc-noiseless ×1e160", []string{"--scheme", "cmc-noiseless", p("big-samples/samples-1.npy"), p("big-samples/samples-2.npy")}, []string{"samples-1.npy", "rescale"}},
		{"denormal P_k", []string{"--rx", tinyPk, "--scheme", "wgcmc"}, []string{"P_k of worker 1", "5e-324"}},
		{"N0 1e300 oma", []string{"--rx", hugeN0, "--scheme", "wgcmc"}, []string{"N0 = 1e+300", "link.json"}},
		{"N0 1e300 noma", []string{"--rx", hugeN0NOMA, "--scheme", "wgcmc"}, []string{"N0 = 1e+300", "link.json"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := p("out-" + filepath.Base(t.Name()) + ".npy")
			_, err := runSteps(append([]string{"aggregate", "--out", out}, c.args...)...)
			wantError(t, c.name, err, c.want...)
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s written", out)
			}
		})
	}
}

// TestSampleChecksPartition: a partition.json with K = 1e9 made worker 1
// run as "worker 1 of 1000000000"; K must match the shards it lists, and
// the shard must be one of them.
func TestSampleChecksPartition(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "partition", "--data", stepsData, "--K", "2", "--out", dir)
	meta := filepath.Join(dir, "partition.json")
	run := func() error {
		_, err := runSteps("sample", "--shard", filepath.Join(dir, "shard-1.csv"), "--worker", "1", "--S", "5", "--burnin", "1", "--out", filepath.Join(dir, "s.npy"))
		return err
	}
	editJSON(t, meta, func(v map[string]any) { v["K"] = 1000000000 })
	wantError(t, "K = 1e9", run(), "K = 1000000000", "2 shards")
	editJSON(t, meta, func(v map[string]any) { v["K"] = 2; v["sizes"] = []int{250, 250} })
	wantError(t, "sizes", run(), "sizes", "N = 400")
	editJSON(t, meta, func(v map[string]any) { v["sizes"] = []int{200, 200}; v["shards"] = []string{"a.csv", "b.csv"} })
	wantError(t, "shard not listed", run(), "shard-1.csv", "not one of")
}

// TestSampleChecksShardRows: a self-consistent partition.json of another
// partition (K = 2) beside a K = 4 shard is refused, since the shard's
// rows contradict the size it records, instead of tempering with K = 2.
func TestSampleChecksShardRows(t *testing.T) {
	four, two := t.TempDir(), t.TempDir()
	mustRun(t, "partition", "--data", stepsData, "--K", "4", "--out", four)
	mustRun(t, "partition", "--data", stepsData, "--K", "2", "--out", two)
	other, err := os.ReadFile(filepath.Join(two, "partition.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(four, "partition.json"), other, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = runSteps("sample", "--shard", filepath.Join(four, "shard-1.csv"), "--worker", "1", "--S", "5", "--burnin", "1", "--out", filepath.Join(four, "s.npy"))
	wantError(t, "K = 2 partition.json beside a K = 4 shard", err, "shard-1.csv has 100 rows", "records 200 rows", "different partitions (K = 2 there)")
	if _, err := os.Stat(filepath.Join(four, "s.npy")); err == nil {
		t.Error("s.npy written")
	}
}

// TestAggregateRefusesDivergedSGD: `--optimizer sgd --eta 1e10` reported
// "objective 184.9 → 1.48e18 … iteration-cap" and exit 0 with θ ≈ 2e8.
func TestAggregateRefusesDivergedSGD(t *testing.T) {
	dir := t.TempDir()
	stepsFixture(t, dir)
	p := func(n string) string { return filepath.Join(dir, n) }
	_, err := runSteps("aggregate", "--rx", p("rx-oma"), "--data", stepsData, "--optimizer", "sgd", "--eta", "1e10", "--out", p("g.npy"))
	wantError(t, "sgd --eta 1e10", err, "diverged", "--eta", "lbfgs")
	if _, err := os.Stat(p("g.npy")); err == nil {
		t.Error("g.npy written")
	}
	// The paper's step still runs.
	mustRun(t, "aggregate", "--rx", p("rx-oma"), "--data", stepsData, "--optimizer", "sgd", "--out", p("g.npy"))
	mustNPY(t, p("g.npy"))
}

// An absurd iteration count is refused before any work.
func TestAggregateBoundsIters(t *testing.T) {
	if _, err := optimizerFlags("sgd", channel.OMA, 1e-3, 1_000_000_000_000, 0, 0.2, false); err == nil || !strings.Contains(err.Error(), "--iters") {
		t.Errorf("--iters 1e12: %v", err)
	}
	if _, err := optimizerFlags("sgd", channel.OMA, 1e-3, 50, 0, 0.2, false); err != nil {
		t.Errorf("--iters 50: %v", err)
	}
}

// An optimiser that makes no progress (Adam with an absurd step stops on
// the held-out objective at its start) warns that the map written is the
// start, rather than reporting success silently.
func TestAggregateWarnsNoProgress(t *testing.T) {
	dir := t.TempDir()
	stepsFixture(t, dir)
	p := func(n string) string { return filepath.Join(dir, n) }
	var out, errb bytes.Buffer
	root := newRootCmd(nil, &out, &errb)
	root.SetArgs([]string{"aggregate", "--rx", p("rx-oma"), "--data", stepsData, "--optimizer", "adam", "--eta", "1e10", "--out", p("g.npy")})
	if err := root.ExecuteContext(context.Background()); err != nil {
		if !strings.Contains(err.Error(), "diverged") {
			t.Fatalf("adam --eta 1e10: %v", err)
		}
		return // refused as diverged: also not a silent success
	}
	t.Logf("stderr: %s", errb.String())
	if !strings.Contains(errb.String(), "made no progress") {
		t.Errorf("adam --eta 1e10 wrote its start map without a warning:\n%s\n%s", out.String(), errb.String())
	}
	errb.Reset()
	mustRun(t, "aggregate", "--rx", p("rx-oma"), "--data", stepsData, "--out", p("g2.npy"))
}
