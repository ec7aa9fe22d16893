package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"wcmc"
	"wcmc/channel"
	"wcmc/consensus"
	"wcmc/dataset"
)

func TestPartitionHeterogeneousMatchesLibrary(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "partition", "--data", stepsData, "--K", "3", "--rule", "heterogeneous", "--zeta", "2", "--seed", "5", "--out", dir)
	data, err := wcmc.LoadCSV(stepsData)
	if err != nil {
		t.Fatal(err)
	}
	shards, err := wcmc.PartitionHeterogeneous(data, 3, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	var meta partitionFile
	if err := readJSON(filepath.Join(dir, "partition.json"), &meta); err != nil {
		t.Fatal(err)
	}
	for k, sh := range shards {
		got, err := readData(filepath.Join(dir, meta.Shards[k]))
		if err != nil {
			t.Fatal(err)
		}
		sameBits(t, fmt.Sprintf("shard %d", k+1), got.U, sh.U)
		ones := 0
		for _, v := range got.V {
			ones += int(v)
		}
		if meta.Sizes[k] != sh.Len() || meta.Ones[k] != ones {
			t.Errorf("partition.json worker %d: size %d, ones %d; shard has %d, %d", k+1, meta.Sizes[k], meta.Ones[k], sh.Len(), ones)
		}
	}
	// ζ = 2 skews class 1 towards worker 1 and class 0 towards worker K.
	frac := func(k int) float64 { return float64(meta.Ones[k]) / float64(meta.Sizes[k]) }
	if !(frac(0) > frac(1) && frac(1) > frac(2)) {
		t.Errorf("class-1 fractions %.2f %.2f %.2f, want decreasing", frac(0), frac(1), frac(2))
	}
	if meta.K != 3 || meta.N != 400 || meta.D != 3 || meta.Rule != "heterogeneous" || meta.Zeta != 2 || meta.Seed != 5 {
		t.Errorf("partition.json = %+v", meta)
	}

	if _, err := runSteps("partition", "--data", stepsData, "--K", "3", "--zeta", "1", "--out", t.TempDir()); err == nil ||
		!strings.Contains(err.Error(), "--zeta applies to --rule heterogeneous only") {
		t.Errorf("--zeta with the equal rule: %v", err)
	}
}

