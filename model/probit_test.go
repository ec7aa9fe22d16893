package model

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/wcmc-project/wcmc/dataset"
)

var _ Minibatcher = (*Probit)(nil)

// probitData draws N covariates u_n ~ N(0, I_d) and labels
// v_n ~ Bernoulli(Φ(θ*ᵀu_n)) (eq: probit model), by dataset.Synthetic.
func probitData(rng *rand.Rand, n int, thetaStar []float64) (*mat.Dense, []float64) {
	s := dataset.Synthetic(rng, thetaStar, n)
	return s.U, s.V
}

func TestNewProbitErrors(t *testing.T) {
	u := mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 6})
	for _, c := range []struct {
		name string
		u    *mat.Dense
		v    []float64
		pv   float64
		want string
	}{
		{"label", u, []float64{0, 1, 0.5}, 1, "v[2]"},
		{"nan label", u, []float64{math.NaN(), 1, 0}, 1, "v[0]"},
		{"length", u, []float64{0, 1}, 1, "2 labels for 3 rows"},
		{"prior", u, []float64{0, 1, 1}, 0, "prior variance"},
		{"prior inf", u, []float64{0, 1, 1}, math.Inf(1), "prior variance"},
		{"nan U", mat.NewDense(2, 2, []float64{1, 2, math.NaN(), 4}), []float64{0, 1}, 1, "U[1,0]"},
		{"inf U", mat.NewDense(2, 2, []float64{1, math.Inf(-1), 0, 4}), []float64{0, 1}, 1, "U[0,1]"},
	} {
		_, err := NewProbit(c.u, c.v, c.pv)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want mention of %q", c.name, err, c.want)
		}
	}
}

// paperGrad is eq: gradient theta prior probit + eq: gradient theta
// posterior probit written as in the paper, for one θ (moderate margins).
func paperGrad(p *Probit, theta []float64) []float64 {
	n, d := p.U().Dims()
	g := make([]float64, d)
	floats.AddScaled(g, -1/p.PriorVar(), theta)
	for i := 0; i < n; i++ {
		u := p.U().RawRowView(i)
		m := floats.Dot(theta, u)
		Phi := distuv.UnitNormal.CDF(m)
		phi := distuv.UnitNormal.Prob(m)
		floats.AddScaled(g, phi*(p.V()[i]-Phi)/(Phi*(1-Phi)), u)
	}
	return g
}

func TestProbitGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	u, v := probitData(rng, 40, []float64{0.5, -1, 2})
	p, err := NewProbit(u, v, 3)
	if err != nil {
		t.Fatal(err)
	}
	theta := mat.NewDense(4, 3, []float64{
		0, 0, 0,
		0.3, -0.8, 1.5,
		-1, 2, 0.1,
		2, 1, -3,
	})
	grad := mat.NewDense(4, 3, nil)
	p.GradLogJoint(grad, theta)
	all := make([]int, p.NumData())
	for i := range all {
		all[i] = i
	}
	gradB := mat.NewDense(4, 3, nil)
	p.GradLogJointBatch(gradB, theta, all)
	lj := make([]float64, 1)
	for s := 0; s < 4; s++ {
		th := theta.RawRowView(s)
		f := func(x []float64) float64 {
			p.LogJoint(lj, mat.NewDense(1, 3, x))
			return lj[0]
		}
		num := fd.Gradient(nil, f, th, &fd.Settings{Formula: fd.Central, Step: 1e-5})
		want := paperGrad(p, th)
		// Central differences: truncation O(h²·f''') and rounding
		// O(ε|f|/h), both ≲ 1e-8 here.
		if !floats.EqualApprox(grad.RawRowView(s), num, 1e-6) {
			t.Errorf("row %d: grad %v, finite differences %v", s, grad.RawRowView(s), num)
		}
		// The paper's form cancels in 1 − Φ(m) for large margins, so it
		// is only a reference where all |m_n| < 5 (rows 0–2).
		maxM := 0.0
		for i := 0; i < p.NumData(); i++ {
			maxM = math.Max(maxM, math.Abs(floats.Dot(th, u.RawRowView(i))))
		}
		if maxM < 5 && !floats.EqualApprox(grad.RawRowView(s), want, 1e-10) {
			t.Errorf("row %d: grad %v, per-example sum %v", s, grad.RawRowView(s), want)
		}
		if !floats.EqualApprox(gradB.RawRowView(s), grad.RawRowView(s), 1e-12) {
			t.Errorf("row %d: full-index minibatch %v, full %v", s, gradB.RawRowView(s), grad.RawRowView(s))
		}
	}

	// A proper minibatch with a repeated index: −θ/σ² + (N/N_b) Σ_B terms.
	batch := []int{3, 17, 17, 0, 39}
	p.GradLogJointBatch(gradB, theta, batch)
	for s := 0; s < 4; s++ {
		th := theta.RawRowView(s)
		want := make([]float64, 3)
		for _, i := range batch {
			ui := u.RawRowView(i)
			sg := 2*v[i] - 1
			floats.AddScaled(want, sg*InvMills(sg*floats.Dot(th, ui)), ui)
		}
		floats.Scale(40.0/5, want)
		floats.AddScaled(want, -1.0/3, th)
		if !floats.EqualApprox(gradB.RawRowView(s), want, 1e-12) {
			t.Errorf("row %d: minibatch grad %v, want %v", s, gradB.RawRowView(s), want)
		}
	}
}

