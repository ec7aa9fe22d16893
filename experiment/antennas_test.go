package experiment

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

// TestRxAntennasOffGolden: one receive antenna, set explicitly, gives bit
// for bit the paper's numbers recorded before the option existed.
func TestRxAntennasOffGolden(t *testing.T) {
	checkPaperGolden(t, "rx_antennas=1")
}

// Bad receive-antenna settings fail before any work, each with a message
// that names the problem.
func TestRxAntennasParametersChecked(t *testing.T) {
	spec, _ := Lookup("gauss-snr")
	ray := "fading=rayleigh"
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"rx_antennas=0"}, "rx_antennas"},
		{[]string{"rx_antennas=65"}, "at most 64"},
		{[]string{ray, "complex=true", "rx_antennas=2"}, "complex channel"},
		{[]string{ray, "peak_power=40", "rx_antennas=2"}, "truncated inversion"},
		{[]string{"digital=true", "rx_antennas=2"}, "digital baselines"},
		{[]string{"repetition=500", "rx_antennas=2"}, "receive antennas, more than 4096"},
	} {
		_, _, err := runner.Resolve(spec, c.sets, true, 1)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error mentioning %q", c.sets, err, c.want)
		}
	}
}

// With N_r receive antennas an experiment runs every scheme, its schemes
// see as many signals as with one, and the power scales it records are
// those of one antenna times g(1)/g(N_r), the combined channel's array
// gain (docs/MATH.md (21.4)): N_r on flat fading, the table on Rayleigh
// fading, with the NOMA beamformer shared by the K workers.
func TestRxAntennasInExperiments(t *testing.T) {
	spec, _ := Lookup("gauss-snr")
	const k, d = 10, 5
	for _, fading := range []string{"flat", "rayleigh"} {
		sets := []string{"fading=" + fading, "T=400", "lbfgs_iters=20"}
		one := runTask(t, spec, "0", sets...)
		many := runTask(t, spec, "0", append(sets, "rx_antennas=3")...)
		seen := map[string]bool{}
		for _, r := range many.Rows {
			seen[r.Scheme] = true
		}
		for _, s := range wirelessSchemes {
			if !seen[s] {
				t.Errorf("%s, N_r = 3: no rows of %s (skipped %v)", fading, s, many.Skipped)
			}
		}
		f, _ := channel.ParseFading(fading)
		link := channel.Config{Fading: f, Repetition: 1, ExtraTx: 2, Power: 1, RxAntennas: 3}
		for name, workers := range map[string]int{"link-oma": 1, "link-noma": k} {
			p1, _ := one.Info[name]["Pk"].([]float64)
			p3, _ := many.Info[name]["Pk"].([]float64)
			gain := link.InvGramMean() / link.CombinedInvGram(d, workers)
			if len(p1) != len(p3) || len(p1) == 0 {
				t.Fatalf("%s %s: P_k %v and %v", fading, name, p1, p3)
			}
			for i := range p1 {
				if math.Abs(p3[i]/p1[i]-gain) > 1e-12*gain {
					t.Errorf("%s %s, worker %d: P_k ratio %g, want g(1)/g(3) = %g", fading, name, i+1, p3[i]/p1[i], gain)
				}
			}
			if one.Info[name]["samples_per_stream"] != many.Info[name]["samples_per_stream"] {
				t.Errorf("%s %s: %v signals per stream with N_r = 3, %v with one", fading, name, many.Info[name]["samples_per_stream"], one.Info[name]["samples_per_stream"])
			}
		}
	}
}

// TestFreshMomentWithAntennas: with N_r = 2 receive antennas and charged
// pilots (the physical chain), the exact fresh second moment of the WGCMC
// maps, which uses the combined channel's g in BEYOND.md (12.9)
// (docs/MATH.md (21.5)), matches 40,000 fresh signals per worker within 5
// standard errors, while the law with one antenna's g is at least 10 away.
func TestFreshMomentWithAntennas(t *testing.T) {
	const k, n, fresh = 3, 600, 40000
	p, err := newGaussProblem(gaussConfig{d: 3, k: k})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(17, 18))
	samples := make([]*mat.Dense, k)
	for i, g := range p.sub {
		samples[i] = drawGaussian(rng, g, n)
	}
	link := channel.Config{Fading: channel.Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: 20, RxAntennas: 2,
		Pilots: channel.Pilots{On: true, BoostDB: -15}}
	enabled := map[string]bool{SchemeWGCMCOMA: true, scheme.WGCMCOMACSI: true}
	out, err := runCMC(rand.New(rand.NewPCG(19, 20)), samples, cmcConfig{link: link, enabled: enabled, omaPerWkr: n, nomaPerWk: n})
	if err != nil {
		t.Fatal(err)
	}
	draws := make([]*mat.Dense, k)
	for i, g := range p.sub {
		draws[i] = drawGaussian(rng, g, fresh)
	}
	thetas, err := out.applyFresh(rand.New(rand.NewPCG(21, 22)), link, draws, fresh, fresh)
	if err != nil {
		t.Fatal(err)
	}
	single := link
	single.RxAntennas = 1
	for name := range enabled {
		so := out.schemes[name]
		exact, ok := p.freshMoment(out, so, link)
		if !ok {
			t.Fatalf("%s: no closed form", name)
		}
		wrong, _ := p.freshMoment(out, so, single)
		measured, se := momentAndError(thetas[name])
		var worst, wrongWorst float64
		for i := range 3 {
			for j := range 3 {
				worst = math.Max(worst, math.Abs(exact.At(i, j)-measured.At(i, j))/se.At(i, j))
				wrongWorst = math.Max(wrongWorst, math.Abs(wrong.At(i, j)-measured.At(i, j))/se.At(i, j))
			}
		}
		t.Logf("%s: exact vs measured within %.1f standard errors; with one antenna's g at %.1f", name, worst, wrongWorst)
		if worst > 5 {
			t.Errorf("%s: exact and measured fresh moments differ by %.1f standard errors\n%v\n%v", name, worst, mat.Formatted(exact), mat.Formatted(measured))
		}
		if wrongWorst < 10 {
			t.Errorf("%s: one antenna's law is within %.1f standard errors: the test cannot tell the model from it", name, wrongWorst)
		}
	}
}
