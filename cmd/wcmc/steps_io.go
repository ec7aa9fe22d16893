package main

// Shared file handling of the pipeline steps (partition, sample, transmit,
// aggregate, evaluate, posterior): validated reads that name the file and
// the problem, and all-or-nothing writes.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"unsafe"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/dataset"
	"github.com/wcmc-project/wcmc/internal/atomicfile"
	"github.com/wcmc-project/wcmc/internal/memlimit"
	"github.com/wcmc-project/wcmc/npy"
	"github.com/wcmc-project/wcmc/sampler"
)

// outputs writes a step's files all or nothing: each file is written in
// full under a temporary name in its final directory (atomicfile.Create),
// and only once every file is complete are they renamed into place
// (atomicfile.Set: a failed rename restores the files already replaced).
// On failure the temporary files, and any directory created for them, are
// removed. Temporary files of the same names that a killed step left
// behind are removed first.
type outputs struct {
	set  atomicfile.Set
	made []string // directories created, deepest last
}

// add writes path's content (via write) to a temporary file beside it.
func (o *outputs) add(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := o.mkdir(dir); err != nil {
		return err
	}
	base := filepath.Base(path)
	if _, err := atomicfile.RemoveStale(dir, func(name string) bool { return name == base }); err != nil {
		return err
	}
	if err := o.set.Add(path, write); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// mkdir creates dir and its missing parents, remembering which it made.
func (o *outputs) mkdir(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		o.made = append(o.made, missing[i])
	}
	return nil
}

// commit renames every temporary file into place; if one fails, the
// files it already replaced are restored.
func (o *outputs) commit() error {
	if err := o.set.Commit(); err != nil {
		o.abort()
		return err
	}
	o.made = nil
	return nil
}

// abort removes what add created; it is a no-op after commit.
func (o *outputs) abort() {
	o.set.Abort()
	for i := len(o.made) - 1; i >= 0; i-- {
		os.Remove(o.made[i]) // only succeeds if empty
	}
	o.made = nil
}

// writeAll writes files (path → writer) all or nothing.
func writeAll(files []outFile) error {
	var o outputs
	for _, f := range files {
		if err := o.add(f.path, f.write); err != nil {
			o.abort()
			return err
		}
	}
	if err := o.commit(); err != nil {
		return err
	}
	return nil
}

// outFile is one file of a step's output.
type outFile struct {
	path  string
	write func(io.Writer) error
}

// errEmptyOut is the error of an empty --out.
var errEmptyOut = errors.New("--out is empty (an unset shell variable?): name the output; nothing was done")

// checkNotInputs refuses outputs that would overwrite one of the step's
// inputs, or that name an existing directory: an output is an input when
// their paths are the same once made absolute with symbolic links resolved,
// or when both exist and are the same file (os.SameFile: a hard link too).
// Call it before any work, with every file the step will write or remove.
func checkNotInputs(outs []outFile, inputs []string) error {
	for _, o := range outs {
		if o.path == "" {
			return errEmptyOut
		}
		if fi, err := os.Stat(o.path); err == nil && fi.IsDir() {
			return fmt.Errorf("output %s is a directory: name a file", o.path)
		}
		for _, in := range inputs {
			if in != "" && samePath(o.path, in) {
				return fmt.Errorf("output %s would overwrite the input %s: write the output elsewhere", o.path, in)
			}
		}
	}
	return nil
}

// samePath reports whether paths a and b name the same file (see
// checkNotInputs).
func samePath(a, b string) bool {
	if resolve(a) == resolve(b) {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// resolve returns path absolute and cleaned, with the symbolic links of
// its longest existing prefix resolved.
func resolve(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	var rest []string
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		if filepath.Dir(p) == p {
			return abs
		}
		rest = append([]string{filepath.Base(p)}, rest...)
	}
}

// outPaths returns outFiles for paths, for checkNotInputs.
func outPaths(paths ...string) []outFile {
	out := make([]outFile, len(paths))
	for i, p := range paths {
		out[i].path = p
	}
	return out
}

// interruptible runs work and returns its result, or, as soon as ctx is
// cancelled (SIGINT or SIGTERM: main's signal.NotifyContext), an error
// saying that the step stopped with nothing written; the abandoned work
// ends with the process. Steps run their computation through it, so that
// a signal stops them within a moment even when the library does not
// watch ctx, and write their files only after it returns.
func interruptible[T any](ctx context.Context, work func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := work()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, errInterrupted
	}
}

// errInterrupted is the error of a step stopped by a signal.
var errInterrupted = errors.New("interrupted (SIGINT or SIGTERM): stopped before writing anything; no output file was written or changed")

func npyFile(path string, m mat.Matrix) outFile {
	return outFile{path, func(w io.Writer) error { return npy.Write(w, m) }}
}

func csvFile(path string, s dataset.Set) outFile {
	return outFile{path, func(w io.Writer) error { return dataset.WriteCSV(w, s) }}
}

func jsonFile(path string, v any) outFile {
	return outFile{path, func(w io.Writer) error {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}}
}

// readMatrix reads a .npy file of samples or signals and checks that every
// entry is finite; what says what the file should hold.
func readMatrix(path, what string) (*mat.Dense, error) {
	m, err := npy.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s file %s does not exist", what, path)
		}
		return nil, fmt.Errorf("%s file %w", what, err)
	}
	r, _ := m.Dims()
	for i := range r {
		for j, v := range m.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s file %s: row %d, column %d is %v (want finite numbers)", what, path, i+1, j+1, v)
			}
		}
	}
	return m, nil
}

