package wcmc_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/consensus"
	"github.com/wcmc-project/wcmc/model"
)

// signals sends the small data set's worker samples (K = 3, S = 40) over
// a flat link with repetition 2 under access, and returns them with the
// global target.
func signals(t *testing.T, access channel.Access) (*channel.Received, *model.Probit) {
	t.Helper()
	data := loadSmall(t)
	shards, err := wcmc.Partition(data, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	samples, err := wcmc.SampleWorkers(shards, wcmc.Sampling{S: 40, BurnIn: 10}, 5)
	if err != nil {
		t.Fatal(err)
	}
	target, err := model.NewProbit(data.U, data.V, wcmc.DefaultPriorVar)
	if err != nil {
		t.Fatal(err)
	}
	rx, err := wcmc.Transmit(samples, channel.Config{Access: access, Repetition: 2, Power: 1, SNRdB: 10}, 5)
	if err != nil {
		t.Fatal(err)
	}
	return rx, target
}

func TestAggregateZeroOptimizerIsTheConsensusDefault(t *testing.T) {
	// The zero Aggregation.Optimizer and the zero consensus.Settings are
	// the same documented default (L-BFGS, DefaultHoldout held out), as is
	// that default written out: all three give the same bits, under OMA and
	// NOMA. (L-BFGS draws nothing from the generator.)
	explicit := consensus.Settings{
		Method:   consensus.LBFGS{Iters: consensus.DefaultLBFGSIters, RelTol: consensus.DefaultRelTol},
		Holdout:  wcmc.DefaultHoldout,
		Patience: consensus.DefaultPatience,
	}
	for _, access := range []channel.Access{channel.OMA, channel.NOMA} {
		rx, target := signals(t, access)
		res, err := wcmc.Aggregate(rx, wcmc.Aggregation{Scheme: wcmc.WVCMC, Target: target}, 5)
		if err != nil {
			t.Fatal(err)
		}
		init, _, err := consensus.InitialMap(rx)
		if err != nil {
			t.Fatal(err)
		}
		fit, err := consensus.WVCMC(context.Background(), rand.New(rand.NewPCG(0, 0)), rx, target.Clone(), init, consensus.Settings{})
		if err != nil {
			t.Fatal(err)
		}
		if !equalBits(res.Theta, fit.Map.Apply(rx)) || res.Fit.Status != fit.Status || res.Fit.Holdout != wcmc.DefaultHoldout {
			t.Errorf("%v: Aggregate with the zero Optimizer differs from consensus.WVCMC with zero Settings (%v, %v)", access, res.Fit.Status, fit.Status)
		}
		res2, err := wcmc.Aggregate(rx, wcmc.Aggregation{Scheme: wcmc.WVCMC, Target: target, Optimizer: explicit}, 5)
		if err != nil {
			t.Fatal(err)
		}
		if !equalBits(res.Theta, res2.Theta) {
			t.Errorf("%v: the zero Optimizer differs from the documented default written out", access)
		}
	}
}

func TestAggregateContextCancels(t *testing.T) {
	rx, target := signals(t, channel.NOMA)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := wcmc.AggregateContext(ctx, rx, wcmc.Aggregation{Scheme: wcmc.WVCMC, Target: target}, 1)
	if res != nil || !errors.Is(err, consensus.ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: result %v, error %v", res, err)
	}
}
