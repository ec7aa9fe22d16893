package consensus

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/dataset"
	"github.com/wcmc-project/wcmc/internal/dgemm"
	"github.com/wcmc-project/wcmc/model"
)

// probitCase builds WVCMC on a probit target: K workers' samples near θ*
// sent over a flat link with repetition l (m_r = l·d), and the WGCMC map
// moved off its start point so that every term is exercised.
type probitCase struct {
	access     channel.Access
	n, d, s, k int
	l          int
}

func (c probitCase) String() string {
	return fmt.Sprintf("%v/N=%d/d=%d/S=%d/K=%d/l=%d", c.access, c.n, c.d, c.s, c.k, c.l)
}

func (c probitCase) build(tb testing.TB) (*channel.Received, *model.Probit, Map) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(14, uint64(c.n*1000+c.d)))
	ts := dataset.ThetaStar(c.d)
	set := dataset.Synthetic(rng, ts, c.n)
	p, err := model.NewProbit(set.U, set.V, 1)
	if err != nil {
		tb.Fatal(err)
	}
	samples := make([]*mat.Dense, c.k)
	for i := range samples {
		m := mat.NewDense(c.s, c.d, nil)
		for r := range c.s {
			for j := range c.d {
				m.Set(r, j, ts[j]+0.1*rng.NormFloat64())
			}
		}
		samples[i] = m
	}
	link := channel.Config{Access: c.access, Fading: channel.Flat, Repetition: c.l, Power: 1, SNRdB: 20}
	rx, err := channel.Transmit(rng, link, samples)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := WGCMC(rx)
	if err != nil {
		tb.Fatal(err)
	}
	for _, w := range m.W {
		raw := w.RawMatrix().Data
		for i := range raw {
			raw[i] *= 1 + 0.1*rng.NormFloat64()
		}
	}
	return rx, p, m
}

// unfused hides a target's fused LogJointGrad, so that ValueGrad takes the
// path with separate LogJoint and GradLogJoint calls.
type unfused struct{ model.Target }

// allocCases are small problems in the shapes where the products of the
// objective used to go through gonum's parallel Dgemm (S ≥ 256 rows) and,
// for d = 40 (m_r = 80 > 64), where that Dgemm splits the inner dimension.
var allocCases = []probitCase{
	{channel.NOMA, 300, 5, 1000, 20, 2},
	{channel.OMA, 300, 5, 1000, 20, 2},
	{channel.NOMA, 200, 40, 300, 3, 2},
	{channel.OMA, 200, 40, 300, 3, 2},
}

func TestVariationalDoesNotAllocate(t *testing.T) {
	for _, c := range allocCases {
		t.Run(c.String(), func(t *testing.T) {
			rx, p, m := c.build(t)
			v, err := NewVariational(rx, p)
			if err != nil {
				t.Fatal(err)
			}
			grad := m.Clone()
			batch := []int{3, 1, 4, 159, 26, 5, 35, 89, 79, 32}
			var callErr error
			check := func(e error) {
				if e != nil {
					callErr = e
				}
			}
			nf, err := NewVariational(rx, unfused{p})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []struct {
				name string
				call func()
			}{
				{"ValueGrad", func() { _, e := v.ValueGrad(grad, m); check(e) }},
				{"ValueGrad/unfused", func() { _, e := nf.ValueGrad(grad, m); check(e) }},
				{"Value", func() { _, e := v.Value(m); check(e) }},
				{"Gradient", func() { check(v.Gradient(grad, m, nil)) }},
				{"Gradient/minibatch", func() { check(v.Gradient(grad, m, batch)) }},
				{"logDetsAll", func() { _, e := v.logDetsAll(m); check(e) }},
			} {
				f.call() // warm up: buffers sized on first use
				if n := testing.AllocsPerRun(3, f.call); n != 0 {
					t.Errorf("%s: %v allocations per call, want 0", f.name, n)
				}
				if callErr != nil {
					t.Fatalf("%s: %v", f.name, callErr)
				}
			}
		})
	}
}

