package model

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// BenchmarkGradLogJoint times the batched full-data gradient at the paper's
// synthetic sizes; ns/op is per call on S samples.
func BenchmarkGradLogJoint(b *testing.B) {
	for _, c := range []struct{ n, d, s int }{{8500, 5, 50}, {15000, 300, 1000}} {
		b.Run(fmt.Sprintf("N=%d/d=%d/S=%d", c.n, c.d, c.s), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			ts := make([]float64, c.d)
			for j := range ts {
				ts[j] = rng.NormFloat64() / float64(c.d)
			}
			u, v := probitData(rng, c.n, ts)
			p, _ := NewProbit(u, v, 1)
			theta := mat.NewDense(c.s, c.d, nil)
			for i := 0; i < c.s; i++ {
				copy(theta.RawRowView(i), ts)
			}
			grad := mat.NewDense(c.s, c.d, nil)
			p.GradLogJoint(grad, theta)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p.GradLogJoint(grad, theta)
			}
			b.ReportMetric(float64(b.N)*float64(c.s*c.n)/b.Elapsed().Seconds(), "examplegrads/s")
		})
	}
}

// BenchmarkGradLogJointBatch times the SGLD-sized minibatch gradient.
func BenchmarkGradLogJointBatch(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	u, v := probitData(rng, 8500, []float64{0.1, -0.6, 0.6, 1.8, 0.5})
	p, _ := NewProbit(u, v, 1)
	theta := mat.NewDense(1, 5, []float64{0.1, -0.6, 0.6, 1.8, 0.5})
	grad := mat.NewDense(1, 5, nil)
	batch := rng.Perm(8500)[:500]
	p.GradLogJointBatch(grad, theta, batch)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.GradLogJointBatch(grad, theta, batch)
	}
}
