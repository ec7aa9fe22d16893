package experiment

import (
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestNoiselessConstantWorker: a worker whose samples are constant in a
// parameter (a stuck chain) makes cmc-noiseless a skip naming the worker,
// where its zero Scott weight used to drop it without a word; with every
// worker's samples varying, the scheme runs.
func TestNoiselessConstantWorker(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	samples := make([]*mat.Dense, 3)
	for k := range samples {
		samples[k] = mat.NewDense(40, 2, nil)
		for i := range 40 {
			for j := range 2 {
				samples[k].Set(i, j, rng.NormFloat64())
			}
		}
	}
	cfg := cmcConfig{enabled: map[string]bool{SchemeNoiseless: true}, omaPerWkr: 40, nomaPerWk: 40}
	out, err := runCMC(rand.New(rand.NewPCG(7, 8)), samples, cfg)
	if err != nil || out.schemes[SchemeNoiseless] == nil || len(out.skipped) != 0 {
		t.Fatalf("varying samples: err %v, skipped %v", err, out.skipped)
	}
	for i := range 40 {
		samples[2].Set(i, 0, -1.25)
	}
	out, err = runCMC(rand.New(rand.NewPCG(7, 8)), samples, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if out.schemes[SchemeNoiseless] != nil || len(out.skipped) != 1 || out.skipped[0].Scheme != SchemeNoiseless ||
		!strings.Contains(out.skipped[0].Reason, "worker 3") || !strings.Contains(out.skipped[0].Reason, "parameter 1 = -1.25") {
		t.Errorf("worker 3 constant in parameter 1: ran %v, skipped %+v", out.schemes[SchemeNoiseless] != nil, out.skipped)
	}
}
