package consensus

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
)

// GCMC is Scott et al.'s Gaussian consensus applied to the decoded signals
// ẑ_k = E_k^† y_k = θ_k + E_k^† n_k, as if they were noiseless samples
// (eq: est GCMC result): W̃_k = (Σ_j Ĉ_j^{-1})^{-1} Ĉ_k^{-1} with Ĉ_k the
// sample covariance of ẑ_k (eq: GCMC). As a map on y_k, W_k = W̃_k E_k^†.
// It needs OMA (one stream per worker) and S ≥ 2.
//
// On a mean-centred link ẑ_k = θ_k − m_k + E_k^† n_k, and the map adds
// back the consensus of the decoded means with the same weights,
// b = Σ_k W̃_k m̂_k (centredOffset). With the matched precoder E_k^† also
// undoes the rotation and gains (gcmcPrecoded).
func GCMC(rx *channel.Received) (Map, error) {
	if rx.Access != channel.OMA {
		return Map{}, fmt.Errorf("GCMC needs one stream per worker (OMA), got %v", rx.Access)
	}
	if rx.Rotation != nil {
		return gcmcPrecoded(rx)
	}
	covs := make([]*mat.SymDense, rx.K)
	for k := range rx.K {
		z := rx.Combine(k)
		z.Scale(1/math.Sqrt(rx.Pk[k]), z)
		c, err := sampleCov(z)
		if err != nil {
			return Map{}, err
		}
		covs[k] = c
	}
	inv := make([]*mat.SymDense, rx.K)
	var err error
	for k, c := range covs {
		if inv[k], err = pinv(c); err != nil {
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
		var wt mat.Dense
		wt.Mul(total, inv[k])
		weights[k] = &wt
		m.W[k] = liftCombine(&wt, rx, 1/math.Sqrt(rx.Pk[k]))
	}
	m.Offset = centredOffset(rx, weights)
	return m, nil
}

// centredOffset returns, on a mean-centred link, the combined mean
//
//	b = Σ_k A_k m̂_k + (I − Σ_k A_k) m̄,  m̄ = (1/K) Σ_k m̂_k,
//
// of the decoded means m̂_k with consensus weights A_k (d×d; nil: the plain
// average m̄, A_k = I/K). For Gaussian subposteriors N(m_k, C_k) and Scott's
// weights A_k = (Σ_j C_j^{-1})^{-1} C_k^{-1}, Σ_k A_k = I and b is the global
// mean (Σ_j C_j^{-1})^{-1} Σ_k C_k^{-1} m_k up to the means' coding error,
// of variance Σ_k A_k diag(MeanVar[k]) A_kᵀ. The second term completes
// weights whose sum falls short of I (covariance estimates singular, the
// pseudo-inverse zero on some directions) with the plain average there.
// It returns nil on a link that is not centred.
func centredOffset(rx *channel.Received, a []*mat.Dense) []float64 {
	if rx.Mean == nil {
		return nil
	}
	d := rx.D
	avg := mat.NewVecDense(d, nil)
	for _, m := range rx.Mean {
		avg.AddVec(avg, mat.NewVecDense(d, m))
	}
	avg.ScaleVec(1/float64(len(rx.Mean)), avg)
	if a == nil {
		return avg.RawVector().Data
	}
	b := mat.NewVecDense(d, nil)
	b.CopyVec(avg)
	var t mat.VecDense
	for k, ak := range a {
		t.MulVec(ak, mat.NewVecDense(d, rx.Mean[k]))
		b.AddVec(b, &t)
		t.MulVec(ak, avg)
		b.SubVec(b, &t)
	}
	return b.RawVector().Data
}

// WGCMC is the wireless Gaussian consensus: under OMA eq: est WGCMC result,
// under NOMA eq: est WGCMC result NOMA, for an encoder E_k = √P_k B with
// BᵀB = l·I (docs/MATH.md note 4: on z_k = Bᵀy_k/l the d×d formulas hold with
// noise variance ν = N0/l). With the matched precoder it takes the decoded
// signals' noise covariance N_k per stream (wgcmcPrecoded, docs/MATH.md
// eq. (22.7)).
func WGCMC(rx *channel.Received) (Map, error) {
	if rx.Rotation != nil {
		return wgcmcPrecoded(rx)
	}
	nu := rx.CombinedNoise()
	if rx.Access == channel.NOMA {
		return wgcmcNOMA(rx, float64(rx.K)*rx.Pk[0], nu)
	}
	scale := make([]float64, rx.K)
	noise := make([]float64, rx.K)
	for k := range rx.K {
		scale[k], noise[k] = rx.Pk[k], nu
	}
	return wgcmcOMA(rx, scale, noise)
}

// WGCMCAware is WGCMC for a server that knows the statistics of the
// workers' channel-estimate errors (Received.CSIGain, CSINoise;
// docs/MATH.md eq. (20.5)): stream k carries a_k √P_k Bθ_k plus white
// noise of variance N0 + CSINoise[k] per real symbol, so the OMA formulas
// use a_k² P_k for P_k and ν_k = (N0 + CSINoise[k])/l for ν, and the NOMA
// ones P Σ_k a_k² for K P and ν = (N0 + Σ_k CSINoise[k])/l. Under perfect
// CSI (CSINoise nil) it is WGCMC.
func WGCMCAware(rx *channel.Received) (Map, error) {
	if rx.CSINoise == nil {
		return WGCMC(rx)
	}
	l := float64(rx.L)
	if rx.Access == channel.NOMA {
		noise, gain := rx.N0, 0.0
		for k := range rx.K {
			noise += rx.CSINoise[k]
			gain += rx.CSIGain[k] * rx.CSIGain[k]
		}
		return wgcmcNOMA(rx, gain*rx.Pk[0], noise/l)
	}
	scale := make([]float64, rx.K)
	noise := make([]float64, rx.K)
	for k := range rx.K {
		a := rx.CSIGain[k]
		scale[k], noise[k] = a*a*rx.Pk[k], (rx.N0+rx.CSINoise[k])/l
	}
	return wgcmcOMA(rx, scale, noise)
}

// wgcmcOMA: Ĉ_k = [Σ̂_{z_k} − νI]^+/P_k (eq: est: ck), and
// W̃_k = (Σ_j Ĉ_j^{-1})^{-1} Ĉ_k^{-1/2}(P_k Ĉ_k + νI)^{-1/2} (eq: asymp opt).
// On a mean-centred link z_k = √P_k(θ_k − m_k) + ñ_k has mean zero, as the
// formulas assume, and the map adds back b = Σ_k A_k m̂_k with Scott's
// weights on the same estimates, A_k = (Σ_j Ĉ_j^{-1})^{-1} Ĉ_k^{-1}
// (centredOffset): the means' consensus, not shrunk by the factor
// Ĉ_k^{1/2}(P_k Ĉ_k + νI)^{-1/2}√P_k that W̃_k applies to the fluctuations.
// scale[k] stands for P_k and noise[k] for ν on stream k.
func wgcmcOMA(rx *channel.Received, scale, noise []float64) (Map, error) {
	chat := make([]*mat.SymDense, rx.K)
	inv := make([]*mat.SymDense, rx.K)
	for k := range rx.K {
		cz, err := sampleCov(rx.Combine(k))
		if err != nil {
			return Map{}, err
		}
		c, err := positivePart(shiftDiag(cz, -noise[k]))
		if err != nil {
			return Map{}, err
		}
		c.ScaleSym(1/scale[k], c)
		chat[k] = c
		if inv[k], err = pinv(c); err != nil {
			return Map{}, err
		}
	}
	total, err := pinv(sum(inv))
	if err != nil {
		return Map{}, err
	}
	m := Map{W: make([]*mat.Dense, rx.K)}
	for k := range rx.K {
		pk, nu := scale[k], noise[k]
		a, err := spectral(chat[k], func(v float64) float64 {
			if v <= 0 {
				return 0
			}
			return 1 / math.Sqrt(v*(pk*v+nu))
		})
		if err != nil {
			return Map{}, err
		}
		var wt mat.Dense
		wt.Mul(total, a)
		m.W[k] = liftCombine(&wt, rx, 1)
	}
	if rx.Mean != nil {
		weights := make([]*mat.Dense, rx.K)
		for k := range rx.K {
			var ak mat.Dense
			ak.Mul(total, inv[k])
			weights[k] = &ak
		}
		m.Offset = centredOffset(rx, weights)
	}
	return m, nil
}

// wgcmcNOMA: Ĉ_0 = [Σ̂_z − νI]^+/(K P) (eq: est: ck noma) and
// W̃ = K^{-1/2} Ĉ_0^{1/2}(K P Ĉ_0 + νI)^{-1/2} (eq: asymp opt NOMA), with
// P = min_k P_k. Exact for homogeneous Gaussian subposteriors as S → ∞.
// On a mean-centred link the map adds back the consensus of the decoded
// means under the same homogeneity, b = (1/K) Σ_k m̂_k. kp stands for K P
// and nu for ν.
func wgcmcNOMA(rx *channel.Received, kp, nu float64) (Map, error) {
	cz, err := sampleCov(rx.Combine(0))
	if err != nil {
		return Map{}, err
	}
	c0, err := positivePart(shiftDiag(cz, -nu))
	if err != nil {
		return Map{}, err
	}
	c0.ScaleSym(1/kp, c0)
	sk := math.Sqrt(float64(rx.K))
	wt, err := spectral(c0, func(v float64) float64 {
		if v <= 0 {
			return 0
		}
		return math.Sqrt(v/(kp*v+nu)) / sk
	})
	if err != nil {
		return Map{}, err
	}
	return Map{W: []*mat.Dense{liftCombine(wt, rx, 1)}, Offset: centredOffset(rx, nil)}, nil
}

// Noiseless is classical CMC with Scott's weights on the workers' own
// samples (K matrices S×d) over an ideal link: the reference that shows
// what the channel costs. A worker whose samples are constant in a
// parameter is an error (Varying).
func Noiseless(samples []*mat.Dense) (*mat.Dense, error) {
	if err := Varying(samples); err != nil {
		return nil, err
	}
	rx := channel.Ideal(samples)
	m, err := GCMC(rx)
	if err != nil {
		return nil, err
	}
	return m.Apply(rx), nil
}

// Varying returns a *ConstantError for the first worker whose samples (at
// least two) take one value in a parameter, whose Scott weight would be
// zero there; nil when every worker's samples vary in every parameter.
func Varying(samples []*mat.Dense) error {
	for k, x := range samples {
		s, d := x.Dims()
		if s < 2 {
			continue
		}
		for j := range d {
			v := x.At(0, j)
			i := 1
			for i < s && x.At(i, j) == v {
				i++
			}
			if i == s {
				return &ConstantError{Worker: k, Param: j, Value: v}
			}
		}
	}
	return nil
}

// liftCombine turns a d×d map on z = c·Bᵀy/l into the d×m_r map on y:
// W = c · W̃ Bᵀ / l.
func liftCombine(wt mat.Matrix, rx *channel.Received, c float64) *mat.Dense {
	var w mat.Dense
	w.Mul(wt, rx.Basis().T())
	w.Scale(c/float64(rx.L), &w)
	return &w
}

func sum(ms []*mat.SymDense) *mat.SymDense {
	out := mat.NewSymDense(ms[0].SymmetricDim(), nil)
	for _, m := range ms {
		out.AddSym(out, m)
	}
	return out
}
