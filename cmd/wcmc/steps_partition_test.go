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

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/consensus"
	"github.com/wcmc-project/wcmc/dataset"
	"github.com/wcmc-project/wcmc/experiment"
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
// 30 images of 28×28 pixels, digits 3 (label 0), 8 (label 1) and 5
// (ignored); d = --pca without --intercept, --pca + 1 with it.
func TestPartitionMNIST(t *testing.T) {
	in := t.TempDir()
	const n, side = 30, dataset.MNISTSide
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
	want, wantTest, err := dataset.LoadMNIST(in, 3, 8, dataset.SplitT10k)
	if err != nil {
		t.Fatal(err)
	}
	pca, err := dataset.FitPCA(want.U, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		intercept       bool
		d               int
		wantU, wantTest *mat.Dense
		says            string
	}{
		{false, 3, pca.Transform(want.U), pca.Transform(wantTest.U), "d = 3 covariates: 3 principal components of the pixels, no intercept column"},
		{true, 4, dataset.WithBias(pca.Transform(want.U)), dataset.WithBias(pca.Transform(wantTest.U)),
			"d = 4 covariates: 3 principal components of the pixels + the constant-1 intercept (last column); run the later steps without --intercept"},
	} {
		out := t.TempDir()
		args := []string{"partition", "--mnist", in, "--classes", "3,8", "--split", "t10k", "--pca", "3", "--K", "2", "--out", out}
		if c.intercept {
			args = append(args, "--intercept")
		}
		stdout := mustRun(t, args...)
		if !strings.Contains(stdout, c.says) {
			t.Errorf("--intercept=%v: output %q does not say %q", c.intercept, stdout, c.says)
		}
		train, err := readData(filepath.Join(out, "data.csv"))
		if err != nil {
			t.Fatal(err)
		}
		test, err := readData(filepath.Join(out, "test.csv"))
		if err != nil {
			t.Fatal(err)
		}
		// 10 threes and 10 eights; every 5th of each class is held out.
		if train.Len() != 16 || test.Len() != 4 || train.Dim() != c.d || test.Dim() != c.d {
			t.Fatalf("--intercept=%v: train %d×%d, test %d×%d; want 16×%d and 4×%d", c.intercept, train.Len(), train.Dim(), test.Len(), test.Dim(), c.d, c.d)
		}
		sameBits(t, "projected training set", train.U, c.wantU)
		sameBits(t, "projected test set", test.U, c.wantTest)
		if !reflect.DeepEqual(train.V, want.V) {
			t.Errorf("training labels %v, want %v", train.V, want.V)
		}
		var meta partitionFile
		if err := readJSON(filepath.Join(out, "partition.json"), &meta); err != nil {
			t.Fatal(err)
		}
		if meta.Sizes[0]+meta.Sizes[1] != 16 || meta.Data != "data.csv" || meta.Test != "test.csv" || meta.D != c.d || meta.PCA != 3 || meta.Intercept != c.intercept {
			t.Errorf("partition.json = %+v", meta)
		}
	}
}

// TestPartitionMNISTAgreesWithExperiments: the defaults of partition
// --mnist give the covariates of the mnist-* experiments' defaults (PCA 30,
// no intercept: d = 30; the full split; digits 0 vs 1).
func TestPartitionMNISTAgreesWithExperiments(t *testing.T) {
	f := newPartitionCmd().Flags()
	for _, id := range []string{"mnist-gradients", "mnist-snr", "mnist-kl"} {
		spec, err := experiment.Lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		def := map[string]string{}
		for _, p := range spec.Params {
			def[p.Name] = p.Default
		}
		for flag, param := range map[string]string{"pca": "pca_dim", "intercept": "bias", "split": "split"} {
			if got := f.Lookup(flag).DefValue; got != def[param] {
				t.Errorf("%s: partition --%s defaults to %s, the experiment's %s to %s", id, flag, got, param, def[param])
			}
		}
		if got := f.Lookup("classes").DefValue; got != def["class_a"]+","+def["class_b"] {
			t.Errorf("%s: partition --classes defaults to %s, the experiment's classes to %s,%s", id, got, def["class_a"], def["class_b"])
		}
	}
}

