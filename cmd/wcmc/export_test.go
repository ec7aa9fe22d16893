package main

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/diagnostics"
	"github.com/wcmc-project/wcmc/inferencedata"
	"github.com/wcmc-project/wcmc/internal/pycheck"
)

// exportCheck opens the zarr store argv[1] with xarray and compares it
// with the .npy argv[2] (read by numpy), the sampler record argv[3] and
// the per-draw statistics argv[4] (.npz, read by numpy).
const exportCheck = `
import json, sys
import numpy as np, xarray as xr
store, samples, record, per_draw = sys.argv[1:5]
post = xr.open_zarr(store, group="posterior")
stats = xr.open_zarr(store, group="sample_stats")
want = np.load(samples)
rec = json.load(open(record))
th = post["theta"]
assert th.dims == ("chain", "draw", "theta_dim_0"), th.dims
assert th.shape == want.shape == (2, 50, 3), (th.shape, want.shape)
assert np.array_equal(th.values, want), "theta differs from the .npy"
assert list(post["theta_dim_0"].values) == [0, 1, 2]
assert stats["accept_rate"].dims == ("chain",)
assert stats["accept_rate"].values.tolist() == [s["accept_rate"] for s in rec["stats"]]
assert stats["divergences"].values.tolist() == [s["divergences"] for s in rec["stats"]]
assert post.attrs["sampler"] == rec["sampler"] == "hmc"
npz = np.load(per_draw)
assert sorted(npz.files) == sorted(rec["draw_stats"]), npz.files
for name, dtype in [("acceptance_rate", np.float64), ("accepted", np.bool_), ("lp", np.float64), ("step_size", np.float64), ("n_steps", np.int64), ("diverging", np.bool_)]:
    v = stats[name]
    assert v.dims == ("chain", "draw") and v.shape == (2, 50) and v.dtype == dtype, (name, v.dims, v.shape, v.dtype)
    assert np.array_equal(v.values, npz[name].astype(dtype)), name
# Without thinning the per-draw values are the transitions after burn-in.
for c, s in enumerate(rec["stats"]):
    assert np.isclose(stats["acceptance_rate"][c].mean(), s["mean_accept_prob"], rtol=1e-12)
    assert np.isclose(stats["accepted"][c].mean(), s["accept_rate"], rtol=1e-12)
    assert np.isclose(stats["step_size"][c].mean(), s["step_size"], rtol=1e-12)
    assert int(stats["diverging"][c].sum()) == s["divergences"]
assert np.isfinite(stats["lp"].values).all()
print("posterior:", dict(post.sizes), "theta", th.dtype, "max |diff| vs np.load:", float(abs(th.values - want).max()))
print("sample_stats:", {k: (stats[k].dims, str(stats[k].dtype)) for k in stats.data_vars})
print("attrs:", post.attrs)
`

// writePosterior draws the posterior of the steps' test data with s and
// seed and writes its files as wcmc posterior does, to in (.npy).
func writePosterior(t *testing.T, in string, s wcmc.Sampling, seed uint64) string {
	t.Helper()
	data, err := wcmc.LoadCSV(stepsData)
	if err != nil {
		t.Fatal(err)
	}
	draws, err := wcmc.PosteriorChains(data, s, seed)
	if err != nil {
		t.Fatal(err)
	}
	o, err := newSampleOutput(in, draws, s, seed, diagnostics.Recommended)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.write(); err != nil {
		t.Fatal(err)
	}
	return in
}

