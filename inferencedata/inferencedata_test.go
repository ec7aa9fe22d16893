package inferencedata

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/internal/pycheck"
)

// testData returns 2 chains × 50 draws × 3 of seeded normal values (chain c
// shifted by 10c, so that a swapped chain or axis shows), two per-chain
// stats and three per-draw stats (see drawValue).
func testData() Data {
	rng := rand.New(rand.NewPCG(1, 2))
	var chains []*mat.Dense
	for c := range 2 {
		m := mat.NewDense(50, 3, nil)
		for i := range 50 {
			for j := range 3 {
				m.Set(i, j, 10*float64(c)+float64(j)+rng.NormFloat64())
			}
		}
		chains = append(chains, m)
	}
	draw := func(name string, t Type) DrawStat {
		st := DrawStat{Name: name, Type: t}
		for c := range 2 {
			v := make([]float64, 50)
			for i := range v {
				v[i] = drawValue(t, c, i)
			}
			st.Values = append(st.Values, v)
		}
		return st
	}
	return Data{
		Posterior: chains,
		Stats: []Stat{
			{Name: "accept_rate", Values: []float64{0.91, 0.87}},
			{Name: "divergences", Values: []float64{0, 3}, Int: true},
		},
		DrawStats: []DrawStat{draw("acceptance_rate", Float64), draw("n_steps", Int64), draw("diverging", Bool)},
		Attrs:     map[string]any{"inference_library": "wcmc", "sampler": "hmc"},
	}
}

// drawValue is the value of draw i of chain c of testData's per-draw stat
// of type t: (c + i/100) as a float, 7c + i as an integer, i mod 7 = 3 as a
// boolean.
func drawValue(t Type, c, i int) float64 {
	switch t {
	case Int64:
		return float64(7*c + i)
	case Bool:
		if i%7 == 3 {
			return 1
		}
		return 0
	}
	return float64(c) + float64(i)/100
}

// readArray decodes the zarr array at dir (written by Write): its
// metadata, dims and values.
func readArray(t *testing.T, dir string) (zarray, []string, []float64) {
	t.Helper()
	var z zarray
	var attrs struct {
		Dims []string `json:"_ARRAY_DIMENSIONS"`
	}
	for name, v := range map[string]any{".zarray": &z, ".zattrs": &attrs} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s/%s: %v", dir, name, err)
		}
	}
	n := 1
	for _, s := range z.Shape {
		n *= s
	}
	var out []float64
	names := []string{"0"}
	if len(z.Shape) == 2 {
		names = []string{"0.0"}
	}
	if len(z.Shape) == 3 {
		names = nil
		for c := range z.Shape[0] {
			names = append(names, fmt.Sprintf("%d.0.0", c))
		}
	}
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if z.Dtype == "|b1" {
			for _, x := range b {
				out = append(out, float64(x))
			}
			continue
		}
		for i := 0; i+8 <= len(b); i += 8 {
			u := binary.LittleEndian.Uint64(b[i:])
			if z.Dtype == "<i8" {
				out = append(out, float64(int64(u)))
			} else {
				out = append(out, math.Float64frombits(u))
			}
		}
	}
	if len(out) != n {
		t.Fatalf("%s: %d values for shape %v", dir, len(out), z.Shape)
	}
	return z, attrs.Dims, out
}

