package consensus

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/internal/dgemm"
	"github.com/wcmc-project/wcmc/model"
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
// Its buffers are allocated by NewVariational, so that Value, Gradient and
// ValueGrad allocate nothing beyond what the target allocates
// (model.Probit: nothing once its scratch is sized by the first call). One
// exception, under gonum's own BLAS (machines without package dgemm's
// vector kernels): for d > 128 gonum's blocked LU runs its trailing
// updates through gonum's parallel Dgemm, which allocates (64 objects per
// stream and evaluation at d = 300); package dgemm's product is serial and
// allocates nothing.
type Variational struct {
	rx     *channel.Received
	target model.Target
	a, b   float64
	enc    []*mat.Dense // E_k, m_r×d
	encT   []*mat.Dense // E_kᵀ, d×m_r: right-hand side of the solve
	// encPeriod[k] is the period of the columns of E_kᵀ: column j equals
	// column j mod encPeriod[k] (d for the repetition code's E = √P_k B).
	encPeriod []int

	theta, grad *mat.Dense // S×d
	tmp         *mat.Dense // S×d product buffer
	logp        []float64

	// Log-determinant scratch: W E_k and then its LU factors (d×d) with
	// the pivots; log|U_ii|, summed as mat.LU.LogDet sums them; W Wᵀ and
	// then its Cholesky factor (upper triangle); the two solves (d×m_r)
	// and their weighted sum, the entropy gradient.
	we      *mat.Dense
	piv     []int
	logDiag []float64
	sym     *mat.SymDense
	x, y    *mat.Dense
	ent     *mat.Dense

	// signs[k] is the sign of det(W_k E_k) at the last evaluation.
	signs []float64
}

// NewVariational prepares the objective for rx and target.
func NewVariational(rx *channel.Received, target model.Target) (*Variational, error) {
	if target.Dim() != rx.D {
		return nil, fmt.Errorf("target has dimension %d, signals carry d = %d", target.Dim(), rx.D)
	}
	if err := checkFullRank(rx); err != nil {
		return nil, err
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
	d, mr := rx.D, rx.Mr
	v.enc = make([]*mat.Dense, rx.Streams())
	v.encT = make([]*mat.Dense, rx.Streams())
	v.encPeriod = make([]int, rx.Streams())
	for i := range v.enc {
		v.enc[i] = rx.Encoder(i)
		v.encT[i] = mat.DenseCopyOf(v.enc[i].T())
		v.encPeriod[i] = columnPeriod(v.encT[i].RawMatrix())
	}
	v.theta = mat.NewDense(rx.S, d, nil)
	v.grad = mat.NewDense(rx.S, d, nil)
	v.tmp = mat.NewDense(rx.S, d, nil)
	v.logp = make([]float64, rx.S)
	v.we = mat.NewDense(d, d, nil)
	v.piv = make([]int, d)
	v.logDiag = make([]float64, d)
	v.signs = make([]float64, rx.Streams())
	v.sym = mat.NewSymDense(d, nil)
	v.x = mat.NewDense(d, mr, nil)
	v.y = mat.NewDense(d, mr, nil)
	v.ent = mat.NewDense(d, mr, nil)
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
// non-nil (the target must then be a model.Minibatcher). When the map has
// an offset (θ_s = Σ_k W_k y_k^{(s)} + b, a mean-centred link) it also
// writes ∇_b L̃ = −(1/S) Σ_s g_s into grad.Offset: the entropy bound does
// not depend on b.
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

// ValueGrad returns L̃(m) and writes its full-batch gradient into grad (in
// W and, for a map with an offset, in b), in one pass over the data when
// the target is model.Fused.
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
		v.checkShape(g)
		gr := g.RawMatrix()
		gemm(blas.Trans, blas.NoTrans, v.grad.RawMatrix(), v.rx.Y[k].RawMatrix(), gr)
		for i := range gr.Rows {
			floats.Scale(inv, gr.Data[i*gr.Stride:i*gr.Stride+gr.Cols])
		}
		ld, err := v.logDets(w, k, true)
		if err != nil {
			return math.NaN(), err
		}
		f -= ld
		// v.ent now holds a (W E)^{-ᵀ}Eᵀ + b (W Wᵀ)^{-1} W.
		g.Sub(g, v.ent)
	}
	if m.Offset != nil {
		gb := grad.Offset
		for j := range gb {
			gb[j] = 0
		}
		for s := range v.rx.S {
			floats.Add(gb, v.grad.RawRowView(s))
		}
		floats.Scale(inv, gb)
	}
	if value && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return f, fmt.Errorf("objective is %v", f)
	}
	return f, nil
}

