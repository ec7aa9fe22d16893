package dataset

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// encodeIDX is a test-only IDX writer: magic 0x0000080n, big-endian dims,
// then data.
func encodeIDX(dims []int, data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0x00000800|uint32(len(dims)))
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
	}
	return append(b, data...)
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// onlyReader hides Len and other methods, so ReadIDX cannot know the
// stream length in advance.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func tinyImages() ([]int, []byte) {
	dims := []int{3, 2, 4}
	data := make([]byte, 24)
	for i := range data {
		data[i] = byte(11 * i)
	}
	return dims, data
}

func TestReadIDXRoundTrip(t *testing.T) {
	imgDims, imgData := tinyImages()
	for _, tc := range []struct {
		name string
		dims []int
		data []byte
	}{
		{"labels", []int{5}, []byte{0, 1, 9, 1, 0}},
		{"images", imgDims, imgData},
		{"empty labels", []int{0}, nil},
		{"large", []int{200000}, bytes.Repeat([]byte{7, 1, 255}, 200000/3+1)[:200000]},
	} {
		raw := encodeIDX(tc.dims, tc.data)
		for _, enc := range []struct {
			kind string
			b    []byte
		}{{"plain", raw}, {"gzip", gzipBytes(raw)}} {
			for _, known := range []bool{true, false} {
				var r io.Reader = bytes.NewReader(enc.b)
				if !known {
					r = onlyReader{r}
				}
				got, err := ReadIDX(r, "x")
				if err != nil {
					t.Fatalf("%s %s: %v", tc.name, enc.kind, err)
				}
				if !slices.Equal(got.Dims, tc.dims) || !bytes.Equal(got.Data, tc.data) {
					t.Fatalf("%s %s: read dims %v and %d bytes, want %v and %d", tc.name, enc.kind, got.Dims, len(got.Data), tc.dims, len(tc.data))
				}
			}
		}
	}
}

func TestReadIDXErrors(t *testing.T) {
	dims, data := tinyImages()
	good := encodeIDX(dims, data)
	badMagic := slices.Clone(good)
	badMagic[3] = 0x02
	hugeDims := encodeIDX([]int{0xffffffff, 0xffffffff, 0xffffffff}, nil)
	lying := encodeIDX([]int{1 << 30}, []byte{1, 2, 3})
	gz := gzipBytes(good)
	gzCorrupt := slices.Clone(gz)
	gzCorrupt[len(gzCorrupt)-6] ^= 0xff // CRC-32 of the content
	for _, tc := range []struct {
		name string
		in   []byte
		want []string
	}{
		{"empty", nil, []string{"imgs.idx", "truncated header", "4 magic bytes, got 0"}},
		{"bad magic", badMagic, []string{"imgs.idx", "bad magic number 0x00000802", "0x00000801", "0x00000803"}},
		{"text", []byte("hello world"), []string{"bad magic number 0x68656c6c"}},
		{"short header", good[:9], []string{"truncated header", "12 dimension bytes", "got 5"}},
		{"truncated data", good[:30], []string{"truncated", "need 24 data bytes", "16-byte header", "got 14"}},
		{"trailing", append(slices.Clone(good), 1, 2, 3), []string{"trailing data", "3 bytes", "24 data bytes"}},
		{"absurd", hugeDims, []string{"absurd dimensions", "4294967295"}},
		{"lying header", lying, []string{"need 1073741824 data bytes", "got 3"}},
		{"gzip truncated data", gzipBytes(good[:30]), []string{"truncated", "need 24 data bytes", "got 14"}},
		{"gzip trailing", gzipBytes(append(slices.Clone(good), 0)), []string{"trailing data", "1 bytes"}},
		{"gzip cut", gz[:len(gz)-4], []string{"corrupt or truncated gzip"}},
		{"gzip checksum", gzCorrupt, []string{"corrupt or truncated gzip"}},
		{"gzip header only", gz[:5], []string{"bad gzip stream"}},
	} {
		for _, known := range []bool{true, false} {
			var r io.Reader = bytes.NewReader(tc.in)
			if !known {
				r = onlyReader{r}
			}
			_, err := ReadIDX(r, "imgs.idx")
			if err == nil {
				t.Errorf("%s (known length %v): no error", tc.name, known)
				continue
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s (known length %v): error %q does not mention %q", tc.name, known, err, w)
				}
			}
		}
	}
}

