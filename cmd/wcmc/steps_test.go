package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/consensus"
	"github.com/wcmc-project/wcmc/model"
	"github.com/wcmc-project/wcmc/npy"
)

// stepsData is the small CSV data set the walkthrough of docs/OWN_DATA.md uses.
const stepsData = "../../dataset/testdata/probit-small.csv"

// runSteps runs the wcmc command with args in process and returns stdout.
func runSteps(args ...string) (string, error) {
	var out, errb bytes.Buffer
	root := newRootCmd(nil, &out, &errb)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := runSteps(args...)
	if err != nil {
		t.Fatalf("wcmc %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func mustNPY(t *testing.T, path string) *mat.Dense {
	t.Helper()
	m, err := npy.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sameBits reports whether a and b have the same shape and bit patterns.
func sameBits(t *testing.T, what string, got, want *mat.Dense) {
	t.Helper()
	gr, gc := got.Dims()
	wr, wc := want.Dims()
	if gr != wr || gc != wc {
		t.Errorf("%s: %d×%d, want %d×%d", what, gr, gc, wr, wc)
		return
	}
	for i := range gr {
		for j := range gc {
			if math.Float64bits(got.At(i, j)) != math.Float64bits(want.At(i, j)) {
				t.Errorf("%s: entry (%d, %d) = %v, in process %v", what, i, j, got.At(i, j), want.At(i, j))
				return
			}
		}
	}
}

// TestStepsEqualLibrary runs the pipeline step by step through the CLI,
// workers one at a time, and checks every file against the same pipeline
// run in process with the library (workers in parallel): bit for bit.
func TestStepsEqualLibrary(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const (
		K     = 4
		S     = 60
		burn  = 20
		seed  = 7
		snr   = 20.0
		refS  = 300
		prior = 1.5
	)
	sd := fmt.Sprint(seed)

	// Step by step.
	mustRun(t, "partition", "--data", stepsData, "--K", fmt.Sprint(K), "--seed", sd, "--out", p("shards"))
	for _, k := range []int{3, 1, 4, 2} { // any order, one process each
		mustRun(t, "sample", "--shard", p(fmt.Sprintf("shards/shard-%d.csv", k)), "--worker", fmt.Sprint(k),
			"--S", fmt.Sprint(S), "--burnin", fmt.Sprint(burn), "--prior-var", fmt.Sprint(prior), "--seed", sd,
			"--out", p(fmt.Sprintf("samples/samples-%d.npy", k)))
	}
	// Shell-glob order: samples-1, -2, … sorted as strings; given shuffled here.
	files := []string{p("samples/samples-2.npy"), p("samples/samples-4.npy"), p("samples/samples-1.npy"), p("samples/samples-3.npy")}
	for _, acc := range []string{"oma", "noma"} {
		mustRun(t, append([]string{"transmit", "--access", acc, "--snr", fmt.Sprint(snr), "--seed", sd, "--out", p("rx-" + acc)}, files...)...)
	}
	aggs := []struct {
		out  string
		args []string
	}{
		{"gcmc.npy", []string{"--rx", p("rx-oma"), "--scheme", "gcmc"}},
		{"wgcmc-oma.npy", []string{"--rx", p("rx-oma"), "--scheme", "wgcmc"}},
		{"wgcmc-noma.npy", []string{"--rx", p("rx-noma/link.json"), "--scheme", "wgcmc"}},
		{"wvcmc-oma.npy", []string{"--rx", p("rx-oma"), "--data", stepsData, "--prior-var", fmt.Sprint(prior)}},
		{"wvcmc-noma.npy", []string{"--rx", p("rx-noma"), "--scheme", "wvcmc", "--data", stepsData, "--prior-var", fmt.Sprint(prior)}},
		{"wvcmc-adam.npy", []string{"--rx", p("rx-noma"), "--scheme", "wvcmc", "--data", stepsData, "--prior-var", fmt.Sprint(prior),
			"--optimizer", "adam", "--batch", "50", "--iters", "10", "--seed", sd}},
		{"noiseless.npy", append([]string{"--scheme", "noiseless"}, files...)},
		// The results-file name and the former CLI name are one scheme.
		{"cmc-noiseless.npy", append([]string{"--scheme", "cmc-noiseless"}, files...)},
	}
	for _, a := range aggs {
		mustRun(t, append(append([]string{"aggregate"}, a.args...), "--out", p(a.out))...)
	}
	mustRun(t, "posterior", "--data", stepsData, "--S", fmt.Sprint(refS), "--burnin", fmt.Sprint(burn), "--prior-var", fmt.Sprint(prior), "--seed", sd, "--out", p("reference.npy"))
	mustRun(t, "evaluate", "--reference", p("reference.npy"), "--allow-unconverged-reference", "--test", stepsData, "--out", p("metrics.csv"), p("wvcmc-noma.npy"), p("gcmc.npy"))

	// In process.
	data, err := wcmc.LoadCSV(stepsData)
	if err != nil {
		t.Fatal(err)
	}
	shards, err := wcmc.Partition(data, K, seed)
	if err != nil {
		t.Fatal(err)
	}
	for k, sh := range shards {
		got, err := readData(p(fmt.Sprintf("shards/shard-%d.csv", k+1)))
		if err != nil {
			t.Fatal(err)
		}
		sameBits(t, fmt.Sprintf("shard %d covariates", k+1), got.U, sh.U)
		sameBits(t, fmt.Sprintf("shard %d labels", k+1), mat.NewDense(sh.Len(), 1, got.V), mat.NewDense(sh.Len(), 1, sh.V))
	}
	sampling := wcmc.Sampling{S: S, BurnIn: burn, PriorVar: prior}
	samples, err := wcmc.SampleWorkers(shards, sampling, seed)
	if err != nil {
		t.Fatal(err)
	}
	for k, s := range samples {
		sameBits(t, fmt.Sprintf("samples of worker %d", k+1), mustNPY(t, p(fmt.Sprintf("samples/samples-%d.npy", k+1))), s)
	}
	target, err := model.NewProbit(data.U, data.V, prior)
	if err != nil {
		t.Fatal(err)
	}
	link := channel.Config{Fading: channel.Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: snr, Physical: true}
	want := map[string]*mat.Dense{}
	for _, acc := range []channel.Access{channel.OMA, channel.NOMA} {
		link.Access = acc
		rx, err := wcmc.Transmit(samples, link, seed)
		if err != nil {
			t.Fatal(err)
		}
		got, meta, err := loadReceived(p("rx-" + acc.String()))
		if err != nil {
			t.Fatal(err)
		}
		if got.N0 != rx.N0 || fmt.Sprint(got.Pk) != fmt.Sprint(rx.Pk) || got.K != K || got.S != S || got.D != 3 || got.Mr != 6 || meta.SNRdB != snr {
			t.Errorf("%v sidecar: N0 %v P_k %v K %d S %d d %d m_r %d; in process N0 %v P_k %v", acc, got.N0, got.Pk, got.K, got.S, got.D, got.Mr, rx.N0, rx.Pk)
		}
		for i := range rx.Y {
			sameBits(t, fmt.Sprintf("%v signals, stream %d", acc, i+1), got.Y[i], rx.Y[i])
		}
		agg := func(a wcmc.Aggregation) *mat.Dense {
			res, err := wcmc.Aggregate(rx, a, seed)
			if err != nil {
				t.Fatal(err)
			}
			return res.Theta
		}
		want["wgcmc-"+acc.String()+".npy"] = agg(wcmc.Aggregation{Scheme: wcmc.WGCMC})
		want["wvcmc-"+acc.String()+".npy"] = agg(wcmc.Aggregation{Scheme: wcmc.WVCMC, Target: target})
		if acc == channel.OMA {
			want["gcmc.npy"] = agg(wcmc.Aggregation{Scheme: wcmc.GCMC})
		} else {
			want["wvcmc-adam.npy"] = agg(wcmc.Aggregation{Scheme: wcmc.WVCMC, Target: target,
				Optimizer: consensus.Settings{Method: consensus.Adam{BatchSize: 50, Iters: 10}}})
		}
	}
	if want["noiseless.npy"], err = consensus.Noiseless(samples); err != nil {
		t.Fatal(err)
	}
	want["cmc-noiseless.npy"] = want["noiseless.npy"]
	for _, a := range aggs {
		sameBits(t, a.out, mustNPY(t, p(a.out)), want[a.out])
	}
	ref, err := wcmc.Posterior(data, wcmc.Sampling{S: refS, BurnIn: burn, PriorVar: prior}, seed)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "reference", mustNPY(t, p("reference.npy")), ref)

	f, err := os.Open(p("metrics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || strings.Join(rows[0], ",") != "file,err2,kl,mean_err,cov_err,coverage90,w2,err2_scaled" {
		t.Fatalf("metrics.csv = %v", rows)
	}
	for i, name := range []string{"wvcmc-noma.npy", "gcmc.npy"} {
		m, err := wcmc.Evaluate(want[name], ref, data.U)
		if err != nil {
			t.Fatal(err)
		}
		if got := rows[i+1]; got[0] != p(name) || got[1] != fmtFloat(m.Err2) || got[2] != fmtFloat(m.KL) ||
			strings.Join(got[3:], ",") != strings.Join([]string{fmtFloat(m.MeanErr), fmtFloat(m.CovErr), fmtFloat(m.Coverage90), fmtFloat(m.W2), fmtFloat(m.Err2Scaled)}, ",") {
			t.Errorf("metrics row %v, in process %+v", got, m)
		}
	}
}
