package main

// Shared file handling of the pipeline steps (partition, sample, transmit,
// aggregate, evaluate, posterior): validated reads that name the file and
// the problem, and all-or-nothing writes.

import (
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
	"slices"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"wcmc"
	"wcmc/dataset"
	"wcmc/npy"
)

// outputs writes a step's files all or nothing: each file is written in
// full under a temporary name in its final directory, and only once every
// file is complete are they renamed into place. On failure the temporary
// files, and any directory created for them, are removed.
type outputs struct {
	tmp, final []string
	made       []string // directories created, deepest last
}

// add writes path's content (via write) to a temporary file beside it.
func (o *outputs) add(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := o.mkdir(dir); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	o.tmp = append(o.tmp, f.Name())
	o.final = append(o.final, path)
	err = f.Chmod(0o644)
	if err == nil {
		err = write(f)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
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

// commit renames every temporary file into place.
func (o *outputs) commit() error {
	for i, t := range o.tmp {
		if err := os.Rename(t, o.final[i]); err != nil {
			// Undo: the files already renamed are part of a failed step.
			for _, f := range o.final[:i] {
				os.Remove(f)
			}
			o.tmp = o.tmp[i:]
			o.abort()
			return err
		}
	}
	o.tmp = nil
	return nil
}

// abort removes what add created; it is a no-op after commit.
func (o *outputs) abort() {
	for _, t := range o.tmp {
		os.Remove(t)
	}
	for i := len(o.made) - 1; i >= 0; i-- {
		os.Remove(o.made[i]) // only succeeds if empty
	}
	o.tmp, o.made = nil, nil
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
