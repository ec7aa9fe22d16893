package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/wcmc-project/wcmc/internal/memlimit"
)

// IDX magic numbers: unsigned-byte data with 1 (labels) or 3 (images)
// big-endian uint32 dimensions.
const (
	idxMagicLabels = 0x00000801
	idxMagicImages = 0x00000803
)

// MaxIDXBytes caps the data size an IDX header may declare (2 GiB); the
// largest MNIST file holds 47,040,000 bytes.
const MaxIDXBytes = 1 << 31

// IDX is the content of an unsigned-byte IDX file (the MNIST format): Dims
// are the dimensions from the header (one for idx1-ubyte label files, three
// for idx3-ubyte image files: count, rows, columns), and Data holds the
// Π Dims bytes in row-major order.
type IDX struct {
	Dims []int
	Data []byte
}

// ReadIDX reads an idx1-ubyte (magic 0x00000801) or idx3-ubyte (magic
// 0x00000803) stream: the 4-byte magic, one big-endian uint32 per dimension,
// then exactly Π dims data bytes. A gzip-compressed stream is detected by its
// magic bytes (1f 8b) and decompressed transparently, whatever name says.
//
// Errors name the stream by name and say what is wrong: a wrong magic number,
// a truncated header or data (expected vs got bytes), trailing bytes, or
// dimensions whose size exceeds MaxIDXBytes or the memory limit
// (internal/memlimit) or, for an uncompressed stream
// of known length (bytes.Reader, strings.Reader, *os.File, …), the bytes that
// remain. Memory is allocated as data arrives, never from the header alone,
// so a corrupt header cannot trigger a huge allocation.
func ReadIDX(r io.Reader, name string) (*IDX, error) {
	remaining, known := streamRemaining(r)
	in, gz, err := decompressed(bufio.NewReader(r), name)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	wrap := readError(name, gz)
	dims, total, err := readIDXHeader(in, name, wrap)
	if err != nil {
		return nil, err
	}
	headerLen := int64(4 + 4*len(dims))
	if err := memlimit.Check(fmt.Sprintf("idx %s: dimensions %v", name, dims), float64(total)); err != nil {
		return nil, err
	}
	if known && !gz && remaining-headerLen < total {
		return nil, fmt.Errorf("idx %s: truncated: dimensions %v need %d data bytes after the %d-byte header, got %d", name, dims, total, headerLen, max(remaining-headerLen, 0))
	}

	// Grow the buffer as data arrives: a lying header costs at most the
	// initial 64 KiB.
	data := make([]byte, 0, min(total, 1<<16))
	for int64(len(data)) < total {
		if len(data) == cap(data) {
			data = slices.Grow(data, int(min(int64(cap(data)), total-int64(len(data)))))
		}
		n, err := in.Read(data[len(data):min(int64(cap(data)), total)])
		data = data[:len(data)+n]
		if err == io.EOF || (gz && errors.Is(err, io.ErrUnexpectedEOF)) {
			break // reported as truncated below
		}
		if err != nil {
			return nil, wrap(err)
		}
	}
	if got := int64(len(data)); got < total {
		return nil, fmt.Errorf("idx %s: truncated: dimensions %v need %d data bytes after the %d-byte header, got %d", name, dims, total, headerLen, got)
	}
	// Reading to the end also verifies the gzip checksum.
	const maxCount = 1 << 20
	extra, err := io.Copy(io.Discard, io.LimitReader(in, maxCount+1))
	if err != nil {
		return nil, wrap(err)
	}
	switch {
	case extra > maxCount:
		return nil, fmt.Errorf("idx %s: trailing data: more than %d bytes after the expected %d data bytes", name, maxCount, total)
	case extra > 0:
		return nil, fmt.Errorf("idx %s: trailing data: %d bytes after the expected %d data bytes", name, extra, total)
	}
	return &IDX{Dims: dims, Data: data}, nil
}

// ReadIDXFile opens and reads the IDX file at path with ReadIDX, naming it
// by its path in errors.
func ReadIDXFile(path string) (*IDX, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadIDX(f, path)
}

// ReadIDXHeader returns the dimensions declared by the header of the IDX
// file at path, plain or gzip-compressed, reading (and inflating) only the
// header: the size of the data can be checked before any of it is read.
// Errors are those of ReadIDX for the magic number and the header.
func ReadIDXHeader(path string) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	in, gz, err := decompressed(bufio.NewReader(f), path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	dims, _, err := readIDXHeader(in, path, readError(path, gz))
	return dims, err
}

// readError returns the function that reports a read error of the IDX
// stream name, gzip-compressed when gz is set.
func readError(name string, gz bool) func(error) error {
	return func(err error) error {
		if gz {
			return fmt.Errorf("idx %s: corrupt or truncated gzip stream: %w", name, err)
		}
		return fmt.Errorf("idx %s: read error: %w", name, err)
	}
}