// writeIDX writes an unsigned-byte IDX file with the given dimensions.
func writeIDX(t *testing.T, path string, data []byte, dims ...int) {
	t.Helper()
	b := binary.BigEndian.AppendUint32(nil, uint32(0x800+len(dims)))
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
	}
	if err := os.WriteFile(path, append(b, data...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPartitionMNIST partitions a tiny IDX data set in the MNIST layout:
// 30 images of 4×4 pixels, digits 3 (label 0), 8 (label 1) and 5 (ignored).
func TestPartitionMNIST(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	const n, side = 30, 4
	digits := make([]byte, n)
	pix := make([]byte, n*side*side)
	for i := range n {
		digits[i] = []byte{3, 8, 5}[i%3]
		for j := range side * side {
			pix[i*side*side+j] = byte((i*37 + j*11 + int(digits[i])*j*5) % 256)
		}
	}
	writeIDX(t, filepath.Join(in, dataset.MNISTTestImages), pix, n, side, side)
	writeIDX(t, filepath.Join(in, dataset.MNISTTestLabels), digits, n)
	mustRun(t, "partition", "--mnist", in, "--classes", "3,8", "--split", "t10k", "--pca", "3", "--K", "2", "--out", out)

	train, err := readData(filepath.Join(out, "data.csv"))
	if err != nil {
		t.Fatal(err)
	}
	test, err := readData(filepath.Join(out, "test.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// 10 threes and 10 eights; every 5th of each class is held out.
	if train.Len() != 16 || test.Len() != 4 || train.Dim() != 4 || test.Dim() != 4 {
		t.Fatalf("train %d×%d, test %d×%d; want 16×4 and 4×4 (3 components + intercept)", train.Len(), train.Dim(), test.Len(), test.Dim())
	}
	want, wantTest, err := dataset.LoadMNIST(in, 3, 8, dataset.SplitT10k)
	if err != nil {
		t.Fatal(err)
	}
	pca, err := dataset.FitPCA(want.U, 3)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "projected training set", train.U, dataset.WithBias(pca.Transform(want.U)))
	sameBits(t, "projected test set", test.U, dataset.WithBias(pca.Transform(wantTest.U)))
	if !reflect.DeepEqual(train.V, want.V) {
		t.Errorf("training labels %v, want %v", train.V, want.V)
	}
	var meta partitionFile
	if err := readJSON(filepath.Join(out, "partition.json"), &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Sizes[0]+meta.Sizes[1] != 16 || meta.Data != "data.csv" || meta.Test != "test.csv" || meta.D != 4 {
		t.Errorf("partition.json = %+v", meta)
	}
}

func TestWorkerOrder(t *testing.T) {
	for _, c := range []struct {
		in, want []string
		err      string
	}{
		{in: []string{"s/samples-10.npy", "s/samples-2.npy", "s/samples-1.npy", "s/samples-3.npy", "s/samples-4.npy", "s/samples-5.npy",
			"s/samples-6.npy", "s/samples-7.npy", "s/samples-8.npy", "s/samples-9.npy"},
			want: []string{"s/samples-1.npy", "s/samples-2.npy", "s/samples-3.npy", "s/samples-4.npy", "s/samples-5.npy",
				"s/samples-6.npy", "s/samples-7.npy", "s/samples-8.npy", "s/samples-9.npy", "s/samples-10.npy"}},
		{in: []string{"b.npy", "a.npy"}, want: []string{"b.npy", "a.npy"}},
		{in: []string{"x-2.npy", "a.npy"}, want: []string{"x-2.npy", "a.npy"}},
		{in: []string{"x-1.npy", "y-1.npy"}, err: "two files for worker 1"},
		{in: []string{"x-0.npy", "x-1.npy"}, err: "no file for worker 2"},
		{in: nil, err: "no sample files"},
	} {
		got, err := workerOrder(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("workerOrder(%v): error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("workerOrder(%v) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestOptimizerFlags(t *testing.T) {
	// The flag defaults give the library's default (the zero Optimizer).
	o, err := optimizerFlags("lbfgs", channel.NOMA, 0, 0, 0, wcmc.DefaultHoldout, false)
	if err != nil || o.Method != consensus.LBFGS || o.Holdout != wcmc.DefaultHoldout || o.Eta != 0 || o.Iters != 0 || o.BatchSize != 0 {
		t.Errorf("defaults: %+v, %v", o, err)
	}
	// SGD: the paper's steps and iterations, no holdout unless asked for.
	for acc, eta := range map[channel.Access]float64{channel.OMA: 1e-6, channel.NOMA: 1e-7} {
		o, err := optimizerFlags("sgd", acc, 0, 0, 0, wcmc.DefaultHoldout, false)
		if err != nil || o.Eta != eta || o.Iters != 50 || o.Holdout != 0 {
			t.Errorf("sgd over %v: %+v, %v", acc, o, err)
		}
	}
	if o, _ := optimizerFlags("sgd", channel.OMA, 0, 0, 0, 0.3, true); o.Holdout != 0.3 {
		t.Errorf("sgd with --holdout 0.3: holdout %v", o.Holdout)
	}
	for _, c := range []struct {
		method     string
		eta        float64
		iters, bat int
		hold       float64
		err        string
	}{
		{"lbfgs", 0.1, 0, 0, 0.2, "do not apply to lbfgs"},
		{"newton", 0, 0, 0, 0.2, `--optimizer "newton"`},
		{"adam", -1, 0, 0, 0.2, "--eta must be ≥ 0"},
		{"adam", 0, -1, 0, 0.2, "--iters must be ≥ 0"},
		{"adam", 0, 0, -1, 0.2, "--batch must be ≥ 0"},
		{"adam", 0, 0, 0, 1, "--holdout must be in [0, 1)"},
		{"adam", 0, 0, 0, math.NaN(), "--holdout must be in [0, 1)"},
	} {
		if _, err := optimizerFlags(c.method, channel.OMA, c.eta, c.iters, c.bat, c.hold, true); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%+v: error %v, want %q", c, err, c.err)
		}
	}
}
