package wcmc_test

import (
	"fmt"
	"log"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/consensus"
	"github.com/wcmc-project/wcmc/model"
)

// The whole protocol on a small CSV data set (N = 400, d = 3): four
// workers sample their shards in parallel, send their samples at once over
// a NOMA link at 20 dB, and the server aggregates them with WVCMC; the
// result is compared with Gibbs samples of the global posterior.
func Example() {
	data, err := wcmc.LoadCSV("dataset/testdata/probit-small.csv")
	if err != nil {
		log.Fatal(err)
	}
	const K, seed = 4, 1
	shards, err := wcmc.Partition(data, K, seed)
	if err != nil {
		log.Fatal(err)
	}
	sampling := wcmc.Sampling{S: 200, BurnIn: 100, PriorVar: 1}
	samples, err := wcmc.SampleWorkers(shards, sampling, seed)
	if err != nil {
		log.Fatal(err)
	}
	link := channel.Config{
		Access: channel.NOMA, Fading: channel.Rayleigh, Repetition: 2, ExtraTx: 2,
		Power: 1, SNRdB: 20, Physical: true,
	}
	rx, err := wcmc.Transmit(samples, link, seed)
	if err != nil {
		log.Fatal(err)
	}
	target, err := model.NewProbit(data.U, data.V, sampling.PriorVar) // the global posterior
	if err != nil {
		log.Fatal(err)
	}
	// NOMA learns one 3×6 map from 200 signals: the objective is bounded,
	// so L-BFGS runs to convergence without held-out early stopping.
	agg := wcmc.Aggregation{Scheme: wcmc.WVCMC, Target: target, Optimizer: consensus.Settings{Holdout: consensus.Off}}
	res, err := wcmc.Aggregate(rx, agg, seed)
	if err != nil {
		log.Fatal(err)
	}
	ref, err := wcmc.Posterior(data, wcmc.Sampling{S: 5000, BurnIn: 100, PriorVar: 1}, seed)
	if err != nil {
		log.Fatal(err)
	}
	m, err := wcmc.Evaluate(res.Theta, ref, data.U)
	if err != nil {
		log.Fatal(err)
	}
	s, d := res.Theta.Dims()
	fmt.Printf("%d workers sent %d samples each over %v; the server returns %d×%d global samples\n", K, rx.S, rx.Access, s, d)
	fmt.Println("err2 below 0.05:", m.Err2 < 0.05)
	fmt.Println("predictive KL below 0.001:", m.KL < 0.001)
	// Output:
	// 4 workers sent 200 samples each over noma; the server returns 200×3 global samples
	// err2 below 0.05: true
	// predictive KL below 0.001: true
}
