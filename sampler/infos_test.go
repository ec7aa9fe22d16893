package sampler

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestRunChainsInfosAgreeWithStats: without thinning, the per-draw infos
// of an HMC chain average to its statistics (acceptance probability, step
// size, leapfrog steps), count its divergences, and carry a finite log
// density; recording them does not change the draws.
func TestRunChainsInfosAgreeWithStats(t *testing.T) {
	u, v := synthProbit(rand.New(rand.NewPCG(3, 3)), 200, []float64{1, -0.5, 0.25, 0})
	const c, s, burnin = 2, 300, 100
	run := func(infos [][]Info) ([]*mat.Dense, []Stats) {
		rngs := []*rand.Rand{rand.New(rand.NewPCG(8, 0)), rand.New(rand.NewPCG(8, 1))}
		chains, err := NewProbitChains(MethodHMC, rngs, u, v, 2)
		if err != nil {
			t.Fatal(err)
		}
		dst := []*mat.Dense{mat.NewDense(s, 4, nil), mat.NewDense(s, 4, nil)}
		st, err := RunChains(context.Background(), rngs, chains, dst, infos, burnin, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		return dst, st
	}
	infos := [][]Info{make([]Info, s), make([]Info, s)}
	with, stats := run(infos)
	without, _ := run(nil)
	for k := range c {
		if !mat.Equal(with[k], without[k]) {
			t.Fatalf("chain %d: recording the infos changed the draws", k+1)
		}
		var prob, step, leap float64
		div := 0
		for i, in := range infos[k] {
			prob += in.AcceptProb
			step += in.StepSize
			leap += float64(in.IntegrationSteps)
			if in.Divergent {
				div++
			}
			if math.IsNaN(in.LogDensity) || math.IsInf(in.LogDensity, 0) || in.StepSize <= 0 {
				t.Fatalf("chain %d draw %d: info %+v", k+1, i, in)
			}
		}
		st := stats[k]
		// Sums of the same numbers in the same order: equal up to rounding.
		if math.Abs(prob/s-st.MeanAcceptProb) > 1e-12 || math.Abs(step/s-st.StepSize) > 1e-12 ||
			math.Abs(leap/s-st.MeanIntegrationSteps) > 1e-12 || div != st.Divergences {
			t.Errorf("chain %d: infos average to accept %v, step %v, leapfrog %v, %d divergent; stats %+v",
				k+1, prob/s, step/s, leap/s, div, st)
		}
	}
	if _, err := RunChains(context.Background(), nil, nil, nil, [][]Info{nil}, 0, 1, nil); err == nil {
		t.Error("one info output for no chains: no error")
	}
}

func TestRunPanicsOnShortInfos(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for 2 infos for 3 rows")
		}
	}()
	Run(nil, counter{}, &counterState{pos: make([]float64, 2)}, Schedule{Infos: make([]Info, 2)}, mat.NewDense(3, 2, nil))
}
