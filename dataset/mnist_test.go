package dataset

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// mnistDir holds the real MNIST t10k files (gzip'd), relative to this
// package's directory /work/main/dataset.
const mnistDir = "../../shared/data/mnist"

func skipWithoutMNIST(t *testing.T) {
	t.Helper()
	for _, f := range []string{MNISTTestImages + ".gz", MNISTTestLabels + ".gz"} {
		if _, err := os.Stat(filepath.Join(mnistDir, f)); err != nil {
			t.Skipf("real MNIST file %s not found in %s (the shared data folder): %v", f, mnistDir, err)
		}
	}
}

// mnistZeroOne is the 2115 t10k digits 0 (label 0) and 1 (label 1), read once.
var mnistZeroOne = sync.OnceValues(func() (Set, error) {
	return loadMNISTPair(filepath.Join(mnistDir, MNISTTestImages+".gz"), filepath.Join(mnistDir, MNISTTestLabels+".gz"), 0, 1)
})

func countLabels(v []float64) (zeros, ones int) {
	for _, x := range v {
		if x == 1 {
			ones++
		} else {
			zeros++
		}
	}
	return zeros, ones
}

func TestRealMNISTFiles(t *testing.T) {
	skipWithoutMNIST(t)
	img, err := ReadIDXFile(filepath.Join(mnistDir, MNISTTestImages+".gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(img.Dims) != 3 || img.Dims[0] != 10000 || img.Dims[1] != 28 || img.Dims[2] != 28 {
		t.Fatalf("t10k images have dims %v, want [10000 28 28]", img.Dims)
	}
	lab, err := ReadIDXFile(filepath.Join(mnistDir, MNISTTestLabels+".gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(lab.Dims) != 1 || lab.Dims[0] != 10000 {
		t.Fatalf("t10k labels have dims %v, want [10000]", lab.Dims)
	}

	s, err := mnistZeroOne()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if z, o := countLabels(s.V); z != 980 || o != 1135 || s.Dim() != 784 {
		t.Fatalf("t10k 0 vs 1: %d zeros, %d ones, %d pixels; want 980, 1135, 784", z, o, s.Dim())
	}
	lo, hi := 1.0, 0.0
	for _, x := range s.U.RawMatrix().Data {
		lo, hi = min(lo, x), max(hi, x)
	}
	if lo != 0 || hi != 1 {
		t.Fatalf("pixels span [%v, %v], want [0, 1]", lo, hi)
	}

	train, test, err := LoadMNIST(mnistDir, 0, 1, SplitT10k)
	if err != nil {
		t.Fatal(err)
	}
	z, o := countLabels(train.V)
	zt, ot := countLabels(test.V)
	if z != 784 || o != 908 || zt != 196 || ot != 227 {
		t.Fatalf("t10k split: train %d+%d, test %d+%d; want 784+908 and 196+227", z, o, zt, ot)
	}
	if train.Dim() != 784 || test.Dim() != 784 {
		t.Fatalf("t10k split dims %d, %d, want 784", train.Dim(), test.Dim())
	}
	// The held-out points are the 5th, 10th, … zero and the 5th, 10th, …
	// one, in file order; the rest is the training part, in file order.
	var seen [2]int
	var ti, ho int
	for i, v := range s.V {
		seen[int(v)]++
		if seen[int(v)]%5 == 0 {
			if !rowsEqual(test, ho, s, i) {
				t.Fatalf("held-out point %d is not digit %d of the 0/1 selection", ho, i)
			}
			ho++
		} else {
			if !rowsEqual(train, ti, s, i) {
				t.Fatalf("training point %d is not digit %d of the 0/1 selection", ti, i)
			}
			ti++
		}
	}

	// Swapping the classes swaps the labels.
	sw, _, err := LoadMNIST(mnistDir, 1, 0, SplitT10k)
	if err != nil {
		t.Fatal(err)
	}
	if z2, o2 := countLabels(sw.V); z2 != o || o2 != z {
		t.Fatalf("classes 1 vs 0: %d zeros and %d ones, want %d and %d", z2, o2, o, z)
	}

	_, _, err = LoadMNIST(mnistDir, 0, 1, SplitFull)
	if err == nil {
		t.Fatal("split full without the training files: no error")
	}
	for _, w := range []string{"missing " + MNISTTrainImages + " and " + MNISTTrainLabels, mnistDir, MNISTTestImages, MNISTTestLabels} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

func rowsEqual(a Set, i int, b Set, j int) bool {
	if a.V[i] != b.V[j] {
		return false
	}
	ra, rb := a.U.RawRowView(i), b.U.RawRowView(j)
	for k := range ra {
		if ra[k] != rb[k] {
			return false
		}
	}
	return true
}

// writeFakeMNIST writes four tiny IDX files (3×2 "images"), mixing plain and
// gzip'd content and names.
func writeFakeMNIST(t *testing.T, dir string, trainLabels, testLabels []byte) {
	t.Helper()
	img := func(labels []byte) []byte {
		data := make([]byte, 6*len(labels))
		for i, l := range labels {
			for p := range 6 {
				data[6*i+p] = l*25 + byte(p)
			}
		}
		return encodeIDX([]int{len(labels), 3, 2}, data)
	}
	files := map[string][]byte{
		MNISTTrainImages:         img(trainLabels),
		MNISTTrainLabels + ".gz": gzipBytes(encodeIDX([]int{len(trainLabels)}, trainLabels)),
		MNISTTestImages + ".gz":  img(testLabels),                                          // plain content despite the name
		MNISTTestLabels:          gzipBytes(encodeIDX([]int{len(testLabels)}, testLabels)), // gzip despite the name
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadMNISTFull(t *testing.T) {
	dir := t.TempDir()
	writeFakeMNIST(t, dir, []byte{3, 7, 7, 1, 3, 9}, []byte{7, 3, 2})
	train, test, err := LoadMNIST(dir, 3, 7, SplitFull)
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 4 || test.Len() != 2 || train.Dim() != 6 || test.Dim() != 6 {
		t.Fatalf("sizes train %d×%d, test %d×%d; want 4×6 and 2×6", train.Len(), train.Dim(), test.Len(), test.Dim())
	}
	wantV := []float64{0, 1, 1, 0}
	for i, v := range wantV {
		if train.V[i] != v {
			t.Fatalf("train labels %v, want %v (digit 7 → 1, digit 3 → 0)", train.V, wantV)
		}
	}
	if test.V[0] != 1 || test.V[1] != 0 {
		t.Fatalf("test labels %v, want [1 0]", test.V)
	}
	if got, want := train.U.At(1, 5), float64(7*25+5)/255; got != want {
		t.Fatalf("pixel = %v, want %v", got, want)
	}
}

func TestLoadMNISTErrors(t *testing.T) {
	dir := t.TempDir()
	writeFakeMNIST(t, dir, []byte{3, 7, 11}, []byte{7, 3})
	mismatch := t.TempDir()
	writeFakeMNIST(t, mismatch, []byte{3, 7}, []byte{7, 3})
	os.WriteFile(filepath.Join(mismatch, MNISTTestLabels), encodeIDX([]int{3}, []byte{7, 3, 3}), 0o644)
	empty := t.TempDir()
	for _, tc := range []struct {
		name   string
		dir    string
		a, b   int
		split  string
		wanted []string
	}{
		{"bad label", dir, 3, 7, SplitFull, []string{MNISTTrainLabels + ".gz", "label 2 is 11"}},
		{"count mismatch", mismatch, 3, 7, SplitT10k, []string{"has 2 images", "has 3 labels", MNISTTestLabels}},
		{"all missing", empty, 0, 1, SplitFull, []string{"missing " + MNISTTrainImages + " and " + MNISTTrainLabels + " and " + MNISTTestImages + " and " + MNISTTestLabels, empty}},
		{"t10k missing", empty, 0, 1, SplitT10k, []string{"missing " + MNISTTestImages + " and " + MNISTTestLabels + " in", MNISTTrainImages}},
		{"same class", dir, 3, 3, SplitFull, []string{"two different digits"}},
		{"class range", dir, 3, 10, SplitFull, []string{"0…9"}},
		{"split", dir, 3, 7, "train", []string{`unknown split "train"`, SplitFull, SplitT10k}},
		{"absent classes", dir, 4, 5, SplitT10k, []string{"no images of digits 4 or 5"}},
	} {
		_, _, err := LoadMNIST(tc.dir, tc.a, tc.b, tc.split)
		errorMentions(t, tc.name, err, tc.wanted...)
	}
}
