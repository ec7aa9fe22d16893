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