// The Gaussian target allocates its own temporaries (model.Gaussian is safe
// for concurrent use and keeps no scratch); the objective around it must add
// none. The collector is off while counting: gonum takes temporaries from
// sync.Pools, which a collection empties, so a collection during one count
// but not the other (a busy machine) would change the count, not the code.
func TestVariationalGaussianAddsNoAllocations(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for _, access := range []channel.Access{channel.OMA, channel.NOMA} {
		v, m, target, _ := gaussianObjective(t, access, 1000)
		grad := m.Clone()
		own := testing.AllocsPerRun(3, func() {
			target.LogJoint(v.logp, v.theta)
			target.GradLogJoint(v.grad, v.theta)
		})
		if _, err := v.ValueGrad(grad, m); err != nil {
			t.Fatal(err)
		}
		got := testing.AllocsPerRun(3, func() { v.ValueGrad(grad, m) })
		if got != own {
			t.Errorf("%v: ValueGrad makes %v allocations, the target itself %v", access, got, own)
		}
	}
}

// reference is the objective as it was computed before the scratch space
// was made reusable (dense products by mat.Dense.Mul, log-determinants and
// solves by mat.LU and mat.Cholesky): the new code must reproduce it bit
// for bit.
type reference struct {
	rx     *channel.Received
	target model.Target
	a, b   float64
}

func newReference(rx *channel.Received, target model.Target) reference {
	k := float64(rx.K)
	if rx.Access == channel.OMA {
		return reference{rx, target, 1 / (2 * k), 1 / (2 * k)}
	}
	return reference{rx, target, k / (k + 1), 1 / (k + 1)}
}

func (r reference) theta(m Map) *mat.Dense {
	theta := mat.NewDense(r.rx.S, r.rx.D, nil)
	var tmp mat.Dense
	for k, w := range m.W {
		tmp.Mul(r.rx.Y[k], w.T())
		theta.Add(theta, &tmp)
	}
	return theta
}

func (r reference) logDets(w *mat.Dense, k int) (float64, *mat.Dense) {
	e := r.rx.Encoder(k)
	var we mat.Dense
	we.Mul(w, e)
	var lu mat.LU
	lu.Factorize(&we)
	ldWE, _ := lu.LogDet()
	var sym mat.SymDense
	sym.SymOuterK(1, w)
	var chol mat.Cholesky
	if !chol.Factorize(&sym) {
		panic("singular")
	}
	val := r.a*ldWE + r.b*chol.LogDet()/2
	var x, y, ent mat.Dense
	lu.SolveTo(&x, true, e.T())
	x.Scale(r.a, &x)
	chol.SolveTo(&y, w)
	y.Scale(r.b, &y)
	ent.Add(&x, &y)
	return val, &ent
}

func (r reference) value(m Map) float64 {
	logp := make([]float64, r.rx.S)
	r.target.LogJoint(logp, r.theta(m))
	var f float64
	for _, lp := range logp {
		f -= lp
	}
	f /= float64(r.rx.S)
	for k, w := range m.W {
		ld, _ := r.logDets(w, k)
		f -= ld
	}
	return f
}

func (r reference) gradient(m Map, batch []int) Map {
	theta := r.theta(m)
	g := mat.NewDense(r.rx.S, r.rx.D, nil)
	if batch != nil {
		r.target.(model.Minibatcher).GradLogJointBatch(g, theta, batch)
	} else {
		r.target.GradLogJoint(g, theta)
	}
	out := zeroLike(m)
	for k, w := range m.W {
		o := out.W[k]
		o.Mul(g.T(), r.rx.Y[k])
		o.Scale(-1/float64(r.rx.S), o)
		_, ent := r.logDets(w, k)
		o.Sub(o, ent)
	}
	return out
}

// maxRelDiff is max_i |a_i − b_i| / max_i |b_i|.
func maxRelDiff(a, b []float64) float64 {
	var d, s float64
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i]))
		s = math.Max(s, math.Abs(b[i]))
	}
	return d / s
}

