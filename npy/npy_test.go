package npy

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// numpy324 is np.save of np.array([[0.5, -1.0], [2.0, np.inf], [-0.0, 3.25]])
// by numpy 1.24.2 (the full file, hex).
const numpy324 = "934e554d5059010076007b276465736372273a20273c6638272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028332c2032292c207d202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a000000000000e03f000000000000f0bf0000000000000040000000000000f07f00000000000000800000000000000a40"

func numpyFile(t testing.TB) []byte {
	b, err := hex.DecodeString(numpy324)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHeaderMatchesNumpy(t *testing.T) {
	// The header numpy writes for a 3×2 '<f8' array: magic, version 1.0,
	// length 0x76 = 118, the dict, 21−1 spaces reserved for the first
	// axis, then padding so that 10 + 118 = 128 is a multiple of 64.
	want := "\x93NUMPY\x01\x00\x76\x00" +
		"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }" +
		strings.Repeat(" ", 58) + "\n"
	got := string(Header(3, 2))
	if got != want {
		t.Fatalf("Header(3, 2) =\n%q\nwant\n%q", got, want)
	}
	if got != string(numpyFile(t)[:128]) {
		t.Fatal("Header(3, 2) differs from the header of the numpy-written file")
	}
	// numpy 1.24 for np.zeros((1000, 30)): same total length, 4-digit axis.
	want = "\x93NUMPY\x01\x00\x76\x00" +
		"{'descr': '<f8', 'fortran_order': False, 'shape': (1000, 30), }" +
		strings.Repeat(" ", 54) + "\n"
	if got := string(Header(1000, 30)); got != want {
		t.Fatalf("Header(1000, 30) =\n%q\nwant\n%q", got, want)
	}
}

func TestHeaderAligned(t *testing.T) {
	for _, s := range [][]int{{1, 1}, {3, 2}, {20000, 5}, {123456789, 300}, {1, 123456789012}, {math.MaxInt32, 3},
		{4, 1000, 30}, {1, 1, 1}, {64, 20000, 300}, {999999999, 99, 999999}} {
		h := Header(s...)
		if len(h)%64 != 0 || h[len(h)-1] != '\n' {
			t.Errorf("Header%v: length %d, last byte %q: want a multiple of 64 ending in newline", s, len(h), h[len(h)-1])
		}
		if n := int(binary.LittleEndian.Uint16(h[8:10])); n != len(h)-10 {
			t.Errorf("Header%v: stored length %d, actual %d", s, n, len(h)-10)
		}
		got, err := readHeader(bytes.NewReader(h))
		if err != nil || !slices.Equal(got, s) {
			t.Errorf("Header%v reads back as %v, %v", s, got, err)
		}
	}
}

func TestReadNumpyFile(t *testing.T) {
	m, err := Read(bytes.NewReader(numpyFile(t)))
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.5, -1, 2, math.Inf(1), math.Copysign(0, -1), 3.25}
	got := m.RawMatrix().Data
	if r, c := m.Dims(); r != 3 || c != 2 {
		t.Fatalf("dims %d×%d, want 3×2", r, c)
	}
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Errorf("entry %d = %v, want %v", i, got[i], want[i])
		}
	}
	// And Write reproduces the numpy file byte for byte.
	var b bytes.Buffer
	if err := Write(&b, m); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), numpyFile(t)) {
		t.Errorf("Write differs from numpy.save:\n%x\n%x", b.Bytes(), numpyFile(t))
	}
}

func TestRoundTripBits(t *testing.T) {
	vals := []float64{math.NaN(), math.Inf(-1), math.SmallestNonzeroFloat64, -math.MaxFloat64, 1.0 / 3, math.Copysign(0, -1), 1e-300, 42}
	m := mat.NewDense(4, 2, vals)
	var b bytes.Buffer
	if err := Write(&b, m.T()); err != nil { // a transposed view: written in C order of the view
		t.Fatal(err)
	}
	got, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := got.Dims(); r != 2 || c != 4 {
		t.Fatalf("dims %d×%d, want 2×4", r, c)
	}
	for i := range 2 {
		for j := range 4 {
			if math.Float64bits(got.At(i, j)) != math.Float64bits(m.At(j, i)) {
				t.Errorf("(%d,%d) = %v, want %v", i, j, got.At(i, j), m.At(j, i))
			}
		}
	}
}

