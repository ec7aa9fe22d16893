package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/internal/memlimit"
)

// The MNIST file names read by LoadMNIST; each may also carry a .gz suffix.
const (
	MNISTTrainImages = "train-images-idx3-ubyte"
	MNISTTrainLabels = "train-labels-idx1-ubyte"
	MNISTTestImages  = "t10k-images-idx3-ubyte"
	MNISTTestLabels  = "t10k-labels-idx1-ubyte"
)

// The splits accepted by LoadMNIST.
const (
	// SplitFull trains on the MNIST training files and tests on the t10k
	// files (the paper's setting: 5923 zeros + 6742 ones = 12665 training
	// and 980 + 1135 = 2115 test points for classes 0 vs 1).
	SplitFull = "full"
	// SplitT10k reads only the t10k files and holds out every 5th image of
	// each selected class (within-class positions 4, 9, 14, … in file order)
	// as the test set, the rest being the training set: ≈ 80/20, stratified
	// and deterministic. For 0 vs 1 this gives 784 + 908 = 1692 training and
	// 196 + 227 = 423 test points out of 980 + 1135 = 2115.
	SplitT10k = "t10k"
)

// mnistHoldOutEvery is the stride of the held-out images in SplitT10k.
const mnistHoldOutEvery = 5

// LoadMNIST loads the binary problem classA vs classB from the MNIST IDX
// files in dir (Sec. VI-C). Each image becomes a row of rows·cols = 784
// covariates, the pixels scaled from 0…255 to [0, 1]; digit classB gets label
// v = 1 and digit classA label v = 0 (eq: probit model). Points keep their
// file order. split is SplitFull (all four files needed) or SplitT10k (only
// the two t10k files; see SplitT10k for the rule). A file is looked up
// first without and then with a .gz suffix; compression is detected from
// its content.
//
// A missing file is an error naming each missing file and dir, listing the
// expected names and giving GoMNISTDownload; a malformed file, an
// image/label count mismatch, or a label outside 0…9 is an error naming
// the file.
func LoadMNIST(dir string, classA, classB int, split string) (train, test Set, err error) {
	return loadMNIST(dir, classA, classB, split, 0)
}

// loadMNIST is LoadMNIST, its memory check counting a pcaDim-component PCA
// of the training images when pcaDim > 0. The image files' headers and
// the label files are read first, so that images whose float64 matrix
// cannot fit are refused before any of them is inflated or allocated.
func loadMNIST(dir string, classA, classB int, split string, pcaDim int) (train, test Set, err error) {
	names, err := mnistFiles(classA, classB, split)
	if err != nil {
		return Set{}, Set{}, err
	}
	paths, err := findMNISTFiles(dir, names)
	if err != nil {
		return Set{}, Set{}, err
	}
	pairs := []*mnistPair{{img: paths[MNISTTestImages], lab: paths[MNISTTestLabels]}}
	if split == SplitFull {
		pairs = append(pairs, &mnistPair{img: paths[MNISTTrainImages], lab: paths[MNISTTrainLabels]})
	}
	for _, p := range pairs {
		if err := p.scan(classA, classB); err != nil {
			return Set{}, Set{}, err
		}
	}
	if err := checkMNISTMemory(pairs, classA, classB, pcaDim); err != nil {
		return Set{}, Set{}, err
	}
	testAll, err := pairs[0].load(classA, classB)
	if err != nil {
		return Set{}, Set{}, err
	}
	if split == SplitT10k {
		train, test = splitEveryNth(testAll, mnistHoldOutEvery)
		return train, test, nil
	}
	train, err = pairs[1].load(classA, classB)
	if err != nil {
		return Set{}, Set{}, err
	}
	if train.Dim() != testAll.Dim() {
		return Set{}, Set{}, fmt.Errorf("mnist: training images have %d pixels but test images %d", train.Dim(), testAll.Dim())
	}
	return train, testAll, nil
}

// LoadMNISTFeatures loads classA vs classB with LoadMNIST and maps each
// image x to the covariates of Sec. VI-C: its scores Qᵀ(x − μ) on the first
// pcaDim principal components of the training images (FitPCA; pcaDim = 0
// keeps the pixels), followed by a constant 1 when intercept is set. So
// d = pcaDim, or pcaDim + 1 with the intercept; the paper's setting is
// pcaDim = 30 without intercept (d = 30).
func LoadMNISTFeatures(dir string, classA, classB int, split string, pcaDim int, intercept bool) (train, test Set, err error) {
	if pcaDim < 0 {
		return Set{}, Set{}, fmt.Errorf("mnist: PCA dimension %d, want ≥ 0 (0 = raw pixels)", pcaDim)
	}
	if train, test, err = loadMNIST(dir, classA, classB, split, pcaDim); err != nil {
		return Set{}, Set{}, err
	}
	if pcaDim > 0 {
		pca, err := FitPCA(train.U, pcaDim)
		if err != nil {
			return Set{}, Set{}, fmt.Errorf("mnist: PCA dimension %d of the training images: %w", pcaDim, err)
		}
		train.U, test.U = pca.Transform(train.U), pca.Transform(test.U)
	}
	if intercept {
		train.U, test.U = WithBias(train.U), WithBias(test.U)
	}
	return train, test, nil
}

