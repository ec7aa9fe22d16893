package dataset

import (
	"bytes"
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
