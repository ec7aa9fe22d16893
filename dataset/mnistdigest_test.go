package dataset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plainCopy writes every MNIST file of src into dst decompressed, under
// its plain name.
func plainCopy(t *testing.T, src, dst string) {
	t.Helper()
	for _, name := range []string{MNISTTrainImages, MNISTTrainLabels, MNISTTestImages, MNISTTestLabels} {
		paths, err := findMNISTFiles(src, []string{name})
		if err != nil {
			t.Fatal(err)
		}
		idx, err := ReadIDXFile(paths[name])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), encodeIDX(idx.Dims, idx.Data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMNISTDigestIdentifiesContentNotFolder(t *testing.T) {
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	writeFakeMNIST(t, a, []byte{0, 1, 1, 0, 2}, []byte{1, 0, 0})
	plainCopy(t, a, b)                                           // the same data, every file plain
	writeFakeMNIST(t, c, []byte{0, 1, 1, 0, 2}, []byte{1, 0, 1}) // one test label differs

	digest := func(dir, split string) string {
		t.Helper()
		d, err := MNISTDigest(dir, split)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(d, "sha256:") || len(d) != len("sha256:")+64 {
			t.Fatalf("digest %q, want sha256: and 64 hex digits", d)
		}
		return d
	}
	full := digest(a, SplitFull)
	if got := digest(b, SplitFull); got != full {
		t.Errorf("the same data plain and gzipped: digests %s and %s differ", got, full)
	}
	if got := digest(c, SplitFull); got == full {
		t.Error("a changed test label leaves the full split's digest unchanged")
	}
	t10k := digest(a, SplitT10k)
	if t10k == full {
		t.Error("the t10k split reads two of the four files, but its digest equals the full split's")
	}
	if got := digest(c, SplitT10k); got == t10k {
		t.Error("a changed test label leaves the t10k split's digest unchanged")
	}
	// The t10k split does not read the training files: removing them
	// changes nothing, and the full split then cannot be digested.
	for _, name := range []string{MNISTTrainImages, MNISTTrainLabels + ".gz"} {
		if err := os.Remove(filepath.Join(a, name)); err != nil {
			t.Fatal(err)
		}
	}
	if got := digest(a, SplitT10k); got != t10k {
		t.Errorf("t10k digest %s changed to %s when the training files went", t10k, got)
	}
	if _, err := MNISTDigest(a, SplitFull); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("full split without training files: err %v, want one naming the missing files", err)
	}
	if _, err := MNISTDigest(a, "half"); err == nil {
		t.Error("unknown split: no error")
	}
}
