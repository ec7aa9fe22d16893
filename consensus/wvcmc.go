package consensus

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"wcmc/channel"
	"wcmc/model"
)

// Variational is the WVCMC objective on a fixed set of received signals:
// the free-energy bound L̃(W) of eq: obj OMA / eq: obj NOMA,
//
//	L̃(W) = −(1/S) Σ_s log p(θ_s, Z) − a Σ_k log|det(W_k E_k)| − (b/2) Σ_k log det(W_k W_kᵀ) + const,
//
// with θ_s = Σ_k W_k y_k^{(s)}, a = b = 1/(2K) under OMA (eq: LB entropy)
// and a = K/(K+1), b = 1/(K+1) under NOMA (eq: LB entropy NOMA). The
// constant (noise entropy and subposterior entropies) does not depend on W
// and is dropped.
//
// A Variational holds scratch space and is not safe for concurrent use.
type Variational struct {
	rx     *channel.Received
	target model.Target
	a, b   float64
	enc    []*mat.Dense // E_k, m_r×d

	theta, grad *mat.Dense // S×d
	logp        []float64
	we, wwt     mat.Dense
	lu          mat.LU
	chol        mat.Cholesky
	sym         mat.SymDense
	tmp         mat.Dense // S×d product buffer
	ent         mat.Dense // d×m_r entropy-gradient buffer
}

// NewVariational prepares the objective for rx and target.
func NewVariational(rx *channel.Received, target model.Target) (*Variational, error) {
	if target.Dim() != rx.D {
		return nil, fmt.Errorf("target has dimension %d, signals carry d = %d", target.Dim(), rx.D)
	}
	if rx.N0 <= 0 {
		return nil, errors.New("WVCMC needs channel noise (N0 > 0): its entropy bound is −∞ on a noiseless link")
	}
	v := &Variational{rx: rx, target: target}
	k := float64(rx.K)
	if rx.Access == channel.OMA {
		v.a, v.b = 1/(2*k), 1/(2*k)
	} else {
		v.a, v.b = k/(k+1), 1/(k+1)
	}
	v.enc = make([]*mat.Dense, rx.Streams())
	for i := range v.enc {
		v.enc[i] = rx.Encoder(i)
	}
	v.theta = mat.NewDense(rx.S, rx.D, nil)
	v.grad = mat.NewDense(rx.S, rx.D, nil)
	v.logp = make([]float64, rx.S)
	return v, nil
}

// ErrSingular reports a map at which the entropy bound is −∞ (a W_k E_k or
// W_k W_kᵀ that is singular), typically after a divergent step.
var ErrSingular = errors.New("WVCMC map became singular (log-determinant is −∞)")

// Value returns L̃(m) up to the dropped constant.
func (v *Variational) Value(m Map) (float64, error) {
	v.apply(m)
	v.target.LogJoint(v.logp, v.theta)
	var f float64
	for _, lp := range v.logp {
		f -= lp
	}
	f /= float64(v.rx.S)
	for k, w := range m.W {
		ld, err := v.logDets(w, k, false)
		if err != nil {
			return math.NaN(), err
		}
		f -= ld
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return f, fmt.Errorf("objective is %v", f)
	}
	return f, nil
}

// Gradient writes ∇_{W_k} L̃ into grad.W[k] (eq: gradient Dk, eq: gradient Dk noma):
//
//	−(1/S) Σ_s g_s y_k^{(s)ᵀ} − a (W_k E_k)^{-ᵀ} E_kᵀ − b (W_k W_kᵀ)^{-1} W_k,
//
// with g_s = ∇ log p(θ_s, Z), or its minibatch estimate when batch is
// non-nil (the target must then be a model.Minibatcher).
func (v *Variational) Gradient(grad, m Map, batch []int) error {
	v.apply(m)
	if batch != nil {
		mb, ok := v.target.(model.Minibatcher)
		if !ok {
			return errors.New("minibatch gradient needs a target that supports minibatches")
		}
		mb.GradLogJointBatch(v.grad, v.theta, batch)
	} else {
		v.target.GradLogJoint(v.grad, v.theta)
	}
	_, err := v.finish(grad, m, false)
	return err
}

// ValueGrad returns L̃(m) and writes its full-batch gradient into grad, in
// one pass over the data when the target is model.Fused.
func (v *Variational) ValueGrad(grad, m Map) (float64, error) {
	v.apply(m)
	if f, ok := v.target.(model.Fused); ok {
		f.LogJointGrad(v.logp, v.grad, v.theta)
	} else {
		v.target.LogJoint(v.logp, v.theta)
		v.target.GradLogJoint(v.grad, v.theta)
	}
	return v.finish(grad, m, true)
}