// TestInterceptOption: --intercept of the CSV steps appends the constant-1
// covariate (the same bits as the library on the widened data), refuses a
// second one, and applies only where a CSV is read.
func TestInterceptOption(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	data, err := wcmc.LoadCSV(stepsData)
	if err != nil {
		t.Fatal(err)
	}
	wide := dataset.Set{U: dataset.WithBias(data.U), V: data.V}
	sampling := wcmc.Sampling{S: 20, BurnIn: 5, PriorVar: wcmc.DefaultPriorVar}

	mustRun(t, "sample", "--shard", stepsData, "--K", "2", "--worker", "1", "--S", "20", "--burnin", "5", "--seed", "3", "--intercept", "--out", p("s1.npy"))
	want, err := wcmc.SampleWorker(wide, 1, 2, sampling, 3)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "sample --intercept", mustNPY(t, p("s1.npy")), want)

	mustRun(t, "posterior", "--data", stepsData, "--S", "20", "--burnin", "5", "--seed", "3", "--intercept", "--out", p("ref.npy"))
	if want, err = wcmc.Posterior(wide, sampling, 3); err != nil {
		t.Fatal(err)
	}
	sameBits(t, "posterior --intercept", mustNPY(t, p("ref.npy")), want)

	// evaluate --test --intercept matches the d + 1 reference; without
	// --intercept the d check refuses the mix.
	if out := mustRun(t, "evaluate", "--reference", p("ref.npy"), "--allow-unconverged-reference", "--test", stepsData, "--intercept", p("s1.npy")); !strings.Contains(out, "file,err2,kl,mean_err,cov_err,coverage90,w2,err2_scaled\n") {
		t.Errorf("evaluate --intercept: %q", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"evaluate", "--reference", p("ref.npy"), "--test", stepsData, p("s1.npy")}, "d mismatch"},
		{[]string{"evaluate", "--reference", p("ref.npy"), "--intercept", p("s1.npy")}, "--intercept applies to --test only"},
		{[]string{"aggregate", "--scheme", "noiseless", "--intercept", "--out", p("g.npy"), p("s1.npy")}, "--intercept applies to --scheme wvcmc only"},
	} {
		if _, err := runSteps(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}

	// A file from partition --intercept already ends with the intercept.
	shards := p("shards")
	out := mustRun(t, "partition", "--data", stepsData, "--K", "2", "--intercept", "--out", shards)
	if !strings.Contains(out, "d = 4 covariates: the 3 covariates of "+stepsData+" + the constant-1 intercept") {
		t.Errorf("partition --data --intercept says %q", out)
	}
	_, err = runSteps("sample", "--shard", filepath.Join(shards, "shard-1.csv"), "--worker", "1", "--intercept", "--out", p("s2.npy"))
	if err == nil || !strings.Contains(err.Error(), "already the constant 1") || !strings.Contains(err.Error(), "drop --intercept") {
		t.Errorf("second intercept: error %v", err)
	}
	mustRun(t, "sample", "--shard", filepath.Join(shards, "shard-1.csv"), "--worker", "1", "--S", "20", "--burnin", "5", "--out", p("s2.npy"))
	if _, c := mustNPY(t, p("s2.npy")).Dims(); c != 4 {
		t.Errorf("samples of the partitioned shard have d = %d, want 4", c)
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
	// The flag defaults give the library's default: L-BFGS with its zero
	// (default) settings and the default holdout.
	o, err := optimizerFlags("lbfgs", channel.NOMA, 0, 0, 0, wcmc.DefaultHoldout, false)
	if err != nil || o.Method != (consensus.LBFGS{}) || o.Holdout != consensus.DefaultHoldout {
		t.Errorf("defaults: %+v, %v", o, err)
	}
	// --holdout 0 is no holdout.
	if o, _ := optimizerFlags("lbfgs", channel.NOMA, 0, 0, 0, 0, true); o.Holdout != consensus.Off {
		t.Errorf("lbfgs with --holdout 0: holdout %v, want consensus.Off", o.Holdout)
	}
	// SGD: the paper's steps and (default) iterations, no holdout unless
	// asked for.
	for acc, eta := range map[channel.Access]float64{channel.OMA: 1e-6, channel.NOMA: 1e-7} {
		o, err := optimizerFlags("sgd", acc, 0, 0, 0, wcmc.DefaultHoldout, false)
		if err != nil || o.Method != (consensus.SGD{Step: eta}) || o.Holdout != consensus.Off {
			t.Errorf("sgd over %v: %+v, %v", acc, o, err)
		}
	}
	if o, _ := optimizerFlags("sgd", channel.OMA, 0, 0, 0, 0.3, true); o.Holdout != 0.3 {
		t.Errorf("sgd with --holdout 0.3: holdout %v", o.Holdout)
	}
	// Newton: its default settings, no holdout unless asked for; names in
	// any case.
	if o, err := optimizerFlags("Newton", channel.NOMA, 0, 0, 0, wcmc.DefaultHoldout, false); err != nil || o.Method != (consensus.Newton{}) || o.Holdout != consensus.Off {
		t.Errorf("newton: %+v, %v", o, err)
	}
	if o, _ := optimizerFlags("newton", channel.NOMA, 0, 7, 0, 0.3, true); o.Method != (consensus.Newton{Iters: 7}) || o.Holdout != 0.3 {
		t.Errorf("newton --iters 7 --holdout 0.3: %+v", o)
	}
	for _, c := range []struct {
		method     string
		eta        float64
		iters, bat int
		hold       float64
		err        string
	}{
		{"lbfgs", 0.1, 0, 0, 0.2, "do not apply to lbfgs"},
		{"newton", 0.1, 0, 0, 0.2, "do not apply to newton"},
		{"bfgs", 0, 0, 0, 0.2, `--optimizer: unknown optimiser "bfgs" (want lbfgs, newton, adam or sgd)`},
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

// TestAggregateNewton: --optimizer newton runs Newton's method (NOMA: the
// signals span the receive dimensions) to a small gradient.
func TestAggregateNewton(t *testing.T) {
	dir := t.TempDir()
	stepsFixture(t, dir)
	p := func(n string) string { return filepath.Join(dir, n) }
	out := mustRun(t, "aggregate", "--rx", p("rx-noma"), "--data", stepsData, "--optimizer", "newton", "--out", p("g.npy"))
	if !strings.Contains(out, "wvcmc: newton,") || !strings.Contains(out, ": gradient-converged") {
		t.Errorf("--optimizer newton:\n%s", out)
	}
	g := mustNPY(t, p("g.npy"))
	if r, _ := g.Dims(); r != 30 {
		t.Errorf("%d global samples, want 30", r)
	}
	_, err := runSteps("aggregate", "--rx", p("rx-noma"), "--data", stepsData, "--optimizer", "bfgs", "--out", p("h.npy"))
	wantError(t, "--optimizer bfgs", err, `unknown optimiser "bfgs"`, "lbfgs, newton, adam or sgd")
}
