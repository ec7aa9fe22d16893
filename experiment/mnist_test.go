package experiment

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wcmc/dataset"
	"wcmc/runner"
)

// mnistDir is the real MNIST test set shipped beside the project.
var mnistDir = filepath.Join("..", "..", "shared", "data", "mnist")

func TestMNISTReducedQuickRunsEndToEnd(t *testing.T) {
	if _, err := os.Stat(filepath.Join(mnistDir, dataset.MNISTTestImages+".gz")); err != nil {
		t.Skipf("MNIST test files not found in %s (%v): the real-data test needs them", mnistDir, err)
	}
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
	_, err = runner.Run(context.Background(), spec, runner.Options{Quick: true, Sets: []string{"data_dir=" + t.TempDir()}})
	if err == nil || !strings.Contains(err.Error(), dataset.MNISTTrainImages) {
		t.Fatalf("empty directory: error %v should name the missing file", err)
	}
}