// MNISTSizes returns the numbers of training and test points LoadMNIST
// returns for the same arguments, reading only the label files. For
// SplitT10k a class of n test digits gives ⌊n/5⌋ held-out points.
func MNISTSizes(dir string, classA, classB int, split string) (nTrain, nTest int, err error) {
	names, err := mnistFiles(classA, classB, split)
	if err != nil {
		return 0, 0, err
	}
	paths, err := findMNISTFiles(dir, names)
	if err != nil {
		return 0, 0, err
	}
	test, err := countMNISTClasses(paths[MNISTTestLabels], classA, classB)
	if err != nil {
		return 0, 0, err
	}
	if split == SplitT10k {
		held := test[0]/mnistHoldOutEvery + test[1]/mnistHoldOutEvery
		return test[0] + test[1] - held, held, nil
	}
	train, err := countMNISTClasses(paths[MNISTTrainLabels], classA, classB)
	if err != nil {
		return 0, 0, err
	}
	return train[0] + train[1], test[0] + test[1], nil
}

// MNISTSplitIn returns the split the files in dir support: SplitFull if
// all four MNIST files are there (plain or .gz), SplitT10k if only the two
// t10k files are, and "" otherwise. Only names are checked, not content.
func MNISTSplitIn(dir string) string {
	for _, split := range []string{SplitFull, SplitT10k} {
		names, _ := mnistFiles(0, 1, split)
		if _, err := findMNISTFiles(dir, names); err == nil {
			return split
		}
	}
	return ""
}

// mnistFiles checks the classes and returns the files split needs.
func mnistFiles(classA, classB int, split string) ([]string, error) {
	if classA < 0 || classA > 9 || classB < 0 || classB > 9 || classA == classB {
		return nil, fmt.Errorf("mnist: classes %d and %d, want two different digits in 0…9", classA, classB)
	}
	switch split {
	case SplitFull:
		return []string{MNISTTrainImages, MNISTTrainLabels, MNISTTestImages, MNISTTestLabels}, nil
	case SplitT10k:
		return []string{MNISTTestImages, MNISTTestLabels}, nil
	}
	return nil, fmt.Errorf("mnist: unknown split %q, want %q or %q", split, SplitFull, SplitT10k)
}

// findMNISTFiles resolves each name in dir, plain or with .gz, and reports
// all missing ones at once. A name present both plain and with .gz must
// hold the same content in both (SameIDXContent); the plain one is read.
func findMNISTFiles(dir string, names []string) (map[string]string, error) {
	paths := make(map[string]string, len(names))
	var missing []string
	for _, name := range names {
		found := false
		for _, cand := range []string{name, name + ".gz"} {
			p := filepath.Join(dir, cand)
			st, err := os.Stat(p)
			if err == nil && !st.IsDir() {
				if found {
					same, err := SameIDXContent(paths[name], p)
					if err != nil {
						return nil, fmt.Errorf("mnist: %w", err)
					}
					if !same {
						return nil, fmt.Errorf("mnist: %s and %s both exist but hold different data: remove the one that is not the MNIST file", paths[name], p)
					}
					break
				}
				paths[name], found = p, true
				continue
			}
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("mnist: %w", err)
			}
		}
		if !found {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("mnist: missing %s in directory %q (expected files, each plain or .gz: %s, %s, %s, %s; "+
			"`%s` fetches all four into the Go module cache, in the data/ folder of the directory it prints as \"Dir\")",
			strings.Join(missing, " and "), dir, MNISTTrainImages, MNISTTrainLabels, MNISTTestImages, MNISTTestLabels, GoMNISTDownload)
	}
	return paths, nil
}

// mnistPair is an images/labels file pair: the dimensions declared by
// the image file's header, and the labels with the rows of the two
// classes, known before any image is read.
type mnistPair struct {
	img, lab string
	dims     []int // images, rows, columns
	labels   *IDX
	keep     []int
}

// scan reads the header of the image file and the label file, and checks
// that they are MNIST images and labels of the same count.
func (p *mnistPair) scan(classA, classB int) error {
	dims, err := ReadIDXHeader(p.img)
	if err != nil {
		return err
	}
	if err := checkMNISTDims(dims, p.img); err != nil {
		return err
	}
	labDims, err := ReadIDXHeader(p.lab)
	if err != nil {
		return err
	}
	if len(labDims) != 1 {
		return fmt.Errorf("mnist: %s holds images (idx3), want labels (idx1-ubyte)", p.lab)
	}
	if dims[0] != labDims[0] {
		return fmt.Errorf("mnist: %s has %d images but %s has %d labels", p.img, dims[0], p.lab, labDims[0])
	}
	if p.labels, err = readMNISTLabels(p.lab); err != nil {
		return err
	}
	p.dims = dims
	p.keep, err = classRows(p.labels, classA, classB, p.lab)
	return err
}