func TestWriteLayout(t *testing.T) {
	d := testData()
	path := filepath.Join(t.TempDir(), "s.zarr")
	if err := Write(path, d); err != nil {
		t.Fatal(err)
	}
	z, dims, v := readArray(t, filepath.Join(path, "posterior", Var))
	if got, want := strings.Join(dims, ","), "chain,draw,theta_dim_0"; got != want {
		t.Errorf("theta dims %s, want %s", got, want)
	}
	if z.Dtype != "<f8" || z.Compressor != nil || z.Order != "C" || z.ZarrFormat != 2 {
		t.Errorf("theta .zarray %+v", z)
	}
	for c, m := range d.Posterior {
		for i := range 50 {
			for j := range 3 {
				if got := v[(c*50+i)*3+j]; got != m.At(i, j) {
					t.Fatalf("theta[%d,%d,%d] = %v, want %v", c, i, j, got, m.At(i, j))
				}
			}
		}
	}
	_, dims, v = readArray(t, filepath.Join(path, "sample_stats", "divergences"))
	if len(dims) != 1 || dims[0] != Chain || v[0] != 0 || v[1] != 3 {
		t.Errorf("divergences dims %v values %v", dims, v)
	}
	for _, st := range d.DrawStats {
		z, dims, v := readArray(t, filepath.Join(path, "sample_stats", st.Name))
		if got := strings.Join(dims, ","); got != "chain,draw" || z.Dtype != dtypes[st.Type] {
			t.Errorf("%s: dims %s dtype %s, want chain,draw and %s", st.Name, got, z.Dtype, dtypes[st.Type])
		}
		for c := range 2 {
			for i := range 50 {
				if got, want := v[c*50+i], drawValue(st.Type, c, i); got != want {
					t.Fatalf("%s[%d,%d] = %v, want %v", st.Name, c, i, got, want)
				}
			}
		}
	}
	if _, _, v = readArray(t, filepath.Join(path, "sample_stats", Draw)); len(v) != 50 || v[49] != 49 {
		t.Errorf("sample_stats draw coordinate %v", v)
	}
	for _, g := range []string{"posterior", "sample_stats"} {
		_, _, v = readArray(t, filepath.Join(path, g, Chain))
		if len(v) != 2 || v[0] != 0 || v[1] != 1 {
			t.Errorf("%s chain coordinate %v", g, v)
		}
	}
	var cons struct {
		Metadata map[string]json.RawMessage `json:"metadata"`
	}
	b, err := os.ReadFile(filepath.Join(path, ".zmetadata"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cons); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{".zgroup", "posterior/.zgroup", "posterior/theta/.zarray", "posterior/theta/.zattrs", "sample_stats/accept_rate/.zarray"} {
		if _, ok := cons.Metadata[k]; !ok {
			t.Errorf(".zmetadata lacks %s", k)
		}
	}
}

func TestWriteReplacesOnlyStores(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.zarr")
	d := testData()
	if err := Write(path, d); err != nil {
		t.Fatal(err)
	}
	d.Stats = nil
	if err := Write(path, d); err != nil {
		t.Fatalf("rewriting a store: %v", err)
	}
	if _, err := os.Stat(filepath.Join(path, "sample_stats", "accept_rate")); !os.IsNotExist(err) {
		t.Errorf("old store's files survive the rewrite: %v", err)
	}
	other := filepath.Join(dir, "notes")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(other, d); err == nil || !strings.Contains(err.Error(), "not a zarr store") {
		t.Errorf("writing over a plain directory: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("temporary directories left: %v", entries)
	}
}

func TestBadData(t *testing.T) {
	d := testData()
	for name, mod := range map[string]func(*Data){
		"no chains":   func(d *Data) { d.Posterior = nil },
		"ragged":      func(d *Data) { d.Posterior[1] = mat.NewDense(49, 3, nil) },
		"stat length": func(d *Data) { d.Stats[0].Values = []float64{1} },
		"stat name":   func(d *Data) { d.Stats[0].Name = "chain" },
		"path name":   func(d *Data) { d.Stats[0].Name = "../x" },
		"draw chains": func(d *Data) { d.DrawStats[0].Values = d.DrawStats[0].Values[:1] },
		"draw count":  func(d *Data) { d.DrawStats[1].Values = [][]float64{make([]float64, 50), make([]float64, 49)} },
		"draw name":   func(d *Data) { d.DrawStats[2].Name = "accept_rate" },
		"draw type":   func(d *Data) { d.DrawStats[0].Type = 7 },
	} {
		dd := d
		dd.Posterior = append([]*mat.Dense(nil), d.Posterior...)
		dd.Stats = append([]Stat(nil), d.Stats...)
		dd.DrawStats = append([]DrawStat(nil), d.DrawStats...)
		mod(&dd)
		if err := Write(filepath.Join(t.TempDir(), "s.zarr"), dd); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// xarrayCheck opens the store at its first argument with xarray and
// checks dims, coordinates, values (against the .npy-free expectation
// passed as JSON) and attributes; it prints what it saw.
const xarrayCheck = `
import json, sys
import numpy as np, xarray as xr
path, want = sys.argv[1], json.loads(sys.argv[2])
post = xr.open_zarr(path, group="posterior")
stats = xr.open_zarr(path, group="sample_stats")
th = post["theta"]
assert th.dims == ("chain", "draw", "theta_dim_0"), th.dims
assert th.shape == (2, 50, 3), th.shape
assert list(post["chain"].values) == [0, 1] and list(post["draw"].values) == list(range(50))
assert np.array_equal(th.values, np.array(want["theta"])), "theta values differ"
assert stats["accept_rate"].dims == ("chain",)
assert np.allclose(stats["accept_rate"].values, [0.91, 0.87])
assert stats["divergences"].dtype == np.int64 and list(stats["divergences"].values) == [0, 3]
c, i = np.meshgrid(np.arange(2), np.arange(50), indexing="ij")
for name, dtype, values in [("acceptance_rate", np.float64, c + i / 100), ("n_steps", np.int64, 7 * c + i), ("diverging", np.bool_, i % 7 == 3)]:
    v = stats[name]
    assert v.dims == ("chain", "draw") and v.dtype == dtype, (name, v.dims, v.dtype)
    assert np.array_equal(v.values, values), name
assert list(stats["draw"].values) == list(range(50))
assert post.attrs["sampler"] == "hmc"
print("xarray", xr.__version__, "dims", dict(post.sizes), "theta[1,49,2] =", float(th[1, 49, 2]))
print("sample_stats", {k: (stats[k].dims, str(stats[k].dtype)) for k in stats.data_vars})
`

func TestXarrayReads(t *testing.T) {
	py := pycheck.Python(t, "xarray", "zarr", "numpy")
	d := testData()
	path := filepath.Join(t.TempDir(), "s.zarr")
	if err := Write(path, d); err != nil {
		t.Fatal(err)
	}
	var theta [][][]float64
	for _, m := range d.Posterior {
		var rows [][]float64
		for i := range 50 {
			rows = append(rows, mat.Row(nil, i, m))
		}
		theta = append(theta, rows)
	}
	want, err := json.Marshal(map[string]any{"theta": theta})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "-c", xarrayCheck, path, string(want)).CombinedOutput()
	if err != nil {
		t.Fatalf("xarray check failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