// A view with a stride larger than its width writes only its own columns.
func TestWriteStridedView(t *testing.T) {
	big := mat.NewDense(3, 4, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	view := big.Slice(1, 3, 1, 3)
	var b bytes.Buffer
	if err := Write(&b, view); err != nil {
		t.Fatal(err)
	}
	got, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if want := mat.NewDense(2, 2, []float64{6, 7, 10, 11}); !mat.Equal(got, want) {
		t.Errorf("got %v, want %v", mat.Formatted(got), mat.Formatted(want))
	}
}

// rawFile builds a .npy stream with the given header dict and data bytes.
func rawFile(version byte, dict string, data []byte) []byte {
	h := dict + "\n"
	var b bytes.Buffer
	b.WriteString(magic)
	b.Write([]byte{version, 0})
	if version == 1 {
		binary.Write(&b, binary.LittleEndian, uint16(len(h)))
	} else {
		binary.Write(&b, binary.LittleEndian, uint32(len(h)))
	}
	b.WriteString(h)
	b.Write(data)
	return b.Bytes()
}

func noNewline(file []byte) []byte {
	file[bytes.IndexByte(file, '\n')] = ' '
	return file
}

func f64s(v ...float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

func TestReadVariants(t *testing.T) {
	// Headers other writers produce: numpy < 1.24 (no growth padding),
	// version 2.0, double quotes, other key order, no trailing comma,
	// Python 2 long suffixes.
	for name, file := range map[string][]byte{
		"old numpy":     rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 1), }    ", f64s(1, 2)),
		"version 2.0":   rawFile(2, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 1), }", f64s(1, 2)),
		"version 3.0":   rawFile(3, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 1), }", f64s(1, 2)),
		"double quotes": rawFile(1, `{"shape": (2, 1), "descr": "<f8", "fortran_order": False}`, f64s(1, 2)),
		"python2 long":  rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 1L), }", f64s(1, 2)),
	} {
		m, err := Read(bytes.NewReader(file))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if r, c := m.Dims(); r != 2 || c != 1 || m.At(0, 0) != 1 || m.At(1, 0) != 2 {
			t.Errorf("%s: got %v", name, mat.Formatted(m))
		}
	}
}

func TestReadRejects(t *testing.T) {
	good := numpyFile(t)
	for _, c := range []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "empty file"},
		{"short preamble", good[:5], "shorter than the .npy preamble"},
		{"bad magic", append([]byte("\x93NUMPZ"), good[6:]...), "not a .npy file"},
		{"version", append(append([]byte(magic), 9, 0), good[8:]...), "unsupported format version 9.0"},
		{"truncated header", good[:60], "truncated header"},
		{"truncated data", good[:len(good)-3], "truncated data: shape (3, 2) needs 48 bytes of float64, the file has 45"},
		{"trailing", append(append([]byte(nil), good...), 1, 2, 3), "3 trailing bytes"},
		{"float32", rawFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), }", make([]byte, 8)), `dtype "<f4"`},
		{"big endian", rawFile(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (2, 1), }", make([]byte, 16)), `dtype ">f8"`},
		{"int64", rawFile(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 1), }", make([]byte, 16)), `dtype "<i8"`},
		{"structured", rawFile(1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2, 1), }", make([]byte, 16)), "want a quoted string"},
		{"fortran", rawFile(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }", make([]byte, 32)), "Fortran (column-major) order"},
		{"1-D", rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", make([]byte, 24)), "shape (3,): want a 2-D array"},
		{"4-D", rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 1, 1), }", make([]byte, 8)), "shape (1, 1, 1, 1): want a 2-D array (rows × columns) or a 3-D one"},
		{"3-D truncated", rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 1, 2), }", make([]byte, 24)), "shape (2, 1, 2) needs 32 bytes"},
		{"3-D empty", rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 0, 2), }", nil), "the array is empty"},
		{"3-D huge", rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1048576, 1048576, 1048576), }", nil), "too large"},
		{"scalar", rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", make([]byte, 8)), "shape (): want a 2-D array"},
		{"empty array", rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }", nil), "the array is empty"},
		{"missing key", rawFile(1, "{'descr': '<f8', 'shape': (1, 1), }", make([]byte, 8)), "want exactly the keys"},
		{"extra key", rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), 'x': True, }", make([]byte, 8)), "want exactly the keys"},
		{"negative", rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (-1, 1), }", nil), "non-negative integers"},
		{"huge", rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (999999999999999999, 999999999999999999), }", nil), "too large"},
		{"no newline", noNewline(rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }", make([]byte, 8))), "does not end in a newline"},
		{"not a dict", rawFile(1, "[1, 2]", nil), "not a dict literal"},
	} {
		_, err := Read(bytes.NewReader(c.file))
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want ErrFormat containing %q", c.name, err, c.want)
		}
	}
}

