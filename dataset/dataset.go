// Package dataset provides the data sets of the paper's probit experiments
// (Sec. VI-B and VI-C): synthetic probit data drawn from eq: probit model,
// equal and heterogeneous (Fig. 7) partitions of a data set among K workers,
// a reader for the IDX files of MNIST, PCA, and CSV input/output for users'
// own data.
//
// A data set Z = {z_n = (u_n, v_n)} is a Set: the covariates u_n are the rows
// of an N×d matrix and the labels v_n ∈ {0, 1}.
package dataset

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Set is a labelled data set Z = {(u_n, v_n)}_{n=1}^N for binary
// classification: row n of U is the covariate vector u_n ∈ ℝ^d and V[n] ∈ {0, 1}
// is its label (eq: probit model).
type Set struct {
	U *mat.Dense // N×d covariates, one data point per row.
	V []float64  // N labels, each 0 or 1.
}

// Len returns the number of data points N (0 for an empty Set).
func (s Set) Len() int { return len(s.V) }

// Dim returns the covariate dimension d (0 when U is nil).
func (s Set) Dim() int {
	if s.U == nil {
		return 0
	}
	_, d := s.U.Dims()
	return d
}

// Subset returns a new Set holding copies of the data points idx, in that
// order. It panics if an index is out of range.
func (s Set) Subset(idx []int) Set {
	d := s.Dim()
	out := Set{V: make([]float64, len(idx))}
	if len(idx) == 0 {
		return out
	}
	out.U = mat.NewDense(len(idx), d, nil)
	for i, n := range idx {
		if n < 0 || n >= s.Len() {
			panic(fmt.Sprintf("dataset: Subset index %d out of range [0, %d)", n, s.Len()))
		}
		out.U.SetRow(i, s.U.RawRowView(n))
		out.V[i] = s.V[n]
	}
	return out
}

// Validate checks that s is a usable data set: N ≥ 1 points, d ≥ 1
// covariates, as many labels as rows of U, labels in {0, 1} and finite
// covariates. The error names the first offending index.
func (s Set) Validate() error {
	if s.U == nil || len(s.V) == 0 {
		return errors.New("dataset: empty data set (need N ≥ 1 data points)")
	}
	r, d := s.U.Dims()
	if r != len(s.V) {
		return fmt.Errorf("dataset: %d covariate rows but %d labels", r, len(s.V))
	}
	if d < 1 {
		return errors.New("dataset: no covariates (need d ≥ 1)")
	}
	for n, v := range s.V {
		if v != 0 && v != 1 {
			return fmt.Errorf("dataset: label %d is %v, want 0 or 1", n, v)
		}
	}
	for n := range r {
		for j, x := range s.U.RawRowView(n) {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("dataset: covariate at row %d, column %d is %v, want a finite number", n, j, x)
			}
		}
	}
	return nil
}
