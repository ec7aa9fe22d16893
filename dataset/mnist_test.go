package dataset

import (
	"crypto/md5"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// sharedMNISTDir is the shared data folder beside the project's checkout,
// relative to this package's directory.
const sharedMNISTDir = "../../shared/data/mnist"

// officialMNISTMD5 are the MD5 sums of the official gzip'd MNIST files.
var officialMNISTMD5 = map[string]string{
	MNISTTrainImages + ".gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
	MNISTTrainLabels + ".gz": "d53e105ee54ea40749a09fcbcd1e9432",
	MNISTTestImages + ".gz":  "9fb629c4189551a2d022fa330f9573f3",
	MNISTTestLabels + ".gz":  "ec29112dd5afa0611ce80d1b7f02629c",
}

// realMNIST is the directory holding the four real MNIST files: the shared
// data folder, else GoMNIST in the Go module cache; "" if neither has them.
var realMNIST = sync.OnceValue(func() string {
	if MNISTSplitIn(sharedMNISTDir) == SplitFull {
		return sharedMNISTDir
	}
	if dir, ok := FindGoMNIST(); ok {
		return dir
	}
	return ""
})

// realMNISTDir returns the directory of the real MNIST files. Without them
// the test is skipped, or fails when the environment variable CI is set.
func realMNISTDir(t *testing.T) string {
	t.Helper()
	dir := realMNIST()
	if dir == "" {
		msg := fmt.Sprintf("the four real MNIST files are neither in %s nor in the Go module cache (%s); get them with: %s",
			sharedMNISTDir, GoMNISTDir(GoModCache()), GoMNISTDownload)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}

// mnistZeroOne is the 2115 t10k digits 0 (label 0) and 1 (label 1), read once.
var mnistZeroOne = sync.OnceValues(func() (Set, error) {
	dir := realMNIST()
	p := &mnistPair{img: filepath.Join(dir, MNISTTestImages+".gz"), lab: filepath.Join(dir, MNISTTestLabels+".gz")}
	if err := p.scan(0, 1); err != nil {
		return Set{}, err
	}
	return p.load(0, 1)
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
	mnistDir := realMNISTDir(t)
	for name, want := range officialMNISTMD5 {
		b, err := os.ReadFile(filepath.Join(mnistDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", md5.Sum(b)); got != want {
			t.Errorf("%s in %s has MD5 %s, want the official %s", name, mnistDir, got, want)
		}
	}
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

	if n, nt, err := MNISTSizes(mnistDir, 0, 1, SplitT10k); err != nil || n != train.Len() || nt != test.Len() {
		t.Errorf("MNISTSizes t10k = %d, %d, %v; LoadMNIST gives %d and %d", n, nt, err, train.Len(), test.Len())
	}
}

// TestRealMNISTFullSplit checks the paper's split (Sec. VI-C): the training
// files give N = 5923 + 6742 = 12665 digits 0/1 and the t10k files
// N_t = 980 + 1135 = 2115.
func TestRealMNISTFullSplit(t *testing.T) {
	mnistDir := realMNISTDir(t)
	n, nt, err := MNISTSizes(mnistDir, 0, 1, SplitFull)
	if err != nil || n != 12665 || nt != 2115 {
		t.Fatalf("MNISTSizes full = %d, %d, %v; want 12665 and 2115", n, nt, err)
	}
	train, test, err := LoadMNIST(mnistDir, 0, 1, SplitFull)
	if err != nil {
		t.Fatal(err)
	}
	if err := train.Validate(); err != nil {
		t.Fatal(err)
	}
	z, o := countLabels(train.V)
	zt, ot := countLabels(test.V)
	if z != 5923 || o != 6742 || zt != 980 || ot != 1135 || train.Dim() != 784 || test.Dim() != 784 {
		t.Fatalf("full split: train %d+%d×%d, test %d+%d×%d; want 5923+6742 and 980+1135 digits of 784 pixels",
			z, o, train.Dim(), zt, ot, test.Dim())
	}
	t10k, err := mnistZeroOne()
	if err != nil {
		t.Fatal(err)
	}
	for i := range test.Len() {
		if !rowsEqual(test, i, t10k, i) {
			t.Fatalf("test point %d is not t10k digit %d of the 0/1 selection", i, i)
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

// writeFakeMNIST writes four small IDX files (a few 28×28 images), mixing
// plain and gzip'd content and names.
func writeFakeMNIST(t *testing.T, dir string, trainLabels, testLabels []byte) {
	t.Helper()
	const px = MNISTSide * MNISTSide
	img := func(labels []byte) []byte {
		data := make([]byte, px*len(labels))
		for i, l := range labels {
			for p := range px {
				data[px*i+p] = l*25 + byte(p)
			}
		}
		return encodeIDX([]int{len(labels), MNISTSide, MNISTSide}, data)
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
	if train.Len() != 4 || test.Len() != 2 || train.Dim() != 784 || test.Dim() != 784 {
		t.Fatalf("sizes train %d×%d, test %d×%d; want 4×784 and 2×784", train.Len(), train.Dim(), test.Len(), test.Dim())
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

func TestMNISTSizesMatchLoad(t *testing.T) {
	dir := t.TempDir()
	// Test labels: eleven 7s and six 3s, so t10k holds out 2 + 1.
	test := []byte{7, 3, 7, 7, 2, 7, 3, 7, 7, 3, 7, 7, 3, 7, 3, 7, 3, 7, 0}
	writeFakeMNIST(t, dir, []byte{3, 7, 7, 1, 3, 9}, test)
	for _, split := range []string{SplitFull, SplitT10k} {
		train, tst, err := LoadMNIST(dir, 3, 7, split)
		if err != nil {
			t.Fatal(err)
		}
		n, nt, err := MNISTSizes(dir, 3, 7, split)
		if err != nil || n != train.Len() || nt != tst.Len() {
			t.Errorf("split %s: MNISTSizes = %d, %d, %v; LoadMNIST gives %d and %d", split, n, nt, err, train.Len(), tst.Len())
		}
	}
	if n, nt, _ := MNISTSizes(dir, 3, 7, SplitT10k); n != 14 || nt != 3 {
		t.Errorf("t10k: %d training and %d test points, want 14 and 3", n, nt)
	}
	for _, c := range []struct {
		a, b  int
		split string
		want  string
	}{
		{3, 3, SplitFull, "two different digits"},
		{3, 7, "train", "unknown split"},
		{4, 5, SplitFull, "no images of digits 4 or 5"},
	} {
		_, _, err := MNISTSizes(dir, c.a, c.b, c.split)
		errorMentions(t, c.want, err, c.want)
	}
	_, _, err := MNISTSizes(t.TempDir(), 0, 1, SplitT10k)
	errorMentions(t, "empty directory", err, "missing "+MNISTTestImages, GoMNISTDownload)
}

func TestMNISTSplitIn(t *testing.T) {
	dir := t.TempDir()
	if got := MNISTSplitIn(dir); got != "" {
		t.Errorf("empty directory: split %q, want none", got)
	}
	if got := MNISTSplitIn(filepath.Join(dir, "absent")); got != "" {
		t.Errorf("absent directory: split %q, want none", got)
	}
	for _, f := range []string{MNISTTestImages + ".gz", MNISTTestLabels} {
		os.WriteFile(filepath.Join(dir, f), nil, 0o644)
	}
	if got := MNISTSplitIn(dir); got != SplitT10k {
		t.Errorf("t10k files only: split %q, want %q", got, SplitT10k)
	}
	os.WriteFile(filepath.Join(dir, MNISTTrainImages), nil, 0o644)
	if got := MNISTSplitIn(dir); got != SplitT10k {
		t.Errorf("three files: split %q, want %q", got, SplitT10k)
	}
	os.WriteFile(filepath.Join(dir, MNISTTrainLabels+".gz"), nil, 0o644)
	if got := MNISTSplitIn(dir); got != SplitFull {
		t.Errorf("four files: split %q, want %q", got, SplitFull)
	}
}

// TestLoadMNISTFeatures checks d: pcaDim scores, then the intercept column
// if asked for; pcaDim = 0 keeps the pixels.
func TestLoadMNISTFeatures(t *testing.T) {
	dir := t.TempDir()
	writeFakeMNIST(t, dir, []byte{3, 7, 7, 1, 3, 9, 7, 3, 7}, []byte{7, 3, 2, 3})
	train, test, err := LoadMNIST(dir, 3, 7, SplitFull)
	if err != nil {
		t.Fatal(err)
	}
	pca, err := FitPCA(train.U, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pca       int
		intercept bool
		wantTrain *mat.Dense
		wantTest  *mat.Dense
	}{
		{2, false, pca.Transform(train.U), pca.Transform(test.U)},
		{2, true, WithBias(pca.Transform(train.U)), WithBias(pca.Transform(test.U))},
		{0, false, train.U, test.U},
		{0, true, WithBias(train.U), WithBias(test.U)},
	} {
		tr, te, err := LoadMNISTFeatures(dir, 3, 7, SplitFull, c.pca, c.intercept)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(tr.U, c.wantTrain) || !mat.Equal(te.U, c.wantTest) || !slices.Equal(tr.V, train.V) || !slices.Equal(te.V, test.V) {
			t.Errorf("pca %d, intercept %v: covariates or labels differ from LoadMNIST + FitPCA + WithBias", c.pca, c.intercept)
		}
	}
	_, _, err = LoadMNISTFeatures(dir, 3, 7, SplitFull, -1, false)
	errorMentions(t, "negative PCA dimension", err, "PCA dimension -1")
	_, _, err = LoadMNISTFeatures(dir, 3, 7, SplitFull, 785, false)
	errorMentions(t, "PCA dimension above the pixels", err, "PCA dimension 785")
}
