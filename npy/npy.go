// Package npy reads and writes 2-D float64 arrays in NumPy's .npy format
// (format version 1.0), the array files exchanged by the wcmc pipeline
// steps: numpy.load, R (RcppCNPy, reticulate) and Julia (NPZ.jl) read them.
//
// A file is the magic string "\x93NUMPY", the version bytes 1 0, a
// little-endian uint16 header length, an ASCII header holding a Python
// dict literal such as
//
//	{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }
//
// padded with spaces and a final '\n' so that the data start at a multiple
// of 64 bytes, then the rows×cols little-endian float64 values in C (row-
// major) order. Write produces byte for byte what numpy ≥ 1.24's numpy.save
// writes for a C-contiguous '<f8' array of that shape.
//
// Read accepts format versions 1.0, 2.0 and 3.0 (numpy switches to 2.0 only
// for headers longer than 65535 bytes) but only 2-D arrays of dtype '<f8' in
// C order; anything else is an error that says what was found and how to
// convert it in numpy.
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

	"wcmc/internal/atomicfile"
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
// a valid .npy file of a 2-D '<f8' C-order array.
var ErrFormat = errors.New("npy")

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrFormat}, args...)...)
}

// Header returns the header numpy.save writes for a C-order '<f8' array of
// shape rows×cols: magic, version 1.0, the little-endian length and the
// space-padded dict ending in '\n', 64-byte aligned.
func Header(rows, cols int) []byte {
	dict := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", rows, cols)
	// Room for the first axis to grow in place (numpy ≥ 1.24).
	dict += strings.Repeat(" ", max(0, growthDigits-len(strconv.Itoa(rows))))
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
	return bw.Flush()
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

// Read reads a 2-D '<f8' C-order array in .npy format from r. It reads
// exactly the header and rows·cols·8 data bytes and reports trailing bytes
// as an error. Memory grows with the data actually read, never from the
// shape in the header alone, so a corrupt header cannot cause a huge
// allocation. Errors wrap ErrFormat (or are read errors).
func Read(r io.Reader) (*mat.Dense, error) {
	rows, cols, err := readHeader(r)
	if err != nil {
		return nil, err
	}
	n := rows * cols // no overflow: checked by parseShape
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
				return nil, formatErr("truncated data: shape (%d, %d) needs %d bytes of float64, the file has %d", rows, cols, 8*n, have)
			}
			return nil, err
		}
	}
	var one [1]byte
	switch k, err := io.ReadFull(r, one[:]); {
	case k > 0:
		extra, _ := io.Copy(io.Discard, r)
		return nil, formatErr("%d trailing bytes after the (%d, %d) array", extra+1, rows, cols)
	case err != io.EOF:
		return nil, err
	}
	return mat.NewDense(rows, cols, data), nil
}

// ReadFile reads the .npy file at path with Read; errors name the path.
func ReadFile(path string) (*mat.Dense, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := Read(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// readHeader reads the preamble and header and returns the shape.
func readHeader(r io.Reader) (rows, cols int, err error) {
	var pre [8]byte
	if n, err := io.ReadFull(r, pre[:]); err != nil {
		if n == 0 && err == io.EOF {
			return 0, 0, formatErr("empty file, not a .npy array")
		}
		if err == io.ErrUnexpectedEOF {
			return 0, 0, formatErr("truncated: %d bytes, shorter than the .npy preamble", n)
		}
		return 0, 0, err
	}
	if string(pre[:6]) != magic {
		return 0, 0, formatErr("not a .npy file (it does not start with \\x93NUMPY)")
	}
	var hlen int
	switch major, minor := pre[6], pre[7]; {
	case major == 1 && minor == 0:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, 0, truncatedHeader(err)
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case (major == 2 || major == 3) && minor == 0:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, 0, truncatedHeader(err)
		}
		h := binary.LittleEndian.Uint32(b[:])
		if h > maxHeader {
			return 0, 0, formatErr("header of %d bytes is implausibly long (at most %d accepted)", h, maxHeader)
		}
		hlen = int(h)
	default:
		return 0, 0, formatErr("unsupported format version %d.%d (want 1.0, 2.0 or 3.0)", major, minor)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return 0, 0, truncatedHeader(err)
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
// 'shape': (…), } and checks that it describes a 2-D '<f8' C-order array.
func parseHeader(h string) (rows, cols int, err error) {
	if !strings.HasSuffix(h, "\n") {
		return 0, 0, formatErr("header does not end in a newline")
	}
	p := &parser{s: strings.TrimRight(h, " \t\n\x00")}
	fields, err := p.dict()
	if err != nil {
		return 0, 0, formatErr("header %q: %v", strings.TrimSpace(h), err)
	}
	descr, ok1 := fields["descr"].(string)
	fortran, ok2 := fields["fortran_order"].(bool)
	shape, ok3 := fields["shape"].([]int)
	if len(fields) != 3 || !ok1 || !ok2 || !ok3 {
		return 0, 0, formatErr("header %q: want exactly the keys 'descr' (a string), 'fortran_order' (a bool) and 'shape' (a tuple)", strings.TrimSpace(h))
	}
	if descr != "<f8" {
		return 0, 0, formatErr("dtype %q: want '<f8' (little-endian float64); convert with a.astype('<f8')", descr)
	}
	if fortran {
		return 0, 0, formatErr("array is in Fortran (column-major) order: want C order; convert with numpy.ascontiguousarray(a)")
	}
	if len(shape) != 2 {
		hint := ""
		if len(shape) == 1 {
			hint = "; for one column use a.reshape(-1, 1)"
		}
		return 0, 0, formatErr("shape %s: want a 2-D array (rows × columns)%s", pyTuple(shape), hint)
	}
	rows, cols = shape[0], shape[1]
	if rows == 0 || cols == 0 {
		return 0, 0, formatErr("shape %s: the array is empty", pyTuple(shape))
	}
	if rows > math.MaxInt/8/cols {
		return 0, 0, formatErr("shape %s: too large", pyTuple(shape))
	}
	return rows, cols, nil
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