// A header that claims a huge array backed by a few bytes fails without
// allocating for the claimed size.
func TestReadNoHugeAllocation(t *testing.T) {
	file := rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1073741824, 1048576), }", f64s(1, 2, 3))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Read(bytes.NewReader(file))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "truncated data") {
		t.Fatalf("err = %v, want truncated data", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
		t.Errorf("Read allocated %d bytes for a 24-byte payload", n)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.npy")
	m := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	if err := WriteFile(path, m); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(got, m) {
		t.Errorf("ReadFile = %v", mat.Formatted(got))
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only a.npy", len(entries))
	}
	if err := WriteFile(filepath.Join(dir, "missing", "b.npy"), m); err == nil {
		t.Error("WriteFile into a missing directory: no error")
	}
	if _, err := ReadFile(filepath.Join(dir, "nope.npy")); err == nil || !strings.Contains(err.Error(), "nope.npy") {
		t.Errorf("ReadFile of a missing file: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "bad.npy"), []byte("hello"), 0o644)
	if _, err := ReadFile(filepath.Join(dir, "bad.npy")); err == nil || !strings.Contains(err.Error(), "bad.npy") {
		t.Errorf("ReadFile of a bad file does not name it: %v", err)
	}
}

func FuzzRead(f *testing.F) {
	f.Add(numpyFile(f))
	f.Add(numpyFile(f)[:100])
	f.Add(rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 1), }", f64s(1, 2)))
	f.Add(rawFile(2, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2)}", f64s(1, 2)))
	f.Add(rawFile(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 1), }", f64s(1, 2)))
	f.Add(rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999, 99999999), }", f64s(1)))
	f.Add(rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), 'shape': (1, 1)}", f64s(1)))
	f.Add([]byte(magic + "\x01\x00\xff\xff{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Read(bytes.NewReader(b))
		if err != nil {
			return
		}
		// Anything accepted writes back and reads back to the same bits.
		var out bytes.Buffer
		if err := Write(&out, m); err != nil {
			t.Fatal(err)
		}
		m2, err := Read(&out)
		if err != nil {
			t.Fatalf("re-reading what Write wrote: %v", err)
		}
		a, b2 := m.RawMatrix(), m2.RawMatrix()
		if a.Rows != b2.Rows || a.Cols != b2.Cols {
			t.Fatalf("shape changed: %d×%d → %d×%d", a.Rows, a.Cols, b2.Rows, b2.Cols)
		}
		for i := range a.Data {
			if math.Float64bits(a.Data[i]) != math.Float64bits(b2.Data[i]) {
				t.Fatalf("entry %d changed", i)
			}
		}
	})
}

func benchMatrix() *mat.Dense {
	m := mat.NewDense(20000, 5, nil)
	for i, raw := 0, m.RawMatrix().Data; i < len(raw); i++ {
		raw[i] = float64(i) / 7
	}
	return m
}

func BenchmarkWrite(b *testing.B) {
	m := benchMatrix()
	b.SetBytes(20000 * 5 * 8)
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(io.Discard, m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRead(b *testing.B) {
	var buf bytes.Buffer
	if err := Write(&buf, benchMatrix()); err != nil {
		b.Fatal(err)
	}
	file := buf.Bytes()
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(bytes.NewReader(file)); err != nil {
			b.Fatal(err)
		}
	}
}

// numpyChains is np.save of np.arange(12, dtype='<f8').reshape(2, 3, 2) / 4
// by numpy 1.24.2 (the header, hex; the data are the 12 values in order).
const numpyChains = "934e554d5059010076007b276465736372273a20273c6638272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028322c20332c2032292c207d202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a"

// TestChainsRoundTrip writes 2 chains of 3 draws of d = 2 as a (2, 3, 2)
// array: the header is numpy's, ReadChains gives the chains back bit for
// bit, and Read gives them stacked (chain 1's rows, then chain 2's), the
// layout every step that reads samples accepts.
func TestChainsRoundTrip(t *testing.T) {
	chains := []*mat.Dense{mat.NewDense(3, 2, nil), mat.NewDense(3, 2, nil)}
	for c, m := range chains {
		for i := range 3 {
			for j := range 2 {
				m.Set(i, j, float64(c*6+i*2+j)/4)
			}
		}
	}
	var buf bytes.Buffer
	if err := WriteChains(&buf, chains); err != nil {
		t.Fatal(err)
	}
	want, _ := hex.DecodeString(numpyChains)
	if got := buf.Bytes(); !bytes.Equal(got[:len(want)], want) || len(got) != len(want)+12*8 {
		t.Fatalf("header %q, want numpy's %q", got[:min(len(got), len(want))], want)
	}
	back, err := ReadChains(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 2 || !mat.Equal(back[0], chains[0]) || !mat.Equal(back[1], chains[1]) {
		t.Fatalf("ReadChains: got %d chains, want the 2 written", len(back))
	}
	flat, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var stacked mat.Dense
	stacked.Stack(chains[0], chains[1])
	if !mat.Equal(flat, &stacked) {
		t.Fatalf("Read of a 3-D file: got\n%v\nwant the chains stacked\n%v", mat.Formatted(flat), mat.Formatted(&stacked))
	}
	// A 2-D file is one chain.
	buf.Reset()
	if err := Write(&buf, chains[1]); err != nil {
		t.Fatal(err)
	}
	one, err := ReadChains(bytes.NewReader(buf.Bytes()))
	if err != nil || len(one) != 1 || !mat.Equal(one[0], chains[1]) {
		t.Fatalf("ReadChains of a 2-D file: %d chains, %v", len(one), err)
	}
}
