package digital_test

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/digital"
)

func ExampleLink_Send() {
	rng := rand.New(rand.NewPCG(1, 2))
	// Two workers, 500 samples each of a 2-d standard Gaussian.
	samples := make([]*mat.Dense, 2)
	for k := range samples {
		samples[k] = mat.NewDense(500, 2, nil)
		for i := range 500 {
			samples[k].Set(i, 0, rng.NormFloat64())
			samples[k].Set(i, 1, rng.NormFloat64())
		}
	}
	// The analog scheme's link: OMA, H = I, m_r = d = 2, SNR 10 dB.
	link := digital.Link{
		Channel:   channel.Config{Access: channel.OMA, Repetition: 1, Power: 1, SNRdB: 10},
		Quantizer: digital.TestChannel{},
	}
	decoded, budget, err := link.Send(rng, samples)
	if err != nil {
		fmt.Println(err)
		return
	}
	w := budget.Workers[0]
	fmt.Printf("%.0f channel uses carry %.3f bits per sample: %.2f + %.2f bits on the two directions\n", budget.Uses, w.Capacity, w.Allocated[0], w.Allocated[1])
	theta, err := digital.GCMC(decoded)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, d := theta.Dims()
	fmt.Printf("digital GCMC: %d global samples of dimension %d\n", s, d)
	// Output:
	// 2 channel uses carry 3.459 bits per sample: 1.75 + 1.71 bits on the two directions
	// digital GCMC: 500 global samples of dimension 2
}
