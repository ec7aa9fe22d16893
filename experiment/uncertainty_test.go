package experiment

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/metric"
)

// The fresh uncertainty metrics from the exact law of a learned map's
// output (freshLaw) agree with those measured on many fresh signals within
// five Monte Carlo standard errors on a flat link, where the output is
// Gaussian. Under imperfect CSI the output is a heavy-tailed scale mixture
// (one of 200000 fresh outputs reaches θ² ≈ 16000 against a variance of
// 0.36), whose measured covariance no Gaussian standard error bounds; its
// exact covariance is checked against the measured one, with the
// empirical standard errors, by TestFreshMomentMatchesMeasured, and here
// mean_err, cov_err and w2 come from it and coverage90 from the measured
// output (freshUncertainty).
func TestFreshUncertaintyMatchesMeasured(t *testing.T) {
	const k, n, fresh = 3, 600, 200000
	p, err := newGaussProblem(gaussConfig{d: 3, k: k})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	samples := make([]*mat.Dense, k)
	for i, g := range p.sub {
		samples[i] = drawGaussian(rng, g, n)
	}
	c := p.global.Cov()
	trC, normC := mat.Trace(c), mat.Norm(c, 2)
	z := distuv.UnitNormal.Quantile(0.95)
	enabled := map[string]bool{SchemeWGCMCOMA: true, SchemeWGCMCNOMA: true}
	for _, l := range []struct {
		name string
		link channel.Config
	}{
		{"flat", channel.Config{Fading: channel.Flat, Repetition: 1, Power: 1, SNRdB: 5}},
		{"csi", channel.Config{Fading: channel.Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: 20, CSI: channel.CSI{ErrorVar: 0.1}}},
	} {
		cfg := cmcConfig{link: l.link, enabled: enabled, omaPerWkr: n, nomaPerWk: n}
		out, err := runCMC(rand.New(rand.NewPCG(9, 10)), samples, cfg)
		if err != nil {
			t.Fatal(err)
		}
		draws := make([]*mat.Dense, k)
		for i, g := range p.sub {
			draws[i] = drawGaussian(rng, g, fresh)
		}
		thetas, err := out.applyFresh(rand.New(rand.NewPCG(11, 12)), l.link, draws, fresh, fresh)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{SchemeWGCMCOMA, SchemeWGCMCNOMA} {
			law, ok := p.freshLaw(out, out.schemes[s], l.link)
			if !ok || law.gaussian != (l.name == "flat") {
				t.Fatalf("%s %s: closed form %v, gaussian %v", l.name, s, ok, law.gaussian)
			}
			exact, err := p.freshUncertainty(law, true, thetas[s])
			if err != nil {
				t.Fatal(err)
			}
			measured, err := p.ref.Score(thetas[s])
			if err != nil {
				t.Fatal(err)
			}
			if !law.gaussian {
				g, err := p.ref.ScoreGaussian(make([]float64, 3), law.cov)
				if err != nil {
					t.Fatal(err)
				}
				if exact.MeanErr != g.MeanErr || exact.CovErr != g.CovErr || exact.W2 != g.W2 || exact.Coverage90 != measured.Coverage90 {
					t.Errorf("%s %s: %+v, want mean_err, cov_err, w2 of the law %+v and the measured coverage90 %g", l.name, s, exact, g, measured.Coverage90)
				}
				continue
			}
			// Standard errors of the measured values (bounds, as in
			// metric's TestScoreSamplesClosedForm): the sample mean has
			// variance Σ_ii/n, the sample covariance E‖Ĉ − Σ‖_F² =
			// ((tr Σ)² + ‖Σ‖_F²)/(n − 1), W₂ moves by at most W₂ between
			// the output's law and its fit, of mean square ≤ tr Σ (d + 5)/(4n).
			sigma := law.cov
			trS, normS := mat.Trace(sigma), mat.Norm(sigma, 2)
			var meanSE, coverSE float64
			for i := range 3 {
				sdOut, sdRef := math.Sqrt(sigma.At(i, i)), math.Sqrt(c.At(i, i))
				meanSE = math.Max(meanSE, sdOut/sdRef/math.Sqrt(fresh))
				// Each endpoint m ± z sd moves by sd √(p(1−p)/n)/φ(z); the
				// reference mass by its density there times that.
				end := z * sdOut / sdRef
				qse := sdOut / sdRef * math.Sqrt(0.05*0.95/fresh) / distuv.UnitNormal.Prob(z)
				coverSE += 2 * distuv.UnitNormal.Prob(end) * qse / 3
			}
			covSE := math.Sqrt((trS*trS+normS*normS)/(fresh-1)) / normC
			w2SE := math.Sqrt(trS * 8 / (4 * fresh) / trC)
			for _, m := range []struct {
				name            string
				exact, measured float64
				se              float64
			}{
				{"mean_err", exact.MeanErr, measured.MeanErr, meanSE},
				{"cov_err", exact.CovErr, measured.CovErr, covSE},
				{"w2", exact.W2, measured.W2, w2SE},
				{"coverage90", exact.Coverage90, measured.Coverage90, coverSE},
			} {
				if math.Abs(m.exact-m.measured) > 5*m.se {
					t.Errorf("%s %s: %s exact %g, measured %g (standard error %g)", l.name, s, m.name, m.exact, m.measured, m.se)
				}
			}
		}
	}
}

// The uncertainty metrics' names follow metric.Uncertainty's fields.
func TestUncertaintyRows(t *testing.T) {
	rows := uncertaintyRows("s", "_fresh", metric.Uncertainty{MeanErr: 1, CovErr: 2, Coverage90: 3, W2: 4, Err2Scaled: 5}, 5)
	want := []string{"mean_err_fresh", "cov_err_fresh", "coverage90_fresh", "w2_fresh", "err2_scaled_fresh"}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i, r := range rows {
		if r.Metric != want[i] || r.Value != float64(i+1) || r.X != 5 || r.Scheme != "s" {
			t.Errorf("row %d: %+v", i, r)
		}
	}
}
