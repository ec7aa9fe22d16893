package wcmc_test

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/consensus"
	"github.com/wcmc-project/wcmc/dataset"
	"github.com/wcmc-project/wcmc/model"
	"github.com/wcmc-project/wcmc/sampler"
)

const smallCSV = "dataset/testdata/probit-small.csv"

func loadSmall(t *testing.T) dataset.Set {
	t.Helper()
	data, err := wcmc.LoadCSV(smallCSV)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func equalBits(a, b *mat.Dense) bool {
	ar, ac := a.Dims()
	br, bc := b.Dims()
	if ar != br || ac != bc {
		return false
	}
	for i := range ar {
		for j := range ac {
			if math.Float64bits(a.At(i, j)) != math.Float64bits(b.At(i, j)) {
				return false
			}
		}
	}
	return true
}

// docStream is the seed derivation as the package documentation states it,
// written out independently of the package.
func docStream(seed uint64, step, k uint64) *rand.Rand {
	m := func(z uint64) uint64 {
		z += 0x9e3779b97f4a7c15
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		return z ^ (z >> 31)
	}
	h := m(m(m(seed)^step) ^ k)
	return rand.New(rand.NewPCG(m(h^1), m(h^2)))
}

// TestMatchesCorePackages composes the pipeline from the core packages as
// experiment/probit.go does, with the generators the package documentation
// specifies, and checks that the facade gives the same bits.
func TestMatchesCorePackages(t *testing.T) {
	data := loadSmall(t)
	const K, S, burn, seed, prior = 3, 40, 10, 11, 2.0
	sampling := wcmc.Sampling{S: S, BurnIn: burn, PriorVar: prior}

	shards, err := wcmc.Partition(data, K, seed)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := dataset.PartitionEqual(docStream(seed, 1, 0), data.Len(), K)
	if err != nil {
		t.Fatal(err)
	}
	samples, err := wcmc.SampleWorkers(shards, sampling, seed)
	if err != nil {
		t.Fatal(err)
	}
	manual := make([]*mat.Dense, K)
	for k := range K {
		sh := data.Subset(idx[k])
		if !equalBits(sh.U, shards[k].U) {
			t.Fatalf("shard %d differs from dataset.PartitionEqual", k+1)
		}
		g, err := sampler.NewGibbs(sh.U, sh.V, K*prior) // tempered prior Kσ²
		if err != nil {
			t.Fatal(err)
		}
		manual[k] = mat.NewDense(S, data.Dim(), nil)
		if err := g.Sample(docStream(seed, 2, uint64(k+1)), manual[k], burn); err != nil {
			t.Fatal(err)
		}
		if !equalBits(manual[k], samples[k]) {
			t.Errorf("worker %d: SampleWorkers differs from Gibbs with prior Kσ² on the documented stream", k+1)
		}
	}

	link := channel.Config{Access: channel.OMA, Fading: channel.Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: 10, Physical: true}
	rx, err := wcmc.Transmit(samples, link, seed)
	if err != nil {
		t.Fatal(err)
	}
	rx2, err := channel.Transmit(docStream(seed, 3, 0), link, manual)
	if err != nil {
		t.Fatal(err)
	}
	for k := range rx.Y {
		if !equalBits(rx.Y[k], rx2.Y[k]) {
			t.Errorf("stream %d of Transmit differs from channel.Transmit on the documented stream", k+1)
		}
	}

	global, err := model.NewProbit(data.U, data.V, prior)
	if err != nil {
		t.Fatal(err)
	}
	opt := consensus.Settings{Method: consensus.Adam{Iters: 5, BatchSize: 100}, Holdout: consensus.Off}
	res, err := wcmc.Aggregate(rx, wcmc.Aggregation{Scheme: wcmc.WVCMC, Target: global, Optimizer: opt}, seed)
	if err != nil {
		t.Fatal(err)
	}
	init, _, err := consensus.InitialMap(rx2)
	if err != nil {
		t.Fatal(err)
	}
	fit, err := consensus.WVCMC(context.Background(), docStream(seed, 4, 0), rx2, global.Clone(), init, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !equalBits(res.Theta, fit.Map.Apply(rx2)) {
		t.Error("Aggregate(WVCMC) differs from InitialMap + consensus.WVCMC on the documented stream")
	}
	for _, c := range []struct {
		scheme string
		learn  func(*channel.Received) (consensus.Map, error)
	}{{wcmc.GCMC, consensus.GCMC}, {wcmc.WGCMC, consensus.WGCMC}} {
		res, err := wcmc.Aggregate(rx, wcmc.Aggregation{Scheme: c.scheme}, seed)
		if err != nil {
			t.Fatal(err)
		}
		m, err := c.learn(rx2)
		if err != nil {
			t.Fatal(err)
		}
		if !equalBits(res.Theta, m.Apply(rx2)) || res.Fit != nil {
			t.Errorf("Aggregate(%s) differs from the consensus package", c.scheme)
		}
	}

	ref, err := wcmc.Posterior(data, sampling, seed)
	if err != nil {
		t.Fatal(err)
	}
	g, err := sampler.NewGibbs(data.U, data.V, prior) // untempered
	if err != nil {
		t.Fatal(err)
	}
	want := mat.NewDense(S, data.Dim(), nil)
	if err := g.Sample(docStream(seed, 5, 0), want, burn); err != nil {
		t.Fatal(err)
	}
	if !equalBits(ref, want) {
		t.Error("Posterior differs from Gibbs with prior σ² on the documented stream")
	}
}

// Worker k alone equals worker k of the parallel run, whatever the number
// of cores; different workers and seeds get different streams.
func TestSampleWorkerIndependentOfScheduling(t *testing.T) {
	data := loadSmall(t)
	const K, seed = 5, 3
	shards, err := wcmc.Partition(data, K, seed)
	if err != nil {
		t.Fatal(err)
	}
	s := wcmc.Sampling{S: 30, BurnIn: 5}
	var runs [][]*mat.Dense
	for _, procs := range []int{1, 3} {
		old := runtime.GOMAXPROCS(procs)
		out, err := wcmc.SampleWorkers(shards, s, seed)
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, out)
	}
	for k := range K {
		alone, err := wcmc.SampleWorker(shards[k], k+1, K, s, seed)
		if err != nil {
			t.Fatal(err)
		}
		if !equalBits(alone, runs[0][k]) || !equalBits(alone, runs[1][k]) {
			t.Errorf("worker %d: SampleWorker differs from SampleWorkers", k+1)
		}
	}
	// Same shard, different worker index or seed: a different chain.
	a, _ := wcmc.SampleWorker(shards[0], 1, K, s, seed)
	b, _ := wcmc.SampleWorker(shards[0], 2, K, s, seed)
	c, _ := wcmc.SampleWorker(shards[0], 1, K, s, seed+1)
	if equalBits(a, b) || equalBits(a, c) {
		t.Error("worker streams coincide across worker index or seed")
	}
}

func TestPartitionShapes(t *testing.T) {
	data := loadSmall(t)
	shards, err := wcmc.Partition(data, 7, 1) // 400 = 7·57 + 1
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for k, sh := range shards {
		if l := sh.Len(); l != 57 && l != 58 {
			t.Errorf("shard %d has %d points, want 57 or 58", k+1, l)
		}
		n += sh.Len()
	}
	if n != data.Len() {
		t.Errorf("shards hold %d points, the data %d", n, data.Len())
	}
	het, err := wcmc.PartitionHeterogeneous(data, 4, 1.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	ones := func(s dataset.Set) (c float64) {
		for _, v := range s.V {
			c += v
		}
		return c / float64(s.Len())
	}
	if !(ones(het[0]) > ones(het[3])) {
		t.Errorf("heterogeneous: class-1 share %.2f (worker 1) ≤ %.2f (worker 4)", ones(het[0]), ones(het[3]))
	}
}

func TestErrors(t *testing.T) {
	data := loadSmall(t)
	shards, _ := wcmc.Partition(data, 2, 1)
	samples, err := wcmc.SampleWorkers(shards, wcmc.Sampling{S: 20}, 1)
	if err != nil {
		t.Fatal(err)
	}
	noma := channel.Config{Access: channel.NOMA, Repetition: 1, Power: 1, SNRdB: 10}
	rx, err := wcmc.Transmit(samples, noma, 1)
	if err != nil {
		t.Fatal(err)
	}
	badLabel := dataset.Set{U: mat.NewDense(2, 1, []float64{1, 2}), V: []float64{1, 2}}
	wide := dataset.Set{U: mat.NewDense(2, 4, nil), V: []float64{1, 0}}
	target2, _ := model.NewProbit(mat.NewDense(2, 2, []float64{1, 0, 0, 1}), []float64{1, 0}, 1)
	check := func(name string, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, want)
		}
	}
	_, err = wcmc.SampleWorker(shards[0], 1, 2, wcmc.Sampling{S: 0}, 1)
	check("S = 0", err, "S = 0")
	_, err = wcmc.SampleWorker(shards[0], 1, 2, wcmc.Sampling{S: 5, BurnIn: -1}, 1)
	check("negative burn-in", err, "burn-in -1")
	_, err = wcmc.SampleWorker(shards[0], 1, 2, wcmc.Sampling{S: 5, PriorVar: math.Inf(1)}, 1)
	check("infinite prior", err, "prior variance")
	_, err = wcmc.SampleWorker(shards[0], 3, 2, wcmc.Sampling{S: 5}, 1)
	check("k > K", err, "1 ≤ k ≤ K")
	_, err = wcmc.SampleWorker(badLabel, 1, 1, wcmc.Sampling{S: 5}, 1)
	check("bad label", err, "worker 1")
	_, err = wcmc.SampleWorkers([]dataset.Set{shards[0], wide}, wcmc.Sampling{S: 5}, 1)
	check("d mismatch", err, "worker 2 has d = 4")
	_, err = wcmc.SampleWorkers(nil, wcmc.Sampling{S: 5}, 1)
	check("no shards", err, "no shards")
	_, err = wcmc.Partition(badLabel, 1, 1)
	check("partition bad label", err, "label")
	_, err = wcmc.Partition(data, 401, 1)
	check("K > N", err, "401")
	_, err = wcmc.Posterior(badLabel, wcmc.Sampling{S: 5}, 1)
	check("posterior bad label", err, "label")
	_, err = wcmc.Aggregate(rx, wcmc.Aggregation{Scheme: wcmc.GCMC}, 1)
	check("GCMC over NOMA", err, "OMA")
	_, err = wcmc.Aggregate(rx, wcmc.Aggregation{Scheme: wcmc.WVCMC}, 1)
	check("WVCMC without target", err, "Target")
	_, err = wcmc.Aggregate(rx, wcmc.Aggregation{Scheme: wcmc.WVCMC, Target: target2}, 1)
	check("target d mismatch", err, "d = 2")
	_, err = wcmc.Aggregate(rx, wcmc.Aggregation{Scheme: "cmc"}, 1)
	check("unknown scheme", err, `"cmc"`)
	_, err = wcmc.Evaluate(samples[0], mat.NewDense(3, 2, nil), nil)
	check("evaluate d mismatch", err, "d = 2")
	_, err = wcmc.Evaluate(samples[0], samples[1], mat.NewDense(3, 2, nil))
	check("test d mismatch", err, "test inputs have d = 2")
	_, err = wcmc.LoadCSV("no/such.csv")
	check("missing CSV", err, "no/such.csv")
}