func TestVariationalMatchesReferenceBitForBit(t *testing.T) {
	type target struct {
		name string
		t    model.Target
	}
	for _, c := range allocCases {
		rx, p, m := c.build(t)
		gauss, err := model.NewGaussian(nil, toeplitz(c.d, 0.3))
		if err != nil {
			t.Fatal(err)
		}
		for _, tg := range []target{{"probit", p}, {"probit-unfused", unfused{p}}, {"gaussian", gauss}} {
			name := c.String() + "/" + tg.name
			v, err := NewVariational(rx, tg.t)
			if err != nil {
				t.Fatal(err)
			}
			ref := newReference(rx, tg.t)
			want := ref.value(m)
			wantGrad := flattenMap(ref.gradient(m, nil))
			grad := m.Clone()
			// Twice: the second evaluation runs on reused scratch.
			for range 2 {
				got, err := v.Value(m)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("%s: Value %v, reference %v (relative difference %.3g)", name, got, want, math.Abs(got-want)/math.Abs(want))
				}
				if err := v.Gradient(grad, m, nil); err != nil {
					t.Fatal(err)
				}
				if g := flattenMap(grad); !slices.Equal(g, wantGrad) {
					t.Errorf("%s: Gradient differs from the reference (max relative difference %.3g)", name, maxRelDiff(g, wantGrad))
				}
				got, err = v.ValueGrad(grad, m)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("%s: ValueGrad value %v, reference %v (relative difference %.3g)", name, got, want, math.Abs(got-want)/math.Abs(want))
				}
				if g := flattenMap(grad); !slices.Equal(g, wantGrad) {
					t.Errorf("%s: ValueGrad gradient differs from the reference (max relative difference %.3g)", name, maxRelDiff(g, wantGrad))
				}
			}
			if tg.name == "probit" {
				batch := []int{7, 7, 0, 42, 199, 3}
				wantB := flattenMap(ref.gradient(m, batch))
				if err := v.Gradient(grad, m, batch); err != nil {
					t.Fatal(err)
				}
				if g := flattenMap(grad); !slices.Equal(g, wantB) {
					t.Errorf("%s: minibatch Gradient differs from the reference (max relative difference %.3g)", name, maxRelDiff(g, wantB))
				}
			}
		}
	}
}

// BenchmarkValueGrad is the "WVCMC value + gradient" row of wcmc bench
// (NOMA, K = 20, S = 1000, N = 8500, d = 5), and the same under OMA; with
// N = 1 the data term is negligible and the time is the objective's own
// work (map products, log-determinants, solves).
func BenchmarkValueGrad(b *testing.B) {
	for _, c := range []probitCase{
		{channel.NOMA, 8500, 5, 1000, 20, 2},
		{channel.OMA, 8500, 5, 1000, 20, 2},
		{channel.NOMA, 1, 5, 1000, 20, 2},
		{channel.OMA, 1, 5, 1000, 20, 2},
	} {
		b.Run(fmt.Sprintf("%v/N=%d", c.access, c.n), func(b *testing.B) {
			rx, p, m := c.build(b)
			v, err := NewVariational(rx, p)
			if err != nil {
				b.Fatal(err)
			}
			grad := m.Clone()
			if _, err := v.ValueGrad(grad, m); err != nil { // sizes the target's scratch
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.ValueGrad(grad, m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSolveOnDistinctColumns: with the solve (W E)ᵀ X = Eᵀ made for the
// distinct columns of Eᵀ only (its first d, the repetition code's period)
// and repeated, the objective and its gradient are still the reference's
// (whole solves by mat.LU and mat.Cholesky) bit for bit, under gonum's BLAS
// and package dgemm's.
func TestSolveOnDistinctColumns(t *testing.T) {
	saved := blas64.Implementation()
	t.Cleanup(func() { blas64.Use(saved) })
	impls := []blas.Float64{gonum.Implementation{}}
	if ok, _ := dgemm.Active(); ok {
		impls = append(impls, dgemm.Implementation{})
	}
	for _, impl := range impls {
		blas64.Use(impl)
		for _, c := range []probitCase{{channel.NOMA, 150, 70, 200, 3, 2}, {channel.OMA, 150, 70, 200, 3, 2}} {
			rx, p, m := c.build(t)
			v, err := NewVariational(rx, p)
			if err != nil {
				t.Fatal(err)
			}
			if v.encPeriod[0] != c.d || rx.Mr != 2*c.d {
				t.Fatalf("m_r = %d, period %d: want 2d and d = %d", rx.Mr, v.encPeriod[0], c.d)
			}
			ref := newReference(rx, p)
			want, wantGrad := ref.value(m), flattenMap(ref.gradient(m, nil))
			grad := m.Clone()
			got, err := v.ValueGrad(grad, m)
			if err != nil {
				t.Fatal(err)
			}
			if got != want || !slices.Equal(flattenMap(grad), wantGrad) {
				t.Errorf("%T %v: value %v against %v, gradient max relative difference %.3g", impl, c, got, want, maxRelDiff(flattenMap(grad), wantGrad))
			}
		}
	}
}