// logDets returns a·log|det(W E_k)| + (b/2)·log det(W Wᵀ); with withGrad it
// also leaves a (W E_k)^{-ᵀ}E_kᵀ + b (W Wᵀ)^{-1} W in v.ent.
//
// The factorizations and solves are those of mat.LU (Getrf, Getrs) and
// mat.Cholesky (Potrf, Potrs), called through lapack64 on v's scratch
// instead of the work space and copies that mat allocates; the condition
// estimates mat computes on the way are not needed here.
func (v *Variational) logDets(w *mat.Dense, k int, withGrad bool) (float64, error) {
	v.checkShape(w)
	we := v.we.RawMatrix()
	gemm(blas.NoTrans, blas.NoTrans, w.RawMatrix(), v.enc[k].RawMatrix(), we)
	// W E = P L U in place; log|det| is Σ log|U_ii| (mat.LU.LogDet).
	luOK := lapack64.Getrf(we, v.piv)
	sign := 1.0
	for i := range v.logDiag {
		u := we.Data[i*we.Stride+i]
		v.logDiag[i] = math.Log(math.Abs(u))
		if (u < 0) != (v.piv[i] != i) {
			sign = -sign
		}
	}
	v.signs[k] = sign
	ldWE := floats.Sum(v.logDiag)
	// W Wᵀ = Uᵀ U in place; log det is Σ 2 log U_ii (mat.Cholesky.LogDet).
	v.sym.SymOuterK(1, w)
	chol, cholOK := lapack64.Potrf(v.sym.RawSymmetric())
	if !cholOK || !luOK || math.IsInf(ldWE, 0) || math.IsNaN(ldWE) {
		return 0, ErrSingular
	}
	var ldWW float64
	for i := range chol.N {
		ldWW += 2 * math.Log(chol.Data[i*chol.Stride+i])
	}
	val := v.a*ldWE + v.b*ldWW/2
	if !withGrad {
		return val, nil
	}
	// a (W E)^{-ᵀ} Eᵀ: solve (W E)ᵀ X = Eᵀ. Under the pure-Go BLAS, for
	// the distinct columns of Eᵀ only (the first encPeriod[k]), then
	// repeated: gonum's Dtrsm and Dlaswp compute each column of a solution
	// with the same operations whatever the other columns, so the result
	// is the whole solve's bit for bit, in 1/l of its time.
	v.x.Copy(v.encT[k])
	x := v.x.RawMatrix()
	period := x.Cols
	if pureGoBLAS() {
		period = v.encPeriod[k]
	}
	lapack64.Getrs(blas.Trans, we, blas64.General{Rows: x.Rows, Cols: period, Stride: x.Stride, Data: x.Data}, v.piv)
	repeatColumns(x, period)
	floats.Scale(v.a, x.Data)
	// b (W Wᵀ)^{-1} W.
	v.y.Copy(w)
	y := v.y.RawMatrix()
	lapack64.Potrs(chol, y)
	floats.Scale(v.b, y.Data)
	v.ent.Add(v.x, v.y)
	return val, nil
}

// apply sets v.theta = Σ_k Y_k W_kᵀ + 1 bᵀ (b = m.Offset, fixed: the
// objective and its gradient in W are those of eq: obj OMA / NOMA at the
// shifted θ_s, and the entropy bound does not depend on b).
func (v *Variational) apply(m Map) {
	v.theta.Zero()
	for k, w := range m.W {
		v.checkShape(w)
		gemm(blas.NoTrans, blas.Trans, v.rx.Y[k].RawMatrix(), w.RawMatrix(), v.tmp.RawMatrix())
		v.theta.Add(v.theta, v.tmp)
	}
	addOffset(v.theta, m.Offset)
}

// checkShape panics unless w is d×m_r (the BLAS calls on raw matrices do
// not check it, mat.Dense.Mul did).
func (v *Variational) checkShape(w *mat.Dense) {
	if r, c := w.Dims(); r != v.rx.D || c != v.rx.Mr {
		panic(mat.ErrShape)
	}
}

// InitialMap is the paper's WVCMC start point (docs/MATH.md note 7): under OMA
// the GCMC solution written as maps on y_k, W_k = W_k^{GCMC} E_k^†; under
// NOMA W = E^†/K, the average of the decoded samples.
//
// With S ≤ d samples per worker the GCMC covariance estimates are singular
// and so is the GCMC map, where the entropy bound is −∞. In that case (and
// when S < 2) the OMA start falls back to the average of the decoded
// signals, W_k = E_k^†/K, which is always full rank; fallback reports it.
//
// On a mean-centred link (docs/BEYOND.md note 17) the start has an offset,
// which WVCMC then learns with W: GCMC's own (its weights applied to the
// decoded means, GCMC's map on the signals with the means added back), or
// with the average's start the average of the decoded means
// (1/K) Σ_k m̂_k. Both are the paper's start points applied to the
// signals E_k θ_k + n_k that the centred link lets the server rebuild.
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
	// E_k^† = Bᵀ/(l √P_k) (with the matched precoder Received.Decoder).
	m = Map{W: make([]*mat.Dense, rx.Streams()), Offset: centredOffset(rx, nil)}
	for k := range m.W {
		if rx.Rotation != nil {
			m.W[k] = rx.Decoder(k)
			m.W[k].Scale(1/float64(rx.K), m.W[k])
			continue
		}
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

// columnPeriod returns the smallest p dividing the column count such that
// column j of a equals column j mod p for every j (bit for bit).
func columnPeriod(a blas64.General) int {
	for p := 1; p < a.Cols; p++ {
		if a.Cols%p != 0 {
			continue
		}
		ok := true
		for i := 0; i < a.Rows && ok; i++ {
			row := a.Data[i*a.Stride : i*a.Stride+a.Cols]
			for j := p; j < a.Cols && ok; j++ {
				ok = math.Float64bits(row[j]) == math.Float64bits(row[j%p])
			}
		}
		if ok {
			return p
		}
	}
	return a.Cols
}

// repeatColumns sets column j of x to column j mod p, for j ≥ p.
func repeatColumns(x blas64.General, p int) {
	for i := range x.Rows {
		row := x.Data[i*x.Stride : i*x.Stride+x.Cols]
		for j := p; j < len(row); j += p {
			copy(row[j:min(j+p, len(row))], row[:p])
		}
	}
}

// pureGoBLAS reports whether gonum's BLAS calls go to gonum's own
// routines or to package dgemm's, whose Dtrsm is gonum's.
func pureGoBLAS() bool {
	switch blas64.Implementation().(type) {
	case gonum.Implementation, dgemm.Implementation:
		return true
	}
	return false
}
