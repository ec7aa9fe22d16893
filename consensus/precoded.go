package consensus

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
)

// The Gaussian schemes on a link with the matched precoder (docs/MATH.md
// note 22): stream k carries √P_k B F_k θ_k + n_k with F_k = diag(f) U_kᵀ
// known to the server (channel.Received.Rotation, DirGain), so the decoded
// signals ẑ_k = E_k^† y_k = Π_k θ_k + E_k^† n_k (Π_k the projection on the
// directions sent with power; I when every f_i > 0) carry noise of
// covariance N_k = (N0/(l P_k)) U_k diag(f⁺)² U_kᵀ (Received.DecodedNoise)
// instead of the paper's (N0/(l P_k)) I. The schemes are the paper's in
// the decoded coordinates with N_k for that noise (eq. (22.7)); on the
// directions a worker sent without power its decoded signals are 0 and
// its covariance estimate is singular there, which the pseudo-inverses
// treat as no information (docs/MATH.md note 5).

// ErrRankDeficient is returned by WVCMC on a link whose precoder sends
// some direction without power: W_k E_k is singular for every W_k, and
// the entropy bound log|det(W_k E_k)| is −∞.
var ErrRankDeficient = errors.New("the matched precoder sends some direction without power: WVCMC's entropy bound log|det(W_k E_k)| is −∞ for every map")

// decoded returns the decoded signals ẑ_k = Y_k (E_k^†)ᵀ of stream k and
// the decoder E_k^†.
func decoded(rx *channel.Received, k int) (*mat.Dense, *mat.Dense) {
	dec := rx.Decoder(k)
	var z mat.Dense
	z.Mul(rx.Y[k], dec.T())
	return &z, dec
}

// gcmcPrecoded is GCMC on the decoded signals of a precoded link: Scott's
// weights W̃_k = (Σ_j Ĉ_j^+)^+ Ĉ_k^+ on their sample covariances, as a map
// on y_k W_k = W̃_k E_k^†.
func gcmcPrecoded(rx *channel.Received) (Map, error) {
	inv := make([]*mat.SymDense, rx.K)
	decs := make([]*mat.Dense, rx.K)
	for k := range rx.K {
		z, dec := decoded(rx, k)
		c, err := sampleCov(z)
		if err != nil {
			return Map{}, err
		}
		if inv[k], err = pinv(c); err != nil {
			return Map{}, err
		}
		decs[k] = dec
	}
	total, err := pinv(sum(inv))
	if err != nil {
		return Map{}, err
	}
	m := Map{W: make([]*mat.Dense, rx.K)}
	weights := make([]*mat.Dense, rx.K)
	for k := range rx.K {
		var wt, w mat.Dense
		wt.Mul(total, inv[k])
		weights[k] = &wt
		w.Mul(&wt, decs[k])
		m.W[k] = &w
	}
	m.Offset = centredOffset(rx, weights)
	return m, nil
}

// wgcmcPrecoded is WGCMC on the decoded signals of a precoded link
// (eq. (22.7)). OMA: Ĉ_k = [Σ̂_{ẑ_k} − N_k]^+ and
// W̃_k = (Σ_j Ĉ_j^+)^+ (Ĉ_k^+)^{1/2} ((Ĉ_k + N_k)^+)^{1/2}, whose output
// Σ_k W̃_k (Ĉ_k + N_k) W̃_kᵀ is the global (Σ_j Ĉ_j^+)^+ when the Ĉ_k have
// full rank; NOMA (one precoder, the decoded sum ẑ = Σ_k θ_k + noise N):
// Ĉ_0 = [Σ̂_ẑ − N]^+/K and W̃ = K^{-1/2} Ĉ_0^{1/2} ((K Ĉ_0 + N)^+)^{1/2},
// whose output covariance is Ĉ_0/K. With N_k = (N0/(l P_k)) I these are
// the paper's formulas in the decoded coordinates.
func wgcmcPrecoded(rx *channel.Received) (Map, error) {
	invSqrt := func(a mat.Symmetric) (*mat.SymDense, error) {
		return spectral(a, func(v float64) float64 {
			if v <= 0 {
				return 0
			}
			return 1 / math.Sqrt(v)
		})
	}
	if rx.Access == channel.NOMA {
		z, dec := decoded(rx, 0)
		cz, err := sampleCov(z)
		if err != nil {
			return Map{}, err
		}
		noise := rx.DecodedNoise(0)
		c0, err := positivePart(subSym(cz, noise))
		if err != nil {
			return Map{}, err
		}
		kf := float64(rx.K)
		c0.ScaleSym(1/kf, c0)
		half, err := spectral(c0, func(v float64) float64 { return math.Sqrt(math.Max(v, 0)) })
		if err != nil {
			return Map{}, err
		}
		var tot mat.SymDense
		tot.ScaleSym(kf, c0)
		tot.AddSym(&tot, noise)
		right, err := invSqrt(&tot)
		if err != nil {
			return Map{}, err
		}
		var wt, w mat.Dense
		wt.Mul(half, right)
		wt.Scale(1/math.Sqrt(kf), &wt)
		w.Mul(&wt, dec)
		return Map{W: []*mat.Dense{&w}, Offset: centredOffset(rx, nil)}, nil
	}
	chat := make([]*mat.SymDense, rx.K)
	inv := make([]*mat.SymDense, rx.K)
	noise := make([]*mat.SymDense, rx.K)
	decs := make([]*mat.Dense, rx.K)
	for k := range rx.K {
		z, dec := decoded(rx, k)
		cz, err := sampleCov(z)
		if err != nil {
			return Map{}, err
		}
		noise[k], decs[k] = rx.DecodedNoise(k), dec
		if chat[k], err = positivePart(subSym(cz, noise[k])); err != nil {
			return Map{}, err
		}
		if inv[k], err = pinv(chat[k]); err != nil {
			return Map{}, err
		}
	}
	total, err := pinv(sum(inv))
	if err != nil {
		return Map{}, err
	}
	m := Map{W: make([]*mat.Dense, rx.K)}
	weights := make([]*mat.Dense, rx.K)
	for k := range rx.K {
		left, err := invSqrt(chat[k])
		if err != nil {
			return Map{}, err
		}
		var tot mat.SymDense
		tot.AddSym(chat[k], noise[k])
		right, err := invSqrt(&tot)
		if err != nil {
			return Map{}, err
		}
		var wt, w, ak mat.Dense
		wt.Product(total, left, right)
		w.Mul(&wt, decs[k])
		m.W[k] = &w
		ak.Mul(total, inv[k])
		weights[k] = &ak
	}
	if rx.Mean != nil {
		m.Offset = centredOffset(rx, weights)
	}
	return m, nil
}

// checkFullRank returns ErrRankDeficient, with the stream, when some
// encoder of rx has rank below d.
func checkFullRank(rx *channel.Received) error {
	if rx.FullRank() {
		return nil
	}
	for k, f := range rx.DirGain {
		for i, v := range f {
			if !(v > 0) {
				return fmt.Errorf("%w (stream %d, direction %d of %d)", ErrRankDeficient, k+1, i+1, len(f))
			}
		}
	}
	return ErrRankDeficient
}

// subSym returns a − b.
func subSym(a, b mat.Symmetric) *mat.SymDense {
	out := mat.NewSymDense(a.SymmetricDim(), nil)
	out.ScaleSym(-1, b)
	out.AddSym(a, out)
	return out
}