// load reads the images of a scanned pair and selects the two classes.
func (p *mnistPair) load(classA, classB int) (Set, error) {
	img, err := ReadIDXFile(p.img)
	if err != nil {
		return Set{}, err
	}
	if err := CheckMNISTImages(img, p.img); err != nil {
		return Set{}, err
	}
	return selectClasses(img, p.labels, classA, classB, p.img, p.lab)
}

// checkMNISTMemory refuses scanned pairs whose images need more memory
// than memlimit allows: their pixels as read, the images of the two
// classes as float64 and, when pcaDim > 0, the PCA of the training images
// (the last pair), for which gonum's stat.PC centres a copy of them, its
// thin SVD copies that again and returns U of the same size.
func checkMNISTMemory(pairs []*mnistPair, classA, classB, pcaDim int) error {
	var need float64
	var files []string
	for _, p := range pairs {
		n, px := p.dims[0], p.dims[1]*p.dims[2]
		need += float64(n)*float64(px) + memlimit.Floats(len(p.keep), px+1)
		files = append(files, fmt.Sprintf("%s declares %d images of %d×%d pixels (%s once inflated), %d of them digits %d or %d",
			p.img, n, p.dims[1], p.dims[2], memlimit.Format(float64(n)*float64(px)), len(p.keep), classA, classB))
	}
	what := "mnist: " + strings.Join(files, "; ") + "; these as float64"
	if pcaDim > 0 {
		train := pairs[len(pairs)-1]
		px := train.dims[1] * train.dims[2]
		need += 3*memlimit.Floats(len(train.keep), px) + 2*memlimit.Floats(px, px)
		what += fmt.Sprintf(" with a %d-component PCA", pcaDim)
	}
	return memlimit.Check(what, need)
}

// selectClasses keeps the images of digits classA (label 0) and classB
// (label 1), pixels scaled to [0, 1].
func selectClasses(img, lab *IDX, classA, classB int, imgName, labName string) (Set, error) {
	n, px := img.Dims[0], img.Dims[1]*img.Dims[2]
	if n != lab.Dims[0] {
		return Set{}, fmt.Errorf("mnist: %s has %d images but %s has %d labels", imgName, n, labName, lab.Dims[0])
	}
	if px == 0 {
		return Set{}, fmt.Errorf("mnist: %s has empty %d×%d images", imgName, img.Dims[1], img.Dims[2])
	}
	keep, err := classRows(lab, classA, classB, labName)
	if err != nil {
		return Set{}, err
	}
	need := float64(len(img.Data)) + 8*float64(len(keep))*float64(px+1)
	if err := memlimit.Check(fmt.Sprintf("mnist: %d images of %d pixels from %s as float64", len(keep), px, imgName), need); err != nil {
		return Set{}, err
	}
	s := Set{U: mat.NewDense(len(keep), px, nil), V: make([]float64, len(keep))}
	for r, i := range keep {
		row := s.U.RawRowView(r)
		for j, b := range img.Data[i*px : (i+1)*px] {
			row[j] = float64(b) / 255
		}
		if int(lab.Data[i]) == classB {
			s.V[r] = 1
		}
	}
	return s, nil
}

// classRows returns the indices of the labels classA and classB, in file
// order.
func classRows(lab *IDX, classA, classB int, labName string) ([]int, error) {
	var keep []int
	for i, l := range lab.Data {
		if l > 9 {
			return nil, fmt.Errorf("mnist: %s: label %d is %d, want a digit 0…9", labName, i, l)
		}
		if int(l) == classA || int(l) == classB {
			keep = append(keep, i)
		}
	}
	if len(keep) == 0 {
		return nil, fmt.Errorf("mnist: %s has no images of digits %d or %d", labName, classA, classB)
	}
	return keep, nil
}

// readMNISTLabels reads an idx1-ubyte label file.
func readMNISTLabels(path string) (*IDX, error) {
	lab, err := ReadIDXFile(path)
	if err != nil {
		return nil, err
	}
	if len(lab.Dims) != 1 {
		return nil, fmt.Errorf("mnist: %s holds images (idx3), want labels (idx1-ubyte)", path)
	}
	return lab, nil
}

// countMNISTClasses reads a label file and counts the labels classA and
// classB.
func countMNISTClasses(path string, classA, classB int) ([2]int, error) {
	lab, err := readMNISTLabels(path)
	if err != nil {
		return [2]int{}, err
	}
	keep, err := classRows(lab, classA, classB, path)
	if err != nil {
		return [2]int{}, err
	}
	var n [2]int
	for _, i := range keep {
		if int(lab.Data[i]) == classB {
			n[1]++
		} else {
			n[0]++
		}
	}
	return n, nil
}

// splitEveryNth holds out the points at within-class positions every−1,
// 2·every−1, … (file order) and returns (kept, held out).
func splitEveryNth(s Set, every int) (train, test Set) {
	var tr, te []int
	var seen [2]int
	for i, v := range s.V {
		c := int(v)
		seen[c]++
		if seen[c]%every == 0 {
			te = append(te, i)
		} else {
			tr = append(tr, i)
		}
	}
	return s.Subset(tr), s.Subset(te)
}
