package dataset

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// PCA is a principal component projection fitted on training data (Sec.
// VI-C projects the 784 MNIST pixels onto k = 30 components):
//
//	x ↦ Qᵀ(x − μ),
//
// with μ the training mean and Q the D×k matrix of the leading eigenvectors
// of the training sample covariance Σ = (1/(N−1)) Σ_n (x_n − μ)(x_n − μ)ᵀ.
type PCA struct {
	mean     []float64  // μ, length D
	comps    *mat.Dense // Q, D×k, orthonormal columns
	explFrac []float64  // λ_i / tr Σ, i = 1, …, k
}

// FitPCA fits a k-component PCA on the rows of train (N×D) with gonum's
// stat.PC (an SVD of the centred data). Each component's sign is fixed so
// that its largest-magnitude entry is positive, making the result
// deterministic. It returns an error if k < 1 or k > min(N, D), if train
// holds a non-finite value, or if the decomposition fails.
func FitPCA(train *mat.Dense, k int) (*PCA, error) {
	n, d := train.Dims()
	if k < 1 || k > min(n, d) {
		return nil, fmt.Errorf("dataset: PCA with %d components of %d×%d data, want 1 ≤ k ≤ min(N, D) = %d", k, n, d, min(n, d))
	}
	for i := range n {
		for j, x := range train.RawRowView(i) {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("dataset: PCA input at row %d, column %d is %v, want a finite number", i, j, x)
			}
		}
	}
	var pc stat.PC
	if !pc.PrincipalComponents(train, nil) {
		return nil, errors.New("dataset: PCA: singular value decomposition failed")
	}
	var vecs mat.Dense
	pc.VectorsTo(&vecs)
	vars := pc.VarsTo(nil)
	total := floats.Sum(vars) // = tr Σ
	p := &PCA{
		mean:     make([]float64, d),
		comps:    mat.DenseCopyOf(vecs.Slice(0, d, 0, k)),
		explFrac: make([]float64, k),
	}
	for j := range d {
		p.mean[j] = stat.Mean(mat.Col(nil, j, train), nil)
	}
	for i := range k {
		if total > 0 {
			p.explFrac[i] = vars[i] / total
		}
		col := mat.Col(nil, i, p.comps)
		if col[floats.MaxIdx(absAll(col))] < 0 {
			floats.Scale(-1, col)
			p.comps.SetCol(i, col)
		}
	}
	return p, nil
}

func absAll(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = math.Abs(v)
	}
	return out
}

// Transform returns the N×k scores (x_n − μ)ᵀQ of the rows of x (N×D). It
// panics if x does not have D columns.
func (p *PCA) Transform(x *mat.Dense) *mat.Dense {
	n, d := x.Dims()
	if d != len(p.mean) {
		panic(fmt.Sprintf("dataset: PCA fitted on %d columns, Transform given %d", len(p.mean), d))
	}
	c := mat.DenseCopyOf(x)
	for i := range n {
		floats.Sub(c.RawRowView(i), p.mean)
	}
	var out mat.Dense
	out.Mul(c, p.comps)
	return &out
}

// ExplainedVariance returns, for each component i, the fraction λ_i / tr Σ of
// the total training variance it explains, in decreasing order.
func (p *PCA) ExplainedVariance() []float64 {
	return append([]float64(nil), p.explFrac...)
}

// Components returns a copy of Q, the D×k matrix whose orthonormal columns
// are the principal directions.
func (p *PCA) Components() *mat.Dense { return mat.DenseCopyOf(p.comps) }

// Mean returns a copy of the training mean μ.
func (p *PCA) Mean() []float64 { return append([]float64(nil), p.mean...) }

// WithBias returns [x, 1]: x (N×D) with a constant-1 column appended, so
// that the probit model Φ(θᵀu) (eq: probit model), which has no intercept,
// can learn one as the last coordinate of θ. Synthetic probit data needs no
// bias (its margin has mean zero), but PCA scores are centred on the training
// mean, and with unbalanced classes (MNIST 0 vs 1: 980 vs 1135) the decision
// boundary does not pass through that mean, so a model without intercept
// would be misspecified.
func WithBias(x *mat.Dense) *mat.Dense {
	n, d := x.Dims()
	out := mat.NewDense(n, d+1, nil)
	out.Slice(0, n, 0, d).(*mat.Dense).Copy(x)
	for i := range n {
		out.Set(i, d, 1)
	}
	return out
}