func TestEvaluate(t *testing.T) {
	data := loadSmall(t)
	ref, err := wcmc.Posterior(data, wcmc.Sampling{S: 100, BurnIn: 10}, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := wcmc.Evaluate(ref, ref, data.U)
	if err != nil || m.Err2 != 0 || m.KL != 0 {
		t.Errorf("reference against itself: %+v, %v; want zeros", m, err)
	}
	m, err = wcmc.Evaluate(ref, ref, nil)
	if err != nil || !math.IsNaN(m.KL) {
		t.Errorf("without test inputs: KL = %v, %v; want NaN", m.KL, err)
	}
	// Doubling every sample quadruples the second moment: err2 = 3 exactly
	// (every entry's relative error is |4R − R|/|R|).
	var twice mat.Dense
	twice.Scale(2, ref)
	m, err = wcmc.Evaluate(&twice, ref, nil)
	if err != nil || math.Abs(m.Err2-3) > 1e-12 {
		t.Errorf("err2 of 2θ = %v, %v; want 3", m.Err2, err)
	}
	// The uncertainty metrics of 2θ against the draws θ (mean μ, covariance
	// C): mean 2μ, covariance 4C, so mean_err = RMS(μ_i/σ_i), cov_err = 3
	// and, 4C commuting with C, W₂² = ‖μ‖² + tr C.
	s, d := ref.Dims()
	var msd2, mu2, trC float64
	for j := range d {
		col := mat.Col(nil, j, ref)
		mean, sd := stat.MeanStdDev(col, nil)
		msd2 += mean * mean / (sd * sd)
		mu2 += mean * mean
		trC += sd * sd
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"mean_err", m.MeanErr, math.Sqrt(msd2 / float64(d))},
		{"cov_err", m.CovErr, 3},
		{"w2", m.W2, math.Sqrt(mu2/trC + 1)},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s of 2θ = %.15g, want %.15g", c.name, c.got, c.want)
		}
	}
	// Against themselves the draws have mean_err = cov_err = 0, w2 ≈ 0 and
	// coverage90 = the share of them between their ⌈0.05S⌉-th and
	// ⌈0.95S⌉-th smallest: 91 of 100.
	m, err = wcmc.Evaluate(ref, ref, nil)
	if err != nil || m.MeanErr != 0 || m.CovErr != 0 || m.W2 > 1e-7 || s != 100 || math.Abs(m.Coverage90-0.91) > 1e-15 {
		t.Errorf("the reference against itself: %+v, %v", m, err)
	}
}