// TestExportOpensInXarray writes 2 HMC chains × 50 draws × 3 with their
// sampler record as wcmc posterior does, exports them and checks the store
// with xarray against numpy's reading of the .npy and the record.
func TestExportOpensInXarray(t *testing.T) {
	dir := t.TempDir()
	in := writePosterior(t, filepath.Join(dir, "post.npy"), wcmc.Sampling{S: 50, BurnIn: 30, PriorVar: 1, Sampler: wcmc.HMC, Chains: 2, Thin: 1}, 3)
	stdout, _, err := runCmd(newExportCmd(), in)
	if err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "post.zarr")
	if strings.TrimSpace(stdout) != store {
		t.Errorf("printed %q, want %s", stdout, store)
	}
	py := pycheck.Python(t, "xarray", "zarr", "numpy")
	out, err := exec.Command(py, "-c", exportCheck, store, in, recordPath(in), statsPath(in)).CombinedOutput()
	if err != nil {
		t.Fatalf("xarray check: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

func TestExportWithoutRecord(t *testing.T) {
	dir := t.TempDir()
	in, _ := writeTestChains(t, dir, "one.npy", 1, 40, 2)
	out := filepath.Join(dir, "x.zarr")
	_, stderr, err := runCmd(newExportCmd(), in, "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "one.sampler.json") {
		t.Errorf("no note on the missing record: %q", stderr)
	}
	for _, f := range []string{".zmetadata", "posterior/theta/0.0.0", "sample_stats/chain/0"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "sample_stats", "accept_rate")); !os.IsNotExist(err) {
		t.Errorf("statistics written without a record: %v", err)
	}
}

func TestExportErrors(t *testing.T) {
	dir := t.TempDir()
	in, _ := writeTestChains(t, dir, "s.npy", 2, 30, 3)
	other, _ := writeTestChains(t, dir, "t.npy", 3, 30, 3)
	// A record of another run beside s.npy.
	rec := samplerRecord{Format: samplerFormat, Sampler: "gibbs", Chains: 3, Draws: 30, Stats: make([]chainStats, 3)}
	if err := writeAll([]outFile{jsonFile(recordPath(in), rec)}); err != nil {
		t.Fatal(err)
	}
	notStore := filepath.Join(dir, "plain")
	if err := os.WriteFile(notStore, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{filepath.Join(dir, "missing.npy")}, "missing.npy"},
		{[]string{in}, "not its record"},
		{[]string{other, "--out", notStore}, "not a zarr store"},
		{[]string{other, "--out", other}, "is the input"},
	} {
		_, _, err := runCmd(newExportCmd(), c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("export %v: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}

// TestExportGibbsDrawStats: a Gibbs run's per-draw statistics are
// exported without lp (Gibbs does not compute it), every draw accepted
// with acceptance probability 1; a missing archive is an error naming it.
func TestExportGibbsDrawStats(t *testing.T) {
	in := writePosterior(t, filepath.Join(t.TempDir(), "g.npy"), wcmc.Sampling{S: 20, BurnIn: 5, PriorVar: 1, Sampler: wcmc.Gibbs, Chains: 1, Thin: 2}, 4)
	rec, err := readSamplerRecord(in, 20, 1)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := readDrawStats(statsPath(in), rec.DrawStats, 1, 20)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]inferencedata.DrawStat{}
	for _, st := range stats {
		got[st.Name] = st
	}
	if _, ok := got["lp"]; ok || len(got) != len(drawStats)-1 {
		t.Errorf("exported %v: want every statistic but lp", slices.Collect(maps.Keys(got)))
	}
	for i := range 20 {
		if got["acceptance_rate"].Values[0][i] != 1 || got["accepted"].Values[0][i] != 1 || got["diverging"].Values[0][i] != 0 {
			t.Fatalf("Gibbs draw %d: acceptance %v, accepted %v, diverging %v", i,
				got["acceptance_rate"].Values[0][i], got["accepted"].Values[0][i], got["diverging"].Values[0][i])
		}
	}
	if got["accepted"].Type != inferencedata.Bool || got["n_steps"].Type != inferencedata.Int64 {
		t.Errorf("types: accepted %v, n_steps %v", got["accepted"].Type, got["n_steps"].Type)
	}
	if err := os.Remove(statsPath(in)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCmd(newExportCmd(), in); err == nil || !strings.Contains(err.Error(), "g.sample_stats.npz") {
		t.Errorf("missing archive: error %v, want one naming it", err)
	}
}