// allocBytes returns the bytes f allocates on the heap.
func allocBytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestReadIDXLyingHeaderAllocatesLittle(t *testing.T) {
	in := encodeIDX([]int{1 << 10, 1 << 10, 1 << 10}, []byte{1, 2, 3}) // claims 1 GiB
	for _, b := range [][]byte{in, gzipBytes(in)} {
		n := allocBytes(func() { ReadIDX(onlyReader{bytes.NewReader(b)}, "x") })
		if n > 1<<20 {
			t.Errorf("reading a 1 GiB header with 3 data bytes allocated %d bytes", n)
		}
	}
}

// decodedLen is the length of the (possibly gzip'd) stream b once
// decompressed, up to the first error.
func decodedLen(b []byte) int64 {
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		return int64(len(b))
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return 0
	}
	n, _ := io.Copy(io.Discard, io.LimitReader(zr, 1<<30))
	return n
}

func FuzzReadIDX(f *testing.F) {
	dims, data := tinyImages()
	img := encodeIDX(dims, data)
	lab := encodeIDX([]int{4}, []byte{0, 1, 1, 0})
	for _, b := range [][]byte{
		img, lab, gzipBytes(img), gzipBytes(lab),
		img[:10], img[:20], lab[:7], gzipBytes(img)[:20],
		append(slices.Clone(lab), 9),
		encodeIDX([]int{1 << 30}, []byte{1}),
		encodeIDX([]int{60000, 28, 28}, nil),
		gzipBytes(encodeIDX([]int{1 << 28, 4, 1}, nil)),
		encodeIDX([]int{0, 0, 0}, nil),
		{}, {0x1f, 0x8b},
	} {
		f.Add(b, false)
		f.Add(b, true)
	}
	f.Fuzz(func(t *testing.T, b []byte, known bool) {
		var r io.Reader = bytes.NewReader(b)
		if !known {
			r = onlyReader{r}
		}
		var got *IDX
		var err error
		alloc := allocBytes(func() { got, err = ReadIDX(r, "fuzz") })
		// Memory follows the bytes actually present, never the header:
		// 1 MiB of fixed costs (bufio, gzip window) plus buffer doubling.
		if limit := 1<<20 + 4*uint64(decodedLen(b)); alloc > limit {
			t.Fatalf("allocated %d bytes for a %d-byte input (limit %d)", alloc, len(b), limit)
		}
		if err != nil {
			return
		}
		n := 1
		for _, d := range got.Dims {
			n *= d
		}
		if len(got.Dims) != 1 && len(got.Dims) != 3 || len(got.Data) != n {
			t.Fatalf("dims %v with %d data bytes", got.Dims, len(got.Data))
		}
	})
}

// TestMNISTChecks: IDX images that are not 28×28 are refused as MNIST
// (10×10 images were accepted before), and a file present both plain and
// as .gz must hold the same data in both (the plain one was read silently).
func TestMNISTChecks(t *testing.T) {
	dir := t.TempDir()
	writeFakeMNIST(t, dir, []byte{3, 7, 7}, []byte{7, 3})
	if _, _, err := LoadMNIST(dir, 3, 7, SplitT10k); err != nil {
		t.Fatal(err)
	}

	small := t.TempDir()
	writeFakeMNIST(t, small, []byte{3, 7, 7}, []byte{7, 3})
	os.WriteFile(filepath.Join(small, MNISTTestImages+".gz"), encodeIDX([]int{2, 10, 10}, make([]byte, 200)), 0o644)
	_, _, err := LoadMNIST(small, 3, 7, SplitT10k)
	errorMentions(t, "10×10 images", err, MNISTTestImages, "holds 10×10 images", "MNIST images are 28×28")

	// The same content plain and gzip'd: fine; different: refused, naming both.
	plain := filepath.Join(dir, MNISTTestImages)
	gz, _ := os.ReadFile(plain + ".gz")
	os.WriteFile(plain, gz, 0o644) // the fake's .gz holds plain content
	if _, _, err := LoadMNIST(dir, 3, 7, SplitT10k); err != nil {
		t.Fatalf("identical plain and .gz: %v", err)
	}
	os.WriteFile(plain+".gz", gzipBytes(gz), 0o644)
	if _, _, err := LoadMNIST(dir, 3, 7, SplitT10k); err != nil {
		t.Fatalf("identical plain and gzip'd .gz: %v", err)
	}
	other := slices.Clone(gz)
	other[len(other)-1]++
	os.WriteFile(plain, other, 0o644)
	_, _, err = LoadMNIST(dir, 3, 7, SplitT10k)
	errorMentions(t, "plain and .gz differ", err, plain+" and "+plain+".gz both exist but hold different data")
	os.WriteFile(plain, gz[:len(gz)-1], 0o644)
	_, _, err = LoadMNIST(dir, 3, 7, SplitT10k)
	errorMentions(t, "plain is a prefix of .gz", err, "hold different data")
}
