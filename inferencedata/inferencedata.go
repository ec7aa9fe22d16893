// Package inferencedata writes Markov chain draws in the layout of ArviZ's
// InferenceData as a zarr (format 2) store, which Python users open in one
// line:
//
//	idata = arviz.from_zarr("samples.zarr")
//	post  = xarray.open_zarr("samples.zarr", group="posterior")
//
// The store is a directory: the root group holds the groups "posterior"
// (the variable theta, dims chain × draw × theta_dim_0) and "sample_stats"
// (sampler statistics per draw, dims chain × draw, as ArviZ expects them,
// and per chain, dim chain), each with the integer coordinates chain =
// 0…C−1, draw = 0…S−1 and theta_dim_0 = 0…d−1 (those it uses). Every
// group is a ".zgroup" and ".zattrs" file; every array a ".zarray" file
// (shape, chunks, dtype "<f8", "<i8" or "|b1", no compressor or filters, C
// order) with ".zattrs" holding the "_ARRAY_DIMENSIONS" xarray reads
// dimension names from, beside its chunks: raw little-endian values in C
// order, one chunk per chain for theta (files "c.0.0") and one chunk
// otherwise (file "0", or "0.0" for a 2-D array). A ".zmetadata" file at
// the root consolidates all the metadata, so that xarray opens the store
// without listing it.
//
// Zarr was chosen over netCDF4 because netCDF4 is HDF5, which has no
// writer in pure Go (the Go bindings use cgo), while zarr format 2 is JSON
// plus raw bytes; netCDF3 classic is plain binary too but has no groups.
package inferencedata

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"gonum.org/v1/gonum/mat"
)

// Dimension and variable names, as ArviZ names them for a vector
// parameter theta.
const (
	Chain    = "chain"
	Draw     = "draw"
	Var      = "theta"
	ThetaDim = "theta_dim_0"
)

// Data is what the store holds.
type Data struct {
	// Posterior are the chains, each S×d: the variable theta of the
	// posterior group. All chains have the same shape.
	Posterior []*mat.Dense
	// Stats are per-chain sampler statistics of the sample_stats group:
	// each one value per chain, a variable of dim chain.
	Stats []Stat
	// DrawStats are per-draw sampler statistics of the sample_stats
	// group, variables of dims (chain, draw). Without Stats and DrawStats
	// the group holds the coordinates only.
	DrawStats []DrawStat
	// Attrs are attributes of the posterior and sample_stats groups (e.g.
	// "inference_library": "wcmc", "sampler": "hmc"); values must encode
	// as JSON.
	Attrs map[string]any
}

// Stat is one per-chain sampler statistic: Values[c] for chain c. Integer
// statistics (counts) are stored as int64 when Int is true.
type Stat struct {
	Name   string
	Values []float64
	Int    bool
}

// Type is how a DrawStat's values are stored.
type Type int

const (
	Float64 Type = iota // "<f8"
	Int64               // "<i8", the values truncated
	Bool                // "|b1", a value ≠ 0 being true
)

// DrawStat is one sampler statistic per draw: Values[c][i] for draw i of
// chain c, stored as Type.
type DrawStat struct {
	Name   string
	Values [][]float64
	Type   Type
}

// array is one zarr array: metadata and the chunks' bytes by file name.
type array struct {
	name   string
	dims   []string
	shape  []int
	chunks []int
	dtype  string
	files  map[string][]byte
}

// zarray is the ".zarray" metadata of zarr format 2.
type zarray struct {
	Chunks     []int  `json:"chunks"`
	Compressor any    `json:"compressor"`
	Dtype      string `json:"dtype"`
	FillValue  any    `json:"fill_value"`
	Filters    any    `json:"filters"`
	Order      string `json:"order"`
	Shape      []int  `json:"shape"`
	ZarrFormat int    `json:"zarr_format"`
}