// readData reads a CSV data set (label,x1,…,xd).
func readData(path string) (dataset.Set, error) {
	if path == "" {
		return dataset.Set{}, errors.New("no data file given")
	}
	s, err := wcmc.LoadCSV(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, fmt.Errorf("data file %s does not exist", path)
	}
	return s, err
}

// workerNumber matches the worker index at the end of a file name, as in
// samples-3.npy.
var workerNumber = regexp.MustCompile(`-(\d+)\.npy$`)

// workerOrder puts the workers' files in worker order. When every name
// ends in -<k>.npy they are sorted by k, which must run 1, …, K without
// gaps or repeats (so that a shell glob, which sorts samples-10 before
// samples-2, works); otherwise the given order is kept.
func workerOrder(paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, errors.New("no sample files given (one per worker, e.g. samples/samples-*.npy)")
	}
	byK := map[int]string{}
	for _, p := range paths {
		m := workerNumber.FindStringSubmatch(filepath.Base(p))
		if m == nil {
			return paths, nil
		}
		k, err := strconv.Atoi(m[1])
		if err != nil {
			return paths, nil
		}
		if prev, dup := byK[k]; dup {
			return nil, fmt.Errorf("two files for worker %d: %s and %s", k, prev, p)
		}
		byK[k] = p
	}
	out := make([]string, len(paths))
	for k := 1; k <= len(paths); k++ {
		p, ok := byK[k]
		if !ok {
			return nil, fmt.Errorf("no file for worker %d: the %d files are numbered %v, want 1…%d (a worker's job failed or a file is missing?)", k, len(paths), slices.Sorted(maps.Keys(byK)), len(paths))
		}
		out[k-1] = p
	}
	return out, nil
}

// readSamples reads the workers' sample files (in workerOrder) and checks
// that they agree in shape.
func readSamples(paths []string) ([]string, []*mat.Dense, error) {
	paths, err := workerOrder(paths)
	if err != nil {
		return nil, nil, err
	}
	out := make([]*mat.Dense, len(paths))
	for k, p := range paths {
		if out[k], err = readMatrix(p, "samples"); err != nil {
			return nil, nil, err
		}
		r, c := out[k].Dims()
		r0, c0 := out[0].Dims()
		switch {
		case c != c0:
			return nil, nil, fmt.Errorf("d mismatch between workers: %s has d = %d, %s has d = %d", p, c, paths[0], c0)
		case r != r0:
			return nil, nil, fmt.Errorf("S mismatch between workers: %s has %d samples, %s has %d (every worker must send the same number)", p, r, paths[0], r0)
		}
	}
	return paths, out, nil
}

// readJSON decodes the JSON file at path into v. Unknown fields are
// ignored (the callers check a format field).
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// fmtFloat formats x exactly (shortest representation that reads back).
func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// checkSampleRun is the check of wcmc sample and wcmc posterior before
// they draw: their files (out, its summary, its sampler record and its
// per-draw statistics) must not overwrite an input, nor out be empty, and
// what the run allocates on n data points of dimension d (sampleRunBytes)
// must fit in memory.
func checkSampleRun(out string, s wcmc.Sampling, n, d int, inputs ...string) error {
	if err := checkNotInputs(outPaths(out, summaryPath(out), recordPath(out), statsPath(out)), inputs); err != nil {
		return err
	}
	return memlimit.Check(fmt.Sprintf("--samples %d × --chains %d samples of d = %d, with their statistics, their diagnostics and the sampler's d×d precision matrices", s.S, s.Chains, d), sampleRunBytes(s, n, d))
}

// Memory of a sample run beyond its arrays: the Go runtime and the
// program (about 20 MiB resident), and the margin on the whole.
const (
	runOverhead = 32 << 20
	runMargin   = 1.1
)

// sampleRunBytes bounds the memory of wcmc sample or wcmc posterior with
// Sampling s on n data points of dimension d: the sum of what it allocates,
// all of it possibly resident at once (the garbage collector lets the heap
// grow to twice what is live), with runMargin and runOverhead. Per draw of
// each chain (T = C·S draws): the draw (d floats) and the sampler's
// report on it (sampler.Info); per statistic of drawStats a (C, S) array
// and its encoding's row buffers; and per worker of the diagnostics (one
// per parameter, at most GOMAXPROCS at once) the C·S draws of a parameter
// copied, sorted, split, transformed and ranked twice (eight floats per
// draw), and the autocovariance by FFT of each chain's halves (at most
// nine floats per draw of one chain). Besides: the data and the sampler's
// state (a few copies of n×(d+2) floats) and the sampler's d×d matrices
// (the precision, its Cholesky factor and their copies: six at once).
func sampleRunBytes(s wcmc.Sampling, n, d int) float64 {
	T := float64(s.Chains) * float64(s.S)
	workers := float64(min(runtime.GOMAXPROCS(0), d))
	perDraw := 8*float64(d) + float64(unsafe.Sizeof(sampler.Info{})) + 16*float64(len(drawStats)) + workers*8*8
	perChainDraw := workers * 9 * 8
	need := T*perDraw + float64(s.S)*perChainDraw + 4*memlimit.Floats(n, d+2) + 6*memlimit.Floats(d, d)
	return runMargin*need + runOverhead
}
