// Package npy reads and writes 2-D and 3-D float64 arrays in NumPy's .npy
// format (format version 1.0), the array files exchanged by the wcmc
// pipeline steps: numpy.load, R (RcppCNPy, reticulate) and Julia (NPZ.jl)
// read them. A 2-D array is a matrix (samples or signals as rows); a 3-D
// array of shape (chains, draws, d) holds the draws of several Markov
// chains, the layout ArviZ expects.
//
// A file is the magic string "\x93NUMPY", the version bytes 1 0, a
// little-endian uint16 header length, an ASCII header holding a Python
// dict literal such as
//
//	{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }
//
// padded with spaces and a final '\n' so that the data start at a multiple
// of 64 bytes, then the little-endian float64 values in C (row-major)
// order. Write and WriteChains produce byte for byte what numpy ≥ 1.24's
// numpy.save writes for a C-contiguous '<f8' array of that shape.
//
// Read and ReadChains accept format versions 1.0, 2.0 and 3.0 (numpy
// switches to 2.0 only for headers longer than 65535 bytes) but only 2-D
// and 3-D arrays of dtype '<f8' in C order; anything else is an error that
// says what was found and how to convert it in numpy. Read returns a 3-D
// file's chains stacked into one matrix, so every step that reads samples
// accepts both layouts.
package npy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/internal/atomicfile"
)

// magic opens every .npy file; the version bytes follow.
const magic = "\x93NUMPY"

const (
	// align is the alignment of the data offset (numpy's ARRAY_ALIGN).
	align = 64
	// growthDigits is numpy's GROWTH_AXIS_MAX_DIGITS: the header reserves
	// room for the first dimension to grow to this many digits.
	growthDigits = 21
	// maxHeader bounds the header length Read accepts. numpy's own reader
	// refuses headers over 10000 bytes by default; a 2-D header is under 128.
	maxHeader = 1 << 16
)

// ErrFormat is wrapped by every error Read returns for a stream that is not
// a valid .npy file of a 2-D or 3-D '<f8' C-order array.
var ErrFormat = errors.New("npy")

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrFormat}, args...)...)
}

// Header returns the header numpy.save writes for a C-order '<f8' array of
// the given shape (at least one axis), e.g. Header(rows, cols): magic,
// version 1.0, the little-endian length and the space-padded dict ending
// in '\n', 64-byte aligned.
func Header(shape ...int) []byte {
	dict := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': %s, }", pyTuple(shape))
	// Room for the first axis to grow in place (numpy ≥ 1.24).
	dict += strings.Repeat(" ", max(0, growthDigits-len(strconv.Itoa(shape[0]))))
	hlen := len(dict) + 1 // with the final '\n'
	// numpy pads by align − (offset mod align), a full block when aligned.
	pad := align - (len(magic)+2+2+hlen)%align
	var b bytes.Buffer
	b.WriteString(magic)
	b.Write([]byte{1, 0})
	binary.Write(&b, binary.LittleEndian, uint16(hlen+pad))
	b.WriteString(dict)
	b.WriteString(strings.Repeat(" ", pad))
	b.WriteByte('\n')
	return b.Bytes()
}

// Write writes m to w in .npy format version 1.0: Header(r, c) followed by
// the entries row by row as little-endian float64.
func Write(w io.Writer, m mat.Matrix) error {
	r, c := m.Dims()
	bw := bufio.NewWriter(w)
	if _, err := bw.Write(Header(r, c)); err != nil {
		return err
	}
	if err := writeRows(bw, m); err != nil {
		return err
	}
	return bw.Flush()
}