// check reports what is wrong with d.
func (d Data) check() error {
	if len(d.Posterior) == 0 {
		return errors.New("inferencedata: no chains")
	}
	s, p := d.Posterior[0].Dims()
	for c, m := range d.Posterior {
		if r, q := m.Dims(); r != s || q != p {
			return fmt.Errorf("inferencedata: chain %d is %d×%d, chain 1 is %d×%d", c+1, r, q, s, p)
		}
	}
	seen := map[string]bool{Chain: true, Draw: true, ThetaDim: true}
	name := func(n string) error {
		if n == "" || seen[n] || n[0] == '.' || filepath.Base(n) != n {
			return fmt.Errorf("inferencedata: bad or repeated sample_stats name %q", n)
		}
		seen[n] = true
		return nil
	}
	for _, st := range d.Stats {
		if err := name(st.Name); err != nil {
			return err
		}
		if len(st.Values) != len(d.Posterior) {
			return fmt.Errorf("inferencedata: sample_stats %s has %d values for %d chains", st.Name, len(st.Values), len(d.Posterior))
		}
	}
	for _, st := range d.DrawStats {
		if err := name(st.Name); err != nil {
			return err
		}
		if st.Type < Float64 || st.Type > Bool {
			return fmt.Errorf("inferencedata: sample_stats %s has unknown type %d", st.Name, st.Type)
		}
		if len(st.Values) != len(d.Posterior) {
			return fmt.Errorf("inferencedata: sample_stats %s has %d chains, the posterior %d", st.Name, len(st.Values), len(d.Posterior))
		}
		for c, v := range st.Values {
			if len(v) != s {
				return fmt.Errorf("inferencedata: sample_stats %s has %d draws in chain %d, the posterior %d", st.Name, len(v), c+1, s)
			}
		}
	}
	return nil
}

// encode returns the bytes of v stored as t (little-endian).
func encode(v []float64, t Type) []byte {
	var b bytes.Buffer
	for _, x := range v {
		switch t {
		case Int64:
			binary.Write(&b, binary.LittleEndian, int64(x))
		case Bool:
			if x != 0 {
				b.WriteByte(1)
			} else {
				b.WriteByte(0)
			}
		default:
			binary.Write(&b, binary.LittleEndian, math.Float64bits(x))
		}
	}
	return b.Bytes()
}

// dtypes are the zarr dtypes of the Types.
var dtypes = [...]string{Float64: "<f8", Int64: "<i8", Bool: "|b1"}

// index returns the coordinate 0, 1, …, n−1 of dim as an int64 array.
func index(dim string, n int) array {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i)
	}
	return array{dim, []string{dim}, []int{n}, []int{max(n, 1)}, "<i8", map[string][]byte{"0": encode(v, Int64)}}
}

// groups returns the arrays of each group of d.
func (d Data) groups() map[string][]array {
	c := len(d.Posterior)
	s, p := d.Posterior[0].Dims()
	theta := array{Var, []string{Chain, Draw, ThetaDim}, []int{c, s, p}, []int{1, max(s, 1), max(p, 1)}, "<f8", map[string][]byte{}}
	for k, m := range d.Posterior {
		row := make([]float64, 0, s*p)
		for i := range s {
			row = append(row, m.RawRowView(i)...)
		}
		theta.files[fmt.Sprintf("%d.0.0", k)] = encode(row, Float64)
	}
	post := []array{theta, index(Chain, c), index(Draw, s), index(ThetaDim, p)}
	stats := []array{index(Chain, c)}
	if len(d.DrawStats) > 0 {
		stats = append(stats, index(Draw, s))
	}
	for _, st := range d.DrawStats {
		var all []float64
		for _, v := range st.Values {
			all = append(all, v...)
		}
		stats = append(stats, array{st.Name, []string{Chain, Draw}, []int{c, s}, []int{c, max(s, 1)}, dtypes[st.Type],
			map[string][]byte{"0.0": encode(all, st.Type)}})
	}
	for _, st := range d.Stats {
		t := Float64
		if st.Int {
			t = Int64
		}
		stats = append(stats, array{st.Name, []string{Chain}, []int{c}, []int{c}, dtypes[t], map[string][]byte{"0": encode(st.Values, t)}})
	}
	return map[string][]array{"posterior": post, "sample_stats": stats}
}

// creator is the root attribute that marks a store Write wrote.
const creator = "wcmc"

