package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"wcmc"
	"wcmc/diagnostics"
	"wcmc/internal/pycheck"
)

// exportCheck opens the zarr store argv[1] with xarray and compares it
// with the .npy argv[2] (read by numpy) and the sampler record argv[3].
const exportCheck = `
import json, sys
import numpy as np, xarray as xr
store, samples, record = sys.argv[1:4]
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
print("posterior:", dict(post.sizes), "theta", th.dtype, "max |diff| vs np.load:", float(abs(th.values - want).max()))
print("sample_stats:", {k: stats[k].values.tolist() for k in stats.data_vars})
print("attrs:", post.attrs)
`

// TestExportOpensInXarray writes 2 HMC chains × 50 draws × 3 with their
// sampler record as wcmc posterior does, exports them and checks the store
// with xarray against numpy's reading of the .npy and the record.
func TestExportOpensInXarray(t *testing.T) {
	dir := t.TempDir()
	data, err := wcmc.LoadCSV(stepsData)
	if err != nil {
		t.Fatal(err)
	}
	s := wcmc.Sampling{S: 50, BurnIn: 30, PriorVar: 1, Sampler: wcmc.HMC, Chains: 2, Thin: 1}
	draws, err := wcmc.PosteriorChains(data, s, 3)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "post.npy")
	o, err := newSampleOutput(in, draws, s, 3, diagnostics.Recommended)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.write(); err != nil {
		t.Fatal(err)
	}
	stdout, _, err := runCmd(newExportCmd(), in)
	if err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "post.zarr")
	if strings.TrimSpace(stdout) != store {
		t.Errorf("printed %q, want %s", stdout, store)
	}
	py := pycheck.Python(t, "xarray", "zarr", "numpy")
	out, err := exec.Command(py, "-c", exportCheck, store, in, recordPath(in)).CombinedOutput()
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