// finish turns the per-sample gradients in v.grad (and, with value, the
// log-densities in v.logp) into ∇L̃ (and L̃).
func (v *Variational) finish(grad, m Map, value bool) (float64, error) {
	var f float64
	if value {
		for _, lp := range v.logp {
			f -= lp
		}
		f /= float64(v.rx.S)
	}
	inv := -1 / float64(v.rx.S)
	for k, w := range m.W {
		g := grad.W[k]
		g.Mul(v.grad.T(), v.rx.Y[k])
		g.Scale(inv, g)
		ld, err := v.logDets(w, k, true)
		if err != nil {
			return math.NaN(), err
		}
		f -= ld
		// v.ent now holds a (W E)^{-ᵀ}Eᵀ + b (W Wᵀ)^{-1} W.
		g.Sub(g, &v.ent)
	}
	if value && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return f, fmt.Errorf("objective is %v", f)
	}
	return f, nil
}

// logDets returns a·log|det(W E_k)| + (b/2)·log det(W Wᵀ); with withGrad it
// also leaves a (W E_k)^{-ᵀ}E_kᵀ + b (W Wᵀ)^{-1} W in v.ent.
func (v *Variational) logDets(w *mat.Dense, k int, withGrad bool) (float64, error) {
	e := v.enc[k]
	v.we.Mul(w, e)
	v.lu.Factorize(&v.we)
	ldWE, _ := v.lu.LogDet()
	v.sym.SymOuterK(1, w)
	if !v.chol.Factorize(&v.sym) || math.IsInf(ldWE, 0) || math.IsNaN(ldWE) {
		return 0, ErrSingular
	}
	ldWW := v.chol.LogDet()
	val := v.a*ldWE + v.b*ldWW/2
	if !withGrad {
		return val, nil
	}
	// a (W E)^{-ᵀ} Eᵀ: solve (W E)ᵀ X = Eᵀ.
	var x mat.Dense
	if err := v.lu.SolveTo(&x, true, e.T()); err != nil {
		if _, ok := err.(mat.Condition); !ok {
			return 0, ErrSingular
		}
	}
	x.Scale(v.a, &x)
	var y mat.Dense
	if err := v.chol.SolveTo(&y, w); err != nil {
		if _, ok := err.(mat.Condition); !ok {
			return 0, ErrSingular
		}
	}
	y.Scale(v.b, &y)
	v.ent.Reset()
	v.ent.Add(&x, &y)
	return val, nil
}

// apply sets v.theta = Σ_k Y_k W_kᵀ.
func (v *Variational) apply(m Map) {
	v.theta.Zero()
	for k, w := range m.W {
		v.tmp.Mul(v.rx.Y[k], w.T())
		v.theta.Add(v.theta, &v.tmp)
	}
}

// InitialMap is the paper's WVCMC start point (DESIGN note 7): under OMA
// the GCMC solution written as maps on y_k, W_k = W_k^{GCMC} E_k^†; under
// NOMA W = E^†/K, the average of the decoded samples.
//
// With S ≤ d samples per worker the GCMC covariance estimates are singular
// and so is the GCMC map, where the entropy bound is −∞. In that case (and
// when S < 2) the OMA start falls back to the average of the decoded
// signals, W_k = E_k^†/K, which is always full rank; fallback reports it.
func InitialMap(rx *channel.Received) (m Map, fallback bool, err error) {
	if rx.Access == channel.OMA {
		m, err := GCMC(rx)
		if err == nil && fullRank(m, rx) {
			return m, false, nil
		}
		if err != nil && !errors.Is(err, ErrTooFewSamples) {
			return Map{}, false, err
		}
	}
	// E_k^† = Bᵀ/(l √P_k).
	m = Map{W: make([]*mat.Dense, rx.Streams())}
	for k := range m.W {
		m.W[k] = liftCombine(eye(rx.D), rx, 1/(math.Sqrt(rx.Pk[k])*float64(rx.K)))
	}
	return m, rx.Access == channel.OMA, nil
}

// fullRank reports whether every W_k E_k is invertible.
func fullRank(m Map, rx *channel.Received) bool {
	for k, w := range m.W {
		var we mat.Dense
		we.Mul(w, rx.Encoder(k))
		var lu mat.LU
		lu.Factorize(&we)
		if ld, _ := lu.LogDet(); math.IsInf(ld, 0) || math.IsNaN(ld) || mat.Cond(&we, 1) > 1e12 {
			return false
		}
	}
	return true
}

func eye(d int) *mat.Dense {
	m := mat.NewDense(d, d, nil)
	for i := range d {
		m.Set(i, i, 1)
	}
	return m
}

// drawBatch fills batch with len(batch) distinct indices by a partial
// Fisher–Yates shuffle of perm.
func drawBatch(rng *rand.Rand, perm, batch []int) {
	n := len(perm)
	for i := range batch {
		j := i + rng.IntN(n-i)
		perm[i], perm[j] = perm[j], perm[i]
		batch[i] = perm[i]
	}
}

func sqFrob(m *mat.Dense) float64 {
	n := mat.Norm(m, 2)
	return n * n
}

func scaled(c float64, m *mat.Dense) *mat.Dense {
	var out mat.Dense
	out.Scale(c, m)
	return &out
}