// Write writes d as a zarr store at the directory path, replacing a store
// that Write wrote there (its root .zattrs has created_by "wcmc" and it
// holds only the files its .zmetadata lists and their arrays' chunks) and
// refusing any other existing file or directory, so that it never deletes
// what it did not write. The store is written beside path and renamed
// into place, so that readers never see half a store.
func Write(path string, d Data) error {
	if err := d.check(); err != nil {
		return err
	}
	replace := false
	if fi, err := os.Stat(path); err == nil {
		if _, err := os.Stat(filepath.Join(path, ".zgroup")); !fi.IsDir() || err != nil {
			return fmt.Errorf("%s exists and is not a zarr store; not overwriting it", path)
		}
		if err := ownStore(path); err != nil {
			return fmt.Errorf("%s: %w; not overwriting it (remove it or choose another path)", path, err)
		}
		replace = true
	}
	tmp, err := os.MkdirTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := d.writeTo(tmp); err != nil {
		return writeError(path, tmp, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if replace {
		if err := os.RemoveAll(path); err != nil {
			return err
		}
	}
	return os.Rename(tmp, path)
}

// writeError is the error of writing the store at path through the
// temporary directory tmp (removed on return): err with its file named
// under path, saying when a file size limit or a full disk is the cause.
func writeError(path, tmp string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if rel, rerr := filepath.Rel(filepath.Clean(tmp), filepath.Clean(pe.Path)); rerr == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			pe.Path = filepath.Join(path, rel)
		}
	}
	switch {
	case errors.Is(err, syscall.EFBIG):
		return fmt.Errorf("writing %s: %w (a file size limit, ulimit -f, was reached; nothing was written)", path, err)
	case errors.Is(err, syscall.ENOSPC):
		return fmt.Errorf("writing %s: %w (the disk is full; nothing was written)", path, err)
	}
	return fmt.Errorf("writing %s: %w", path, err)
}

// writeTo writes the store's files under the existing directory dir.
func (d Data) writeTo(dir string) error {
	meta := map[string]any{}
	put := func(rel string, v any) error {
		meta[filepath.ToSlash(rel)] = v
		b, err := json.MarshalIndent(v, "", "    ")
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), append(b, '\n'), 0o644)
	}
	group := map[string]int{"zarr_format": 2}
	if err := put(".zgroup", group); err != nil {
		return err
	}
	if err := put(".zattrs", map[string]any{"created_by": creator}); err != nil {
		return err
	}
	attrs := d.Attrs
	if attrs == nil {
		attrs = map[string]any{}
	}
	groups := d.groups()
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		if err := os.Mkdir(filepath.Join(dir, g), 0o755); err != nil {
			return err
		}
		if err := put(filepath.Join(g, ".zgroup"), group); err != nil {
			return err
		}
		if err := put(filepath.Join(g, ".zattrs"), attrs); err != nil {
			return err
		}
		for _, a := range groups[g] {
			rel := filepath.Join(g, a.name)
			if err := os.Mkdir(filepath.Join(dir, rel), 0o755); err != nil {
				return err
			}
			z := zarray{Chunks: a.chunks, Dtype: a.dtype, Order: "C", Shape: a.shape, ZarrFormat: 2}
			if err := put(filepath.Join(rel, ".zarray"), z); err != nil {
				return err
			}
			if err := put(filepath.Join(rel, ".zattrs"), map[string]any{"_ARRAY_DIMENSIONS": a.dims}); err != nil {
				return err
			}
			for name, b := range a.files {
				if err := os.WriteFile(filepath.Join(dir, rel, name), b, 0o644); err != nil {
					return err
				}
			}
		}
	}
	b, err := json.MarshalIndent(map[string]any{"metadata": meta, "zarr_consolidated_format": 1}, "", "    ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ".zmetadata"), append(b, '\n'), 0o644)
}

// ownStore returns nil when the zarr store at path is one Write wrote and
// holds nothing else, else an error naming what is foreign.
func ownStore(path string) error {
	var attrs struct {
		CreatedBy string `json:"created_by"`
	}
	var cons struct {
		Metadata map[string]json.RawMessage `json:"metadata"`
	}
	for f, v := range map[string]any{".zattrs": &attrs, ".zmetadata": &cons} {
		b, err := os.ReadFile(filepath.Join(path, f))
		if err == nil {
			err = json.Unmarshal(b, v)
		}
		if err != nil {
			return fmt.Errorf("a zarr store wcmc did not write (%s: %v)", f, err)
		}
	}
	if attrs.CreatedBy != creator {
		return errors.New("a zarr store wcmc did not write (no created_by \"wcmc\" in its .zattrs)")
	}
	known := func(rel string) bool { _, ok := cons.Metadata[rel]; return ok }
	return filepath.WalkDir(path, func(p string, e fs.DirEntry, err error) error {
		if err != nil || p == path {
			return err
		}
		rel, err := filepath.Rel(path, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		dir := pathpkg.Dir(rel)
		switch {
		case e.IsDir() && (known(rel+"/.zgroup") || known(rel+"/.zarray")):
		case !e.IsDir() && (known(rel) || rel == ".zmetadata" || known(dir+"/.zarray") && isChunk(e.Name())):
		default:
			return fmt.Errorf("it holds %s, which wcmc did not write", rel)
		}
		return nil
	})
}

// isChunk reports whether name is a chunk file's: chunk indices joined by dots.
func isChunk(name string) bool {
	return name != "" && strings.Trim(name, "0123456789.") == ""
}
