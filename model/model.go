// Package model defines posterior targets p(θ|Z) ∝ p(θ, Z) through their
// log-joint density and its gradient, evaluated on S parameter samples at
// once (the rows of an S×d matrix).
package model

import "gonum.org/v1/gonum/mat"

// Target is a posterior known up to its normalising constant.
type Target interface {
	// Dim is the dimension d of θ.
	Dim() int
	// LogJoint sets dst[s] = log p(θ_s, Z) + c for each row θ_s of theta,
	// where c does not depend on θ. len(dst) must equal the number of rows.
	LogJoint(dst []float64, theta *mat.Dense)
	// GradLogJoint sets row s of grad (S×d) to ∇_θ log p(θ_s, Z).
	GradLogJoint(grad, theta *mat.Dense)
}

// Minibatcher is a Target whose data term is a sum over N data points and
// can be estimated on a minibatch B:
//
//	∇ log p(θ) + (N/|B|) Σ_{n∈B} ∇ log p(z_n|θ).
type Minibatcher interface {
	Target
	// NumData is N, the number of data points.
	NumData() int
	// GradLogJointBatch sets row s of grad to the minibatch estimate above
	// for θ_s, using the data points indexed by batch.
	GradLogJointBatch(grad, theta *mat.Dense, batch []int)
}

// Fused is a Target that can evaluate the log-joint and its gradient in a
// single pass over the data (cheaper than LogJoint then GradLogJoint).
type Fused interface {
	Target
	// LogJointGrad sets dst as LogJoint and grad as GradLogJoint.
	LogJointGrad(dst []float64, grad, theta *mat.Dense)
}

// Curved is a Target whose curvature can be evaluated on S samples at once
// (the exact Hessians a second-order WVCMC optimiser needs).
type Curved interface {
	Target
	// NegHessians sets row s of dst (S × d(d+1)/2) to the upper triangle of
	// −∇² log p(θ_s, Z), packed row by row: entries (i, j), i ≤ j, in the
	// order (0,0), (0,1), …, (0,d−1), (1,1), …, (d−1,d−1) (PackedIndex).
	NegHessians(dst, theta *mat.Dense)
}

// PackedIndex is the position of entry (i, j), i ≤ j, of a symmetric d×d
// matrix in its upper triangle packed row by row (Curved.NegHessians).
func PackedIndex(d, i, j int) int { return i*d - i*(i-1)/2 + j - i }
