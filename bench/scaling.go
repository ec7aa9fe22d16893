package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/sampler"
)

// scaling adds the curve sr: for each size x of xs, timeAt(x) is the best
// time of one operation at that size; the slope of log time on log x is
// fitted by addSeries.
func (b *suite) scaling(sr Series, xs []int, timeAt func(x int) (time.Duration, error)) error {
	for _, x := range xs {
		t, err := timeAt(x)
		if err != nil {
			return err
		}
		sr.X = append(sr.X, float64(x))
		sr.Seconds = append(sr.Seconds, t.Seconds())
	}
	b.addSeries(sr)
	return nil
}

// scaleN times a Gibbs sweep at fixed d for growing N.
func (b *suite) scaleN() error {
	return b.scaleSweep("N", "d", b.s.scaleND, b.s.scaleN, func(n, d int) (int, int) { return n, d })
}

// scaleD times a Gibbs sweep at fixed N for growing d.
func (b *suite) scaleD() error {
	return b.scaleSweep("d", "N", b.s.scaleDN, b.s.scaleD, func(d, n int) (int, int) { return n, d })
}

// scaleSweep times a Gibbs sweep on (N, d) = nd(x, fixed) for each x of
// xs: the size param varies, the size other is held at fixed.
func (b *suite) scaleSweep(param, other string, fixed int, xs []int, nd func(x, fixed int) (int, int)) error {
	return b.scaling(Series{
		Name:  fmt.Sprintf("Gibbs sweep vs %s (%s = %d)", param, other, fixed),
		Short: fmt.Sprintf("Gibbs sweep vs %s (%s=%d)", param, other, fixed),
		Param: param,
	}, xs, func(x int) (time.Duration, error) {
		n, d := nd(x, fixed)
		g, rng, _, err := b.newChain(n, d, sampler.NewGibbs)
		if err != nil {
			return 0, err
		}
		return b.best(func() { g.Sweep(rng) })[0], nil
	})
}

// scaleS times the batched gradient at fixed (N, d) for growing S, on one
// core, at S samples drawn around θ*.
func (b *suite) scaleS() error {
	n, d := b.s.scaleSN, b.s.scaleSD
	p, _, err := probitTarget(19, n, d)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(20, 21))
	return b.scaling(Series{
		Name:  fmt.Sprintf("probit gradient vs S (N = %d, d = %d)", n, d),
		Short: fmt.Sprintf("gradient vs S (N=%d, d=%d)", n, d),
		Param: "S",
	}, b.s.scaleS, func(s int) (time.Duration, error) {
		theta := nearThetaStar(rng, s, d, 0.05)
		grad := mat.NewDense(s, d, nil)
		var t []time.Duration
		withProcs(1, func() { t = b.best(func() { p.GradLogJoint(grad, theta) }) })
		return t[0], nil
	})
}

// scaleK times K workers (sampler.RunChains, all cores), each with its
// own shard of fixed size, so that the work grows like K; each size is the
// best of fresh runs from the same start.
func (b *suite) scaleK() error {
	shard, s := b.s.scaleKShard, b.s.scaleKSamples
	return b.scaling(Series{
		Name:  fmt.Sprintf("K workers' chains vs K (%d points each, d = 5, S = %d)", shard, s),
		Short: fmt.Sprintf("K chains vs K (%d points each)", shard),
		Param: "K",
	}, b.s.scaleK, func(k int) (time.Duration, error) {
		best := time.Duration(math.MaxInt64)
		for range max(2, b.cfg.Reps/2) {
			chains, rngs, dst, err := workerSetup(k*shard, k, s)
			if err != nil {
				return 0, err
			}
			t0 := time.Now()
			if _, err := sampler.RunChains(context.Background(), rngs, chains, dst, nil, 0, 1, nil); err != nil {
				return 0, err
			}
			best = min(best, time.Since(t0))
		}
		return best, nil
	})
}