// WriteChains writes the C chains (each S×d) to w as one 3-D array of
// shape (C, S, d): Header(C, S, d) followed by chain after chain, row by
// row. It panics if the chains differ in shape or there are none.
func WriteChains(w io.Writer, chains []*mat.Dense) error {
	if len(chains) == 0 {
		panic("npy: no chains to write")
	}
	s, d := chains[0].Dims()
	for _, m := range chains {
		if r, c := m.Dims(); r != s || c != d {
			panic(mat.ErrShape)
		}
	}
	bw := bufio.NewWriter(w)
	if _, err := bw.Write(Header(len(chains), s, d)); err != nil {
		return err
	}
	for _, m := range chains {
		if err := writeRows(bw, m); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// writeRows writes the entries of m row by row as little-endian float64.
func writeRows(bw *bufio.Writer, m mat.Matrix) error {
	r, c := m.Dims()
	row := make([]byte, 8*c)
	raw, isRaw := m.(mat.RawMatrixer)
	for i := range r {
		if isRaw {
			rm := raw.RawMatrix()
			for j, v := range rm.Data[i*rm.Stride : i*rm.Stride+c] {
				binary.LittleEndian.PutUint64(row[8*j:], math.Float64bits(v))
			}
		} else {
			for j := range c {
				binary.LittleEndian.PutUint64(row[8*j:], math.Float64bits(m.At(i, j)))
			}
		}
		if _, err := bw.Write(row); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes m to path in .npy format, atomically
// (internal/atomicfile): the data go to a temporary file in the same
// directory, which is renamed to path only once complete, so path never
// holds a partial file.
func WriteFile(path string, m mat.Matrix) error {
	if err := atomicfile.Write(path, func(w io.Writer) error { return Write(w, m) }); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// Read reads a 2-D '<f8' C-order array in .npy format from r, or a 3-D
// one of shape (C, S, d), returned as the (C·S)×d matrix of its C chains
// stacked in order. It reads exactly the header and the data bytes and
// reports trailing bytes as an error. Memory grows with the data actually
// read, never from the shape in the header alone, so a corrupt header
// cannot cause a huge allocation. Errors wrap ErrFormat (or are read
// errors).
func Read(r io.Reader) (*mat.Dense, error) {
	shape, data, err := readArray(r)
	if err != nil {
		return nil, err
	}
	d := shape[len(shape)-1]
	return mat.NewDense(len(data)/d, d, data), nil
}

// ReadChains reads a .npy array from r as Markov chains: a 3-D array of
// shape (C, S, d) gives C matrices S×d (views of one backing array), a 2-D
// array S×d one chain. Errors are those of Read.
func ReadChains(r io.Reader) ([]*mat.Dense, error) {
	shape, data, err := readArray(r)
	if err != nil {
		return nil, err
	}
	if len(shape) == 2 {
		return []*mat.Dense{mat.NewDense(shape[0], shape[1], data)}, nil
	}
	c, s, d := shape[0], shape[1], shape[2]
	out := make([]*mat.Dense, c)
	for i := range out {
		out[i] = mat.NewDense(s, d, data[i*s*d:(i+1)*s*d:(i+1)*s*d])
	}
	return out, nil
}

// readArray reads a whole .npy stream: its shape (2 or 3 axes) and data.
func readArray(r io.Reader) ([]int, []float64, error) {
	shape, err := readHeader(r)
	if err != nil {
		return nil, nil, err
	}
	n := 1
	for _, x := range shape {
		n *= x // no overflow: checked by parseHeader
	}
	data := make([]float64, 0, min(n, 1<<16))
	var buf [8 << 10]byte
	for len(data) < n {
		want := min(len(buf), 8*(n-len(data)))
		got, err := io.ReadFull(r, buf[:want])
		for i := 0; i+8 <= got; i += 8 {
			data = append(data, math.Float64frombits(binary.LittleEndian.Uint64(buf[i:])))
		}
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				have := 8*len(data) + got%8
				return nil, nil, formatErr("truncated data: shape %s needs %d bytes of float64, the file has %d", pyTuple(shape), 8*n, have)
			}
			return nil, nil, err
		}
	}
	var one [1]byte
	switch k, err := io.ReadFull(r, one[:]); {
	case k > 0:
		extra, _ := io.Copy(io.Discard, r)
		return nil, nil, formatErr("%d trailing bytes after the %s array", extra+1, pyTuple(shape))
	case err != io.EOF:
		return nil, nil, err
	}
	return shape, data, nil
}

// ReadFile reads the .npy file at path with Read; errors name the path.
func ReadFile(path string) (*mat.Dense, error) {
	return readFile(path, Read)
}

// ReadChainsFile reads the .npy file at path with ReadChains; errors name
// the path.
func ReadChainsFile(path string) ([]*mat.Dense, error) {
	return readFile(path, ReadChains)
}

func readFile[T any](path string, read func(io.Reader) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	v, err := read(bufio.NewReader(f))
	if err != nil {
		return v, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// readHeader reads the preamble and header and returns the shape.
func readHeader(r io.Reader) (shape []int, err error) {
	var pre [8]byte
	if n, err := io.ReadFull(r, pre[:]); err != nil {
		if n == 0 && err == io.EOF {
			return nil, formatErr("empty file, not a .npy array")
		}
		if err == io.ErrUnexpectedEOF {
			return nil, formatErr("truncated: %d bytes, shorter than the .npy preamble", n)
		}
		return nil, err
	}
	if string(pre[:6]) != magic {
		return nil, formatErr("not a .npy file (it does not start with \\x93NUMPY)")
	}
	var hlen int
	switch major, minor := pre[6], pre[7]; {
	case major == 1 && minor == 0:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, truncatedHeader(err)
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case (major == 2 || major == 3) && minor == 0:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, truncatedHeader(err)
		}
		h := binary.LittleEndian.Uint32(b[:])
		if h > maxHeader {
			return nil, formatErr("header of %d bytes is implausibly long (at most %d accepted)", h, maxHeader)
		}
		hlen = int(h)
	default:
		return nil, formatErr("unsupported format version %d.%d (want 1.0, 2.0 or 3.0)", major, minor)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, truncatedHeader(err)
	}
	return parseHeader(string(hdr))
}

func truncatedHeader(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return formatErr("truncated header")
	}
	return err
}

// parseHeader reads the dict literal {'descr': …, 'fortran_order': …,
// 'shape': (…), } and checks that it describes a 2-D or 3-D '<f8' C-order
// array.
func parseHeader(h string) (shape []int, err error) {
	if !strings.HasSuffix(h, "\n") {
		return nil, formatErr("header does not end in a newline")
	}
	p := &parser{s: strings.TrimRight(h, " \t\n\x00")}
	fields, err := p.dict()
	if err != nil {
		return nil, formatErr("header %q: %v", strings.TrimSpace(h), err)
	}
	descr, ok1 := fields["descr"].(string)
	fortran, ok2 := fields["fortran_order"].(bool)
	shape, ok3 := fields["shape"].([]int)
	if len(fields) != 3 || !ok1 || !ok2 || !ok3 {
		return nil, formatErr("header %q: want exactly the keys 'descr' (a string), 'fortran_order' (a bool) and 'shape' (a tuple)", strings.TrimSpace(h))
	}
	if descr != "<f8" {
		return nil, formatErr("dtype %q: want '<f8' (little-endian float64); convert with a.astype('<f8')", descr)
	}
	if fortran {
		return nil, formatErr("array is in Fortran (column-major) order: want C order; convert with numpy.ascontiguousarray(a)")
	}
	if len(shape) != 2 && len(shape) != 3 {
		hint := ""
		if len(shape) == 1 {
			hint = "; for one column use a.reshape(-1, 1)"
		}
		return nil, formatErr("shape %s: want a 2-D array (rows × columns) or a 3-D one (chains × draws × columns)%s", pyTuple(shape), hint)
	}
	n := 8
	for _, x := range shape {
		if x == 0 {
			return nil, formatErr("shape %s: the array is empty", pyTuple(shape))
		}
		if x > math.MaxInt/n {
			return nil, formatErr("shape %s: too large", pyTuple(shape))
		}
		n *= x
	}
	return shape, nil
}

func pyTuple(s []int) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = strconv.Itoa(v)
	}
	if len(s) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// parser reads the subset of Python literal syntax that .npy headers use:
// a dict with string keys whose values are strings, True/False or tuples
// of non-negative integers.
type parser struct {
	s string
	i int
}

func (p *parser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *parser) eat(c byte) bool {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *parser) dict() (map[string]any, error) {
	if !p.eat('{') {
		return nil, errors.New("not a dict literal")
	}
	out := map[string]any{}
	for !p.eat('}') {
		key, err := p.str()
		if err != nil {
			return nil, fmt.Errorf("key: %v", err)
		}
		if !p.eat(':') {
			return nil, fmt.Errorf("missing ':' after key %q", key)
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		if out[key], err = p.value(); err != nil {
			return nil, fmt.Errorf("value of %q: %v", key, err)
		}
		if !p.eat(',') {
			if !p.eat('}') {
				return nil, errors.New("missing ',' or '}'")
			}
			break
		}
	}
	p.space()
	if p.i != len(p.s) {
		return nil, errors.New("text after the dict")
	}
	return out, nil
}

func (p *parser) value() (any, error) {
	p.space()
	rest := p.s[p.i:]
	switch {
	case strings.HasPrefix(rest, "True"):
		p.i += 4
		return true, nil
	case strings.HasPrefix(rest, "False"):
		p.i += 5
		return false, nil
	case strings.HasPrefix(rest, "("):
		return p.tuple()
	}
	return p.str()
}

func (p *parser) str() (string, error) {
	p.space()
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", errors.New("want a quoted string")
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", errors.New("unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+end]
	p.i += end + 2
	return v, nil
}

func (p *parser) tuple() ([]int, error) {
	p.eat('(')
	out := []int{}
	for !p.eat(')') {
		p.space()
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		// A trailing 'L' is Python 2's long suffix, still found in old files.
		digits := p.s[p.i:j]
		if j < len(p.s) && p.s[j] == 'L' {
			j++
		}
		v, err := strconv.Atoi(digits)
		if err != nil || len(digits) > 18 {
			return nil, errors.New("want a tuple of non-negative integers")
		}
		p.i = j
		out = append(out, v)
		if !p.eat(',') {
			if !p.eat(')') {
				return nil, errors.New("missing ',' or ')' in tuple")
			}
			break
		}
		if len(out) > 32 {
			return nil, errors.New("tuple too long")
		}
	}
	return out, nil
}
