// Package consensus turns received signals into global-posterior samples.
// Every scheme learns a linear map — θ = Σ_k W_k y_k under OMA
// (eq: est theta) or θ = W y under NOMA (eq: est theta NOMA), W_k of size
// d×m_r — from the received signals (and, for WVCMC, the data through the
// target's gradient). The map is then applied to the signals it was
// learned from, or to fresh ones.
//
// Schemes:
//   - GCMC (eq: est GCMC result) on decoded signals E_k^† y_k, ignoring the noise;
//   - WGCMC for OMA (eq: est WGCMC result) and NOMA (eq: est WGCMC result NOMA);
//   - WVCMC, the variational scheme of Algorithms 1 and 2;
//   - noiseless CMC: GCMC on the samples themselves (channel.Ideal).
package consensus

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
)

// ErrTooFewSamples is returned when a covariance must be estimated from
// fewer than two samples per stream.
var ErrTooFewSamples = errors.New("fewer than 2 samples per stream: covariance cannot be estimated")

// ConstantError reports a worker whose samples take one value in a
// parameter: their covariance is zero there, and Scott's weights, which
// invert it, would leave the worker out of the consensus in that
// direction without a word.
type ConstantError struct {
	Worker, Param int // 0-based
	Value         float64
}

func (e *ConstantError) Error() string {
	return fmt.Sprintf("worker %d: every sample has parameter %d = %g, so its covariance is zero there and the consensus would leave this worker out (a stuck sampler?)",
		e.Worker+1, e.Param+1, e.Value)
}

// Map is an affine aggregation: one d×m_r matrix per received stream (K
// under OMA, 1 under NOMA) and an offset b, nil (zero) unless the link is
// mean-centred (docs/BEYOND.md note 17), where b adds back the combined
// mean of the workers.
type Map struct {
	W      []*mat.Dense
	Offset []float64
}

// Apply returns the global samples θ_s = Σ_k W_k y_k^{(s)} + b as rows of
// an S×d matrix.
func (m Map) Apply(rx *channel.Received) *mat.Dense {
	if len(m.W) != rx.Streams() {
		panic(fmt.Sprintf("consensus: map has %d streams, signal has %d", len(m.W), rx.Streams()))
	}
	theta := mat.NewDense(rx.S, rx.D, nil)
	var tmp mat.Dense
	for k, w := range m.W {
		tmp.Mul(rx.Y[k], w.T())
		theta.Add(theta, &tmp)
	}
	addOffset(theta, m.Offset)
	return theta
}

// addOffset adds b (nil: nothing) to every row of theta.
func addOffset(theta *mat.Dense, b []float64) {
	if b == nil {
		return
	}
	r, _ := theta.Dims()
	for i := range r {
		row := theta.RawRowView(i)
		for j, v := range b {
			row[j] += v
		}
	}
}

// Clone returns a deep copy of m.
func (m Map) Clone() Map {
	out := Map{W: make([]*mat.Dense, len(m.W))}
	for i, w := range m.W {
		out.W[i] = mat.DenseCopyOf(w)
	}
	if m.Offset != nil {
		out.Offset = append([]float64(nil), m.Offset...)
	}
	return out
}

// SingleWorker is the map that decodes stream k alone, θ = E_k^† y_k (Bᵀy_k/(l√P_k) on the paper's link),
// and ignores the other streams: one worker's samples as the server sees
// them (the best-single-worker benchmark).
//
// On a centred link it adds back the worker's decoded mean, b = m̂_k.
func SingleWorker(rx *channel.Received, k int) Map {
	m := Map{W: make([]*mat.Dense, rx.Streams())}
	if rx.Mean != nil {
		m.Offset = append([]float64(nil), rx.Mean[k]...)
	}
	for i := range m.W {
		switch {
		case i == k && rx.Rotation != nil:
			m.W[i] = rx.Decoder(k)
		case i == k:
			m.W[i] = liftCombine(eye(rx.D), rx, 1/math.Sqrt(rx.Pk[k]))
		default:
			m.W[i] = mat.NewDense(rx.D, rx.Mr, nil)
		}
	}
	return m
}
