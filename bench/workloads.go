package bench

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/dataset"
	"github.com/wcmc-project/wcmc/model"
	"github.com/wcmc-project/wcmc/sampler"
)

// probitData draws the synthetic probit data of Sec. VI-B with the
// experiments' θ* (dataset.ThetaStar: ‖θ*‖ ≈ 2.09 for every d).
func probitData(seed uint64, n, d int) dataset.Set {
	rng := rand.New(rand.NewPCG(seed, uint64(n*1000+d)))
	return dataset.Synthetic(rng, dataset.ThetaStar(d), n)
}

// probitTarget returns the probit log-joint (prior variance 1) on
// probitData(seed, n, d) and that data.
func probitTarget(seed uint64, n, d int) (*model.Probit, dataset.Set, error) {
	set := probitData(seed, n, d)
	p, err := model.NewProbit(set.U, set.V, 1)
	return p, set, err
}

// nearThetaStar returns s×d samples θ* + spread·ε, ε ~ N(0, I), drawn row
// by row from rng.
func nearThetaStar(rng *rand.Rand, s, d int, spread float64) *mat.Dense {
	ts := dataset.ThetaStar(d)
	theta := mat.NewDense(s, d, nil)
	for i := range s {
		row := theta.RawRowView(i)
		for j := range row {
			row[j] = ts[j] + spread*rng.NormFloat64()
		}
	}
	return theta
}

// newChain returns a Gibbs sampler on (n, d) data made by newGibbs
// (sampler.NewGibbs or NewGibbsFloat32), run for the burn-in so that its
// margins are those of a chain in equilibrium, and its generator.
func (b *suite) newChain(n, d int, newGibbs func(*mat.Dense, []float64, float64) (*sampler.Gibbs, error)) (*sampler.Gibbs, *rand.Rand, dataset.Set, error) {
	set := probitData(1, n, d)
	g, err := newGibbs(set.U, set.V, 1)
	if err != nil {
		return nil, nil, set, fmt.Errorf("gibbs (N=%d, d=%d): %w", n, d, err)
	}
	rng := rand.New(rand.NewPCG(2, 3))
	for range b.s.burnin {
		g.Sweep(rng)
	}
	return g, rng, set, nil
}

// workerSetup returns K Gibbs chains on equal shards of (n, 5) data (the
// paper's subposteriors: prior variance K·σ²), fresh generators and
// output matrices of s rows.
func workerSetup(n, k, s int) ([]sampler.Runner, []*rand.Rand, []*mat.Dense, error) {
	set := probitData(17, n, 5)
	chains := make([]sampler.Runner, k)
	rngs := make([]*rand.Rand, k)
	dst := make([]*mat.Dense, k)
	for i := range k {
		lo, hi := i*n/k, (i+1)*n/k
		sh := set.Subset(seq(lo, hi))
		var err error
		if chains[i], err = sampler.NewGibbs(sh.U, sh.V, float64(k)); err != nil {
			return nil, nil, nil, fmt.Errorf("worker %d: %w", i, err)
		}
		rngs[i] = rand.New(rand.NewPCG(18, uint64(i)))
		dst[i] = mat.NewDense(s, 5, nil)
	}
	return chains, rngs, dst, nil
}

func seq(lo, hi int) []int {
	idx := make([]int, hi-lo)
	for i := range idx {
		idx[i] = lo + i
	}
	return idx
}
