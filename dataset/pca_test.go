package dataset

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// checkPCA verifies p against an independent eigendecomposition of the
// sample covariance of x: orthonormal components, explained-variance
// fractions equal to λ_i / tr Σ, components equal to the eigenvectors up to
// sign where the eigengap allows, and zero scores for the mean.
func checkPCA(t *testing.T, p *PCA, x *mat.Dense, k int) {
	t.Helper()
	_, d := x.Dims()
	q := p.Components()
	if r, c := q.Dims(); r != d || c != k {
		t.Fatalf("Components is %d×%d, want %d×%d", r, c, d, k)
	}
	var qtq mat.Dense
	qtq.Mul(q.T(), q)
	for i := range k {
		qtq.Set(i, i, qtq.At(i, i)-1)
	}
	if e := mat.Norm(&qtq, 2); e >= 1e-10 {
		t.Errorf("‖QᵀQ − I‖₂ = %v, want < 1e-10", e)
	}

	frac := p.ExplainedVariance()
	if len(frac) != k {
		t.Fatalf("%d explained-variance fractions, want %d", len(frac), k)
	}
	for i, f := range frac {
		if f <= 0 || (i > 0 && f > frac[i-1]) {
			t.Fatalf("explained variance %v not positive and decreasing", frac)
		}
	}
	if s := floats.Sum(frac); k < d && s >= 1 || k == d && math.Abs(s-1) > 1e-12 {
		t.Errorf("explained variance of %d of %d components sums to %v, want < 1 (= 1 when k = D)", k, d, s)
	}

	cov := mat.NewSymDense(d, nil)
	stat.CovarianceMatrix(cov, x, nil)
	var eig mat.EigenSym
	if !eig.Factorize(cov, true) {
		t.Fatal("EigenSym failed")
	}
	vals := eig.Values(nil) // ascending
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	var trace float64
	for i := range d {
		trace += cov.At(i, i)
	}
	for i := range k {
		lam := vals[d-1-i]
		if want := lam / trace; math.Abs(frac[i]-want) > 1e-9*want {
			t.Errorf("component %d explains %v, want λ/tr Σ = %v", i, frac[i], want)
		}
		// Eigenvectors are defined up to sign; compare where the
		// relative eigengap to both neighbours exceeds 1e-2.
		gap := lam
		if i < d-1 {
			gap = lam - vals[d-2-i]
		}
		if i > 0 {
			gap = min(gap, vals[d-i]-lam)
		}
		if gap > 1e-2*lam {
			dot := math.Abs(floats.Dot(mat.Col(nil, i, q), mat.Col(nil, d-1-i, &vecs)))
			if math.Abs(dot-1) > 1e-6 {
				t.Errorf("component %d: |qᵀe| = %v, want 1", i, dot)
			}
		}
	}

	mean := mat.NewDense(1, d, p.Mean())
	for j, v := range p.Transform(mean).RawRowView(0) {
		if math.Abs(v) > 1e-12 {
			t.Errorf("score %d of the training mean is %v, want 0", j, v)
		}
	}
	// The scores of the training data have variances λ_i.
	scores := p.Transform(x)
	for i := range k {
		v := stat.Variance(mat.Col(nil, i, scores), nil)
		if want := vals[d-1-i]; math.Abs(v-want) > 1e-9*want {
			t.Errorf("score %d has variance %v, want %v", i, v, want)
		}
	}
}

func TestPCAMNIST(t *testing.T) {
	realMNISTDir(t)
	s, err := mnistZeroOne()
	if err != nil {
		t.Fatal(err)
	}
	const k = 30
	p, err := FitPCA(s.U, k)
	if err != nil {
		t.Fatal(err)
	}
	checkPCA(t, p, s.U, k)
	if r, c := p.Transform(s.U).Dims(); r != 2115 || c != k {
		t.Fatalf("Transform gives %d×%d, want 2115×%d", r, c, k)
	}
}

func TestPCASynthetic(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	// x = z·diag(sd) + shift, so the covariance is diagonal with
	// distinct variances sd².
	sd := []float64{5, 3, 2, 1, 0.5, 0.1}
	x := mat.NewDense(500, len(sd), nil)
	for i := range 500 {
		for j, s := range sd {
			x.Set(i, j, s*rng.NormFloat64()+float64(j))
		}
	}
	for k := 1; k <= len(sd); k++ {
		p, err := FitPCA(x, k)
		if err != nil {
			t.Fatal(err)
		}
		checkPCA(t, p, x, k)
		// Sign convention: the largest-magnitude entry of each component
		// is positive.
		q := p.Components()
		for i := range k {
			c := mat.Col(nil, i, q)
			if c[floats.MaxIdx(absAll(c))] <= 0 {
				t.Fatalf("component %d has a negative dominant entry: %v", i, c)
			}
		}
	}
	// Fewer points than dimensions: k up to N is allowed.
	few := mat.NewDense(4, 10, nil)
	for i := range 4 {
		for j := range 10 {
			few.Set(i, j, rng.NormFloat64())
		}
	}
	if _, err := FitPCA(few, 3); err != nil {
		t.Fatal(err)
	}
}

func TestPCAErrors(t *testing.T) {
	x := mat.NewDense(5, 3, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 0, 1, 2, 2, 2})
	for _, k := range []int{0, -1, 4} {
		if _, err := FitPCA(x, k); err == nil || !strings.Contains(err.Error(), "1 ≤ k ≤ min(N, D) = 3") {
			t.Errorf("k=%d: error %v", k, err)
		}
	}
	bad := mat.DenseCopyOf(x)
	bad.Set(2, 1, math.NaN())
	if _, err := FitPCA(bad, 2); err == nil || !strings.Contains(err.Error(), "row 2, column 1") {
		t.Errorf("NaN input: error %v", err)
	}
}

func TestWithBias(t *testing.T) {
	x := mat.NewDense(2, 2, []float64{1, 2, 3, 4})
	got := WithBias(x)
	if !mat.Equal(got, mat.NewDense(2, 3, []float64{1, 2, 1, 3, 4, 1})) {
		t.Fatalf("WithBias = %v", mat.Formatted(got))
	}
	x.Set(0, 0, 9)
	if got.At(0, 0) != 1 {
		t.Fatal("WithBias shares memory with its input")
	}
	if !slices.Equal(mat.Col(nil, 1, WithBias(mat.NewDense(3, 1, nil))), []float64{1, 1, 1}) {
		t.Fatal("bias column is not all ones")
	}
}