// TestProbitBlocked uses S large enough that the data are processed in
// several blocks, and compares with one-row-at-a-time evaluation.
func TestProbitBlocked(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	u, v := probitData(rng, 700, []float64{1, -1})
	p, _ := NewProbit(u, v, 2)
	const s = 5000 // block = max(256, 2^20/5000) = 256 rows → 3 blocks
	theta := mat.NewDense(s, 2, nil)
	for i := 0; i < s; i++ {
		theta.Set(i, 0, 2*rng.NormFloat64())
		theta.Set(i, 1, 2*rng.NormFloat64())
	}
	grad := mat.NewDense(s, 2, nil)
	lj := make([]float64, s)
	p.GradLogJoint(grad, theta)
	p.LogJoint(lj, theta)
	q := p.Clone()
	g1 := mat.NewDense(1, 2, nil)
	l1 := make([]float64, 1)
	for i := 0; i < s; i += 97 {
		th := mat.NewDense(1, 2, theta.RawRowView(i))
		q.GradLogJoint(g1, th)
		q.LogJoint(l1, th)
		if !floats.EqualApprox(g1.RawRowView(0), grad.RawRowView(i), 1e-9) ||
			!scalar.EqualWithinAbsOrRel(l1[0], lj[i], 1e-9, 1e-12) {
			t.Fatalf("row %d: blocked (%v, %v), single (%v, %v)", i, grad.RawRowView(i), lj[i], g1.RawRowView(0), l1[0])
		}
	}
}

// TestProbitExtremeMargins checks finiteness and the asymptotics at
// margins ±40: log Φ(−40) ≈ −804.608 per misfit point, gradient weight
// ≈ 40.025 (wrong side) or 0 (right side).
func TestProbitExtremeMargins(t *testing.T) {
	u := mat.NewDense(4, 1, []float64{1, -1, 1, -1})
	v := []float64{1, 1, 0, 0}
	p, _ := NewProbit(u, v, 1e6)
	theta := mat.NewDense(2, 1, []float64{40, -40})
	lj := make([]float64, 2)
	p.LogJoint(lj, theta)
	grad := mat.NewDense(2, 1, nil)
	p.GradLogJoint(grad, theta)
	// Margins for θ = 40: +40, −40, +40, −40 with signs +, +, −, −: two
	// points at s·m = −40 (log Φ = −804.608...), two at +40 (log Φ = 0).
	const lam40 = 40.02496884720726372324 // λ(−40)
	want := 2*-804.6084420137537881666 - 1600/(2*1e6)
	for s := 0; s < 2; s++ {
		th := theta.At(s, 0)
		if !scalar.EqualWithinRel(lj[s], want, 1e-13) {
			t.Errorf("LogJoint(θ=%v) = %.15g, want %.15g", th, lj[s], want)
		}
		// Gradient Σ s_n λ(s_n m_n) u_n − θ/σ²: both misfit points pull
		// θ back with weight λ(−40); the others contribute λ(40) = 0.
		wantG := -math.Copysign(2*lam40, th) - th/1e6
		if g := grad.At(s, 0); !scalar.EqualWithinRel(g, wantG, 1e-13) {
			t.Errorf("GradLogJoint(θ=%v) = %.15g, want %.15g", th, g, wantG)
		}
	}
	// One-sided data: the gradient must be 40.025 pointing back.
	p1, _ := NewProbit(mat.NewDense(1, 1, []float64{1}), []float64{1}, 1e300)
	g := mat.NewDense(1, 1, nil)
	p1.GradLogJoint(g, mat.NewDense(1, 1, []float64{-40}))
	if !scalar.EqualWithinRel(g.At(0, 0), lam40, 1e-13) {
		t.Errorf("gradient at margin −40 = %.15g, want 40.0249688472073", g.At(0, 0))
	}
}

func TestProbitNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	u, v := probitData(rng, 200, []float64{1, -1, 0.5})
	p, _ := NewProbit(u, v, 2)
	theta := mat.NewDense(3, 3, []float64{1, 2, 3, 0, 0, 0, -1, 0.5, 1})
	grad := mat.NewDense(3, 3, nil)
	lj := make([]float64, 3)
	batch := []int{1, 5, 9, 100, 150}
	p.GradLogJointBatch(grad, theta, batch)
	p.GradLogJoint(grad, theta)
	p.LogJoint(lj, theta)
	if a := testing.AllocsPerRun(20, func() {
		p.GradLogJointBatch(grad, theta, batch)
		p.GradLogJoint(grad, theta)
		p.LogJoint(lj, theta)
	}); a != 0 {
		t.Errorf("%v allocations per call after warm-up", a)
	}
}

func TestProbitMAP(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	u, v := probitData(rng, 500, []float64{0.1, -0.6, 0.6, 1.8, 0.5})
	p, _ := NewProbit(u, v, 1)
	th, err := p.MAP(nil)
	if err != nil {
		t.Fatal(err)
	}
	g := mat.NewDense(1, 5, nil)
	p.GradLogJoint(g, mat.NewDense(1, 5, th))
	// At the mode the gradient vanishes up to rounding in a sum of N terms.
	if n := floats.Norm(g.RawRowView(0), 2); n > 1e-8 {
		t.Errorf("|∇ log p| at MAP = %v", n)
	}

	// Linearly separable data (v = 1 iff u > 0): the MLE diverges, the MAP
	// is finite and solves θ/σ² = Σ_n λ(|u_n|θ)|u_n|.
	us := mat.NewDense(6, 1, []float64{-3, -2, -1, 1, 2, 3})
	ps, _ := NewProbit(us, []float64{0, 0, 0, 1, 1, 1}, 4)
	ts, err := ps.MAP(nil)
	if err != nil {
		t.Fatal(err)
	}
	if gs := ts[0]/4 - 2*(InvMills(ts[0])+2*InvMills(2*ts[0])+3*InvMills(3*ts[0])); math.Abs(gs) > 1e-9 || !(ts[0] > 0) {
		t.Errorf("separable MAP θ = %v, stationarity residual %v", ts[0], gs)
	}
}

func TestPredictiveProb(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	theta := mat.NewDense(7, 3, nil)
	ut := mat.NewDense(11, 3, nil)
	for _, m := range []*mat.Dense{theta, ut} {
		r, c := m.Dims()
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				m.Set(i, j, 3*rng.NormFloat64())
			}
		}
	}
	got := PredictiveProb(nil, theta, ut)
	for i := 0; i < 11; i++ {
		var want float64
		for s := 0; s < 7; s++ {
			want += distuv.UnitNormal.CDF(floats.Dot(theta.RawRowView(s), ut.RawRowView(i))) / 7
		}
		if !scalar.EqualWithinAbsOrRel(got[i], want, 1e-15, 1e-13) {
			t.Errorf("p̂(v=1|u_%d) = %v, want %v", i, got[i], want)
		}
	}
}

func TestLogJointGradFusedMatchesSeparate(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const n, d, s = 300, 4, 7
	u := mat.NewDense(n, d, nil)
	v := make([]float64, n)
	for i := range n {
		for j := range d {
			u.Set(i, j, 3*rng.NormFloat64())
		}
		v[i] = float64(rng.IntN(2))
	}
	p, err := NewProbit(u, v, 2)
	if err != nil {
		t.Fatal(err)
	}
	theta := mat.NewDense(s, d, nil)
	for i := range s {
		for j := range d {
			// Margins reach far into both tails (|θᵀu| up to ~100).
			theta.Set(i, j, 5*rng.NormFloat64())
		}
	}
	want, got := make([]float64, s), make([]float64, s)
	wg, gg := mat.NewDense(s, d, nil), mat.NewDense(s, d, nil)
	p.LogJoint(want, theta)
	p.GradLogJoint(wg, theta)
	p.LogJointGrad(got, gg, theta)
	for i := range s {
		if math.Abs(got[i]-want[i]) > 1e-12*math.Abs(want[i]) {
			t.Fatalf("log-joint %d: fused %v, separate %v", i, got[i], want[i])
		}
	}
	if !mat.EqualApprox(gg, wg, 1e-12*mat.Norm(wg, math.Inf(1))) {
		t.Fatal("fused gradient differs from GradLogJoint")
	}
	for _, x := range []float64{-1e5, -40, -8.5, -3, 0, 2, 40, 1e5} {
		lp, lam := LogPhiMills(x)
		if math.Abs(lp-LogPhi(x)) > 1e-14*math.Max(1, math.Abs(lp)) || math.Abs(lam-InvMills(x)) > 1e-14*math.Max(1, math.Abs(lam)) {
			t.Fatalf("LogPhiMills(%g) = %v, %v; want %v, %v", x, lp, lam, LogPhi(x), InvMills(x))
		}
	}
}