// readIDXHeader reads the magic number and the dimensions of an IDX
// stream and returns the dimensions and the data bytes they declare, at
// most MaxIDXBytes. wrap turns a read error into the reported one.
func readIDXHeader(in io.Reader, name string, wrap func(error) error) ([]int, int64, error) {
	var head [4]byte
	if n, err := io.ReadFull(in, head[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, 0, fmt.Errorf("idx %s: truncated header: expected 4 magic bytes, got %d", name, n)
		}
		return nil, 0, wrap(err)
	}
	magic := binary.BigEndian.Uint32(head[:])
	var ndim int
	switch magic {
	case idxMagicLabels:
		ndim = 1
	case idxMagicImages:
		ndim = 3
	default:
		return nil, 0, fmt.Errorf("idx %s: bad magic number 0x%08x, want 0x%08x (idx1-ubyte labels) or 0x%08x (idx3-ubyte images)", name, magic, idxMagicLabels, idxMagicImages)
	}
	hdr := make([]byte, 4*ndim)
	if n, err := io.ReadFull(in, hdr); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, 0, fmt.Errorf("idx %s: truncated header: expected %d dimension bytes after the magic number, got %d", name, len(hdr), n)
		}
		return nil, 0, wrap(err)
	}
	dims := make([]int, ndim)
	total := int64(1)
	for i := range dims {
		dims[i] = int(binary.BigEndian.Uint32(hdr[4*i:]))
	}
	for _, d := range dims {
		total *= int64(d) // ≤ 2^31·2^32 < 2^63 before the check below
		if total > MaxIDXBytes {
			return nil, 0, fmt.Errorf("idx %s: absurd dimensions %v: more than the limit of %d data bytes", name, dims, int64(MaxIDXBytes))
		}
	}
	return dims, total, nil
}

// streamRemaining reports how many bytes r still holds, when r can tell.
func streamRemaining(r io.Reader) (int64, bool) {
	switch v := r.(type) {
	case interface{ Len() int }:
		return int64(v.Len()), true
	case *os.File:
		st, err := v.Stat()
		if err != nil || !st.Mode().IsRegular() {
			return 0, false
		}
		off, err := v.Seek(0, io.SeekCurrent)
		if err != nil {
			return 0, false
		}
		return st.Size() - off, true
	}
	return 0, false
}

// MNISTSide is the side of an MNIST image: 28×28 pixels.
const MNISTSide = 28

// CheckMNISTImages reports an image file (idx3-ubyte, read by ReadIDX)
// whose images are not MNIST's MNISTSide×MNISTSide pixels: other IDX
// images are not MNIST, whatever the file is called.
func CheckMNISTImages(img *IDX, name string) error {
	return checkMNISTDims(img.Dims, name)
}

// checkMNISTDims is CheckMNISTImages for the dimensions of an IDX file.
func checkMNISTDims(dims []int, name string) error {
	if len(dims) != 3 {
		return fmt.Errorf("mnist: %s holds labels (idx1), want images (idx3-ubyte)", name)
	}
	if dims[1] != MNISTSide || dims[2] != MNISTSide {
		return fmt.Errorf("mnist: %s holds %d×%d images, but MNIST images are %d×%d: not an MNIST file", name, dims[1], dims[2], MNISTSide, MNISTSide)
	}
	return nil
}

// SameIDXContent reports whether two IDX files, each plain or
// gzip-compressed, hold the same bytes once decompressed (an MNIST file
// present both as NAME and NAME.gz must be one file).
func SameIDXContent(a, b string) (bool, error) {
	ra, closeA, err := openDecompressed(a)
	if err != nil {
		return false, err
	}
	defer closeA()
	rb, closeB, err := openDecompressed(b)
	if err != nil {
		return false, err
	}
	defer closeB()
	bufA, bufB := make([]byte, 1<<16), make([]byte, 1<<16)
	for {
		na, errA := io.ReadFull(ra, bufA)
		nb, errB := io.ReadFull(rb, bufB)
		if na != nb || !bytes.Equal(bufA[:na], bufB[:nb]) {
			return false, nil
		}
		endA := errors.Is(errA, io.EOF) || errors.Is(errA, io.ErrUnexpectedEOF)
		endB := errors.Is(errB, io.EOF) || errors.Is(errB, io.ErrUnexpectedEOF)
		switch {
		case errA != nil && !endA:
			return false, fmt.Errorf("idx %s: %w", a, errA)
		case errB != nil && !endB:
			return false, fmt.Errorf("idx %s: %w", b, errB)
		case endA || endB:
			return endA && endB, nil
		}
	}
}

// openDecompressed opens path, decompressing it when it is gzip'd.
func openDecompressed(path string) (io.Reader, func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	in, _, err := decompressed(bufio.NewReader(f), path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return in, func() { in.Close(); f.Close() }, nil
}

// decompressed returns br, decompressed when it starts with the gzip magic
// bytes (1f 8b; gz reports it), whatever its name says.
func decompressed(br *bufio.Reader, name string) (in io.ReadCloser, gz bool, err error) {
	if p, _ := br.Peek(2); len(p) == 2 && p[0] == 0x1f && p[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, false, fmt.Errorf("idx %s: bad gzip stream: %w", name, err)
		}
		return zr, true, nil
	}
	return io.NopCloser(br), false, nil
}
