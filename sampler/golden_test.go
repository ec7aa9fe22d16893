package sampler

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/model"
)

// goldenProbit draws N probit data points of dimension d from rng: u_n ~
// N(0, I), v_n = 1 with probability Φ(θ*ᵀu_n), θ*_j = (−1)^j·j/d.
func goldenProbit(rng *rand.Rand, n, d int) (*mat.Dense, []float64) {
	u := mat.NewDense(n, d, nil)
	v := make([]float64, n)
	for i := range n {
		var m float64
		for j := range d {
			x := rng.NormFloat64()
			u.Set(i, j, x)
			m += x * float64(j+1) / float64(d) * float64(1-2*(j%2))
		}
		if rng.NormFloat64() < m {
			v[i] = 1
		}
	}
	return u, v
}

// sampleHash is the SHA-256 of the bits of the rows of the matrices, and
// of the extra numbers.
func sampleHash(ms []*mat.Dense, extra ...float64) string {
	h := sha256.New()
	var b [8]byte
	put := func(x float64) {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
		h.Write(b[:])
	}
	for _, m := range ms {
		r, _ := m.Dims()
		for i := range r {
			for _, x := range m.RawRowView(i) {
				put(x)
			}
		}
	}
	for _, x := range extra {
		put(x)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// goldenRuns runs the samplers on fixed seeds; their hashes were recorded
// with the samplers as they were before they became kernels.
func goldenRuns(t *testing.T) map[string]string {
	out := map[string]string{}
	for _, c := range []struct {
		name string
		n, d int
	}{{"gibbs d=3", 500, 3}, {"gibbs d=12", 700, 12}} {
		rng := rand.New(rand.NewPCG(11, uint64(c.d)))
		u, v := goldenProbit(rng, c.n, c.d)
		g, err := NewGibbs(u, v, 2)
		if err != nil {
			t.Fatal(err)
		}
		a, b := mat.NewDense(200, c.d, nil), mat.NewDense(30, c.d, nil)
		if err := g.Sample(rng, a, 50); err != nil {
			t.Fatal(err)
		}
		if err := g.Sample(rng, b, 0); err != nil {
			t.Fatal(err)
		}
		out[c.name] = sampleHash([]*mat.Dense{a, b})
	}
	{
		rng := rand.New(rand.NewPCG(12, 0))
		u, v := goldenProbit(rng, 300, 4)
		h, err := NewProbitHMC(u, v, 3)
		if err != nil {
			t.Fatal(err)
		}
		a, b := mat.NewDense(300, 4, nil), mat.NewDense(50, 4, nil)
		if err := h.Sample(rng, a, 100); err != nil {
			t.Fatal(err)
		}
		ra, sa := h.AcceptRate(), h.StepSize()
		if err := h.Sample(rng, b, 0); err != nil {
			t.Fatal(err)
		}
		out["hmc"] = sampleHash([]*mat.Dense{a, b}, ra, sa, h.AcceptRate(), h.StepSize())
	}
	{
		rng := rand.New(rand.NewPCG(13, 0))
		u, v := goldenProbit(rng, 400, 3)
		p, err := model.NewProbit(u, v, 1)
		if err != nil {
			t.Fatal(err)
		}
		var obs []float64
		cfg := SGLDConfig{Alpha: 1e-3, Beta: 2, Gamma: 0.55, BatchSize: 40, BurnIn: 30, Every: 25,
			Observe: func(it int, kept *mat.Dense) {
				obs = append(obs, float64(it))
				if kept != nil {
					r, _ := kept.Dims()
					obs = append(obs, float64(r), kept.At(r-1, 0))
				}
			}}
		dst := mat.NewDense(120, 3, nil)
		if err := RunSGLD(rng, p, cfg, []float64{0.1, -0.2, 0.3}, dst); err != nil {
			t.Fatal(err)
		}
		out["sgld"] = sampleHash([]*mat.Dense{dst}, obs...)
	}
	return out
}

// TestKernelsBitIdentical checks that Gibbs, HMC and SGLD, now kernels
// driven by Run, give bit for bit the samples (and HMC's acceptance rate
// and adapted step size, SGLD's observations) of the samplers before the
// change, for the same seeds: hashes recorded with the old code.
func TestKernelsBitIdentical(t *testing.T) {
	// The hashes were recorded with gonum's BLAS; the build's own BLAS
	// (package dgemm's product, or OpenBLAS) sums in another order.
	saved := blas64.Implementation()
	blas64.Use(gonum.Implementation{})
	t.Cleanup(func() { blas64.Use(saved) })
	want := map[string]string{
		"gibbs d=3":  "a3e2f35bf977e172f40bb50d41222c2d",
		"gibbs d=12": "4e8c29557f3a4cb324e10373f143e511",
		"hmc":        "a4ba56d911452ebe97f460fe5d8cbfa4",
		"sgld":       "56efe69b97251074a4b00cea990f9a69",
	}
	got := goldenRuns(t)
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: hash %s, want %s (recorded before the samplers became kernels)", k, got[k], w)
		}
	}
}

// TestGibbsRowsGolden pins the draws of the row pass of the sweep (d > 8)
// at sizes with every kind of block: several blocks of 4 rows and a last
// partial one (d = 301), blocks of 68 rows with partial row groups (d =
// 30), and a row count that leaves single rows (N mod 4 ≠ 0). The hashes
// were recorded with the sweep before its kernels were fused; a change in
// the order or arithmetic of the draws, margins or Uᵀκ changes them.
func TestGibbsRowsGolden(t *testing.T) {
	saved := blas64.Implementation()
	blas64.Use(gonum.Implementation{})
	t.Cleanup(func() { blas64.Use(saved) })
	want := map[string]string{
		"N=1003 d=30":  "7325a8d449324d13d35c0650adbab52b",
		"N=999 d=44":   "42587ae6ed2b0cf2803e3b37111cb507",
		"N=1001 d=301": "d222be6d7ced5348e07a50cfae317687",
	}
	for _, c := range []struct{ n, d int }{{1003, 30}, {999, 44}, {1001, 301}} {
		name := fmt.Sprintf("N=%d d=%d", c.n, c.d)
		rng := rand.New(rand.NewPCG(17, uint64(c.d)))
		u, v := goldenProbit(rng, c.n, c.d)
		g, err := NewGibbs(u, v, 2)
		if err != nil {
			t.Fatal(err)
		}
		a := mat.NewDense(40, c.d, nil)
		if err := g.Sample(rng, a, 5); err != nil {
			t.Fatal(err)
		}
		if got := sampleHash([]*mat.Dense{a}, g.Kappa()...); got != want[name] {
			t.Errorf("%s: hash %s, want %s", name, got, want[name])
		}
	}
}
