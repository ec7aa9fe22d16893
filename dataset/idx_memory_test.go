package dataset

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/internal/memlimit"
)

// TestReadIDXMemoryLimit: a small gzip stream that inflates to more data
// than the memory limit allows is refused from its header, before any of
// it is read; the float64 matrix of the selected images is checked too.
func TestReadIDXMemoryLimit(t *testing.T) {
	t.Setenv(memlimit.Env, "1M")
	const n = 3000 // 3000×28×28 = 2.2 MiB of pixels, 18 MiB as float64
	zipped := gzipBytes(encodeIDX([]int{n, 28, 28}, make([]byte, n*28*28)))
	if _, err := ReadIDX(bytes.NewReader(zipped), "big.gz"); err == nil || !strings.Contains(err.Error(), "more than the 1 MiB") {
		t.Errorf("%d gzip bytes inflating to 2.2 MiB under a 1 MiB limit: %v", len(zipped), err)
	}

	t.Setenv(memlimit.Env, "4M")
	img := &IDX{Dims: []int{n, 28, 28}, Data: make([]byte, n*28*28)}
	lab := &IDX{Dims: []int{n}, Data: make([]byte, n)}
	for i := range lab.Data {
		lab.Data[i] = byte(i % 2)
	}
	if _, err := selectClasses(img, lab, 0, 1, "img", "lab"); err == nil || !strings.Contains(err.Error(), "as float64") {
		t.Errorf("18 MiB of float64 images under a 4 MiB limit: %v", err)
	}
	t.Setenv(memlimit.Env, "64M")
	if s, err := selectClasses(img, lab, 0, 1, "img", "lab"); err != nil || s.Len() != n {
		t.Errorf("under 64 MiB: %d rows, %v", s.Len(), err)
	}
}

// TestLoadMNISTRefusesFromHeaders: an image file whose header declares
// 2,700,000 images (2 GiB once inflated, under MaxIDXBytes and under the
// limit for the bytes alone) is refused from its header and the labels,
// before any image is read: the file holds no image data, so reading it
// would report truncation instead. The error names the file and the sizes.
func TestLoadMNISTRefusesFromHeaders(t *testing.T) {
	t.Setenv(memlimit.Env, "4G")
	const n = 2_700_000
	labels := make([]byte, n)
	for i := range labels {
		labels[i] = byte(i % 2)
	}
	huge := gzipBytes(encodeIDX([]int{n, MNISTSide, MNISTSide}, nil))
	hugeLabels := gzipBytes(encodeIDX([]int{n}, labels))
	for _, tc := range []struct {
		split       string
		images, lab string
		pca         int
		want        []string
	}{
		{SplitT10k, MNISTTestImages + ".gz", MNISTTestLabels, 0, []string{"these as float64 needs about"}},
		{SplitFull, MNISTTrainImages, MNISTTrainLabels + ".gz", 30, []string{"these as float64 with a 30-component PCA needs about"}},
	} {
		dir := t.TempDir()
		writeFakeMNIST(t, dir, []byte{0, 1, 1}, []byte{1, 0})
		for name, b := range map[string][]byte{tc.images: huge, tc.lab: hugeLabels} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, _, err := LoadMNISTFeatures(dir, 0, 1, tc.split, tc.pca, false)
		errorMentions(t, tc.split, err, append(tc.want, filepath.Join(dir, tc.images)+" declares 2700000 images of 28×28 pixels (1.97 GiB once inflated), 2700000 of them digits 0 or 1",
			"more than the 4 GiB available")...)
		if err != nil && strings.Contains(err.Error(), "truncated") {
			t.Errorf("%s: image data read before the refusal: %v", tc.split, err)
		}

		// Labels that disagree with the header are refused before too.
		if err := os.WriteFile(filepath.Join(dir, tc.lab), encodeIDX([]int{3}, []byte{0, 1, 1}), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err = LoadMNISTFeatures(dir, 0, 1, tc.split, tc.pca, false)
		errorMentions(t, tc.split+" labels", err, "has 2700000 images but", "has 3 labels")
	}
}
