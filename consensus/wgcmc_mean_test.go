package consensus

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/wcmc-project/wcmc/channel"
)

// TestWGCMCShrinksAMeanItsNoiseModelDoesNotCover: WGCMC's weights
// (eq: asymp opt) are derived for zero-mean subposteriors: they match the
// second moments of the signals z_k = √P_k θ_k + ñ_k, not their means.
// Worker k's map is W̃_k = (Σ_j Ĉ_j^{-1})^{-1} Ĉ_k^{-1/2}(P_k Ĉ_k + νI)^{-1/2}
// = A_k Ĉ_k^{1/2}(P_k Ĉ_k + νI)^{-1/2} with Scott's weights
// A_k = (Σ_j Ĉ_j^{-1})^{-1} Ĉ_k^{-1}, so on signals with mean √P_k m_k the
// output mean is Σ_k W̃_k √P_k m_k = Σ_k A_k F_k m_k with
//
//	F_k = (Ĉ_k (Ĉ_k + (ν/P_k) I)^{-1})^{1/2},
//
// Scott's consensus of the means shrunk towards 0. For workers N(m, cI)
// the output mean is about f·m, f = mean_k (c/(c + ν/P_k))^{1/2}. Variance
// the server does not model (the residual interference of imperfect CSI,
// added here as white noise of variance e per symbol) inflates its
// estimate Ĉ_k = [Σ̂_{z_k} − νI]^+/P_k to c + e/P_k: the factor moves
// towards 1 and the output, whose covariance is (Σ_k Ĉ_k^{-1})^{-1},
// is over-dispersed by (c + e/P)/c.
func TestWGCMCShrinksAMeanItsNoiseModelDoesNotCover(t *testing.T) {
	const (
		d, k, s = 2, 4, 50000
		c       = 0.05 // every worker's subposterior N(m, cI)
		inflate = 4.4  // Ĉ/c with the unmodelled residual
	)
	m := mat.NewVecDense(d, []float64{3, -2})
	rng := rand.New(rand.NewPCG(11, 12))
	samples := make([]*mat.Dense, k)
	for w := range samples {
		x := mat.NewDense(s, d, nil)
		for i := range s {
			for j := range d {
				x.Set(i, j, m.AtVec(j)+math.Sqrt(c)*rng.NormFloat64())
			}
		}
		samples[w] = x
	}
	// P_k ≈ P/(‖m‖² + d c): this SNR puts ν/P_k ≈ c, f ≈ 2^{-1/2}.
	cfg := channel.Config{Access: channel.OMA, Fading: channel.Flat, Repetition: 1, Power: 1, SNRdB: 21.2}
	rx, err := channel.Transmit(rng, cfg, samples)
	if err != nil {
		t.Fatal(err)
	}
	nu := rx.CombinedNoise()
	var pMean float64
	for _, p := range rx.Pk {
		pMean += p / k
	}

	for _, tc := range []struct {
		name string
		e    float64 // variance per symbol of the unmodelled residual
	}{
		{"the noise as modelled", 0},
		{"an unmodelled residual", (inflate - 1) * c * pMean},
	} {
		r := *rx
		r.Y = make([]*mat.Dense, k)
		for w, y := range rx.Y {
			r.Y[w] = mat.DenseCopyOf(y)
			if tc.e > 0 {
				raw := r.Y[w].RawMatrix().Data
				for i := range raw {
					raw[i] += math.Sqrt(tc.e) * rng.NormFloat64()
				}
			}
		}
		wg, err := WGCMC(&r)
		if err != nil {
			t.Fatal(err)
		}
		out := wg.Apply(&r)

		// Predicted: Ĉ_k → c + e/P_k as S grows.
		var f, chat float64
		for _, p := range rx.Pk {
			ck := c + tc.e/p
			f += math.Sqrt(ck/(ck+nu/p)) / k
			chat += ck / k
		}
		mean := make([]float64, d)
		var trCov float64
		for j := range d {
			col := mat.Col(nil, j, out)
			mean[j] = stat.Mean(col, nil)
			trCov += stat.Variance(col, nil)
		}
		proj := mat.Dot(mat.NewVecDense(d, mean), m) / mat.Dot(m, m)
		dispersion := trCov / (d * c / k) // against the global posterior's c/K per coordinate

		// Monte Carlo error of proj: the output mean along m/‖m‖ has variance
		// (Ĉ/K)/S, i.e. a standard error √(Ĉ/(K S))/‖m‖ on proj; and Ĉ_k's
		// relative error, of order (1 + ν/(P_k Ĉ_k))·√(2/S), moves each F_k by
		// half of it times (ν/P_k)/(Ĉ_k + ν/P_k), averaged over K workers.
		nuP := nu / pMean
		seMean := math.Sqrt(chat/(k*s)) / mat.Norm(m, 2)
		seF := f * 0.5 * nuP / (chat + nuP) * (1 + nuP/chat) * math.Sqrt(2.0/s) / math.Sqrt(k)
		tol := 4 * math.Hypot(seMean, seF)
		// The output covariance estimates (Σ_k Ĉ_k^{-1})^{-1} ≈ Ĉ/K from S
		// draws (relative error √(2/S) per coordinate) through Ĉ_k's own
		// (the same order, averaged over K).
		tolDisp := 4 * (chat / c) * math.Sqrt(2.0/s) * (1 + (1+nuP/chat)/math.Sqrt(k))
		t.Logf("%s: projection of the output mean on m %.4f, predicted %.4f (±%.4f); dispersion %.3f, predicted %.3f (±%.3f)",
			tc.name, proj, f, tol, dispersion, chat/c, tolDisp)
		if math.Abs(proj-f) > tol {
			t.Errorf("%s: projection of the output mean on m %.4f, want f = %.4f ± %.4f", tc.name, proj, f, tol)
		}
		if math.Abs(dispersion-chat/c) > tolDisp {
			t.Errorf("%s: output dispersion %.3f of the global posterior's, want Ĉ/c = %.3f ± %.3f", tc.name, dispersion, chat/c, tolDisp)
		}
	}
}
