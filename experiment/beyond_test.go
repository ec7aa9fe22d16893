package experiment

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/metric"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

// beyondSpecs are the experiments beyond the paper.
func beyondSpecs() []runner.Spec {
	var out []runner.Spec
	for _, s := range All() {
		if s.Figure == FigureBeyond {
			out = append(out, s)
		}
	}
	return out
}

// runTask runs one task of spec at the sweep point x with sets applied
// (quick settings), from the generator PCG(1, 2), with Setup from PCG(3, 4).
func runTask(t *testing.T, spec runner.Spec, x string, sets ...string) runner.TaskOutput {
	t.Helper()
	v, _, err := runner.Resolve(spec, append(sets, spec.X+"="+x), true, 1)
	if err != nil {
		t.Fatalf("%s: %v", spec.ID, err)
	}
	var shared any
	if spec.Setup != nil {
		if shared, err = spec.Setup(v, rand.New(rand.NewPCG(3, 4))); err != nil {
			t.Fatal(err)
		}
	}
	out, err := spec.Run(runner.Task{Params: v, X: v.XList()[0], Rng: rand.New(rand.NewPCG(1, 2)), Shared: shared})
	if err != nil {
		t.Fatalf("%s at %s = %s: %v", spec.ID, spec.X, x, err)
	}
	return out
}

// Every experiment beyond the paper runs at its quick size and reports
// every metric of every scheme it runs, the digital baselines only where
// it asks for them; none of them is part of the paper's reproduction.
func TestBeyondQuickRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the experiments")
	}
	specs := beyondSpecs()
	if len(specs) != 11 {
		t.Fatalf("%d experiments beyond the paper", len(specs))
	}
	for _, spec := range specs {
		if strings.HasPrefix(spec.ID, "centring") {
			continue // paired arms, MNIST data: TestCentringPaired
		}
		res, err := runner.Run(context.Background(), spec, runner.Options{Seed: 7, Quick: true, Sets: []string{"trials=1"}})
		if err != nil {
			t.Fatalf("%s: %v", spec.ID, err)
		}
		want := wirelessSchemes
		if spec.ID == "csi-error-probit" || spec.ID == "coherence" || spec.ID == "rx-antennas" {
			want = probitSchemes
		}
		if res.Values.Bool("digital") {
			want = withDigital(want)
		}
		if strings.HasPrefix(spec.ID, "csi-error") || spec.ID == "coherence" {
			want = append(slices.Clone(want), scheme.CSIAware...) // imperfect CSI at some point of the sweep
		}
		got := map[string]bool{}
		for _, task := range res.Tasks {
			for _, r := range task.Rows {
				got[r.Scheme+"/"+r.Metric] = true
				if !slices.Contains(want, r.Scheme) {
					t.Errorf("%s: rows of %s", spec.ID, r.Scheme)
				}
			}
		}
		for _, s := range want {
			for _, m := range spec.Metrics {
				if !got[s+"/"+m] {
					t.Errorf("%s: no %s of %s (notes %v)", spec.ID, m, s, res.Notes)
				}
			}
		}
	}
}

// At the value that turns its model off, each experiment beyond the paper
// gives, task for task, the numbers of the paper's experiment with the same
// settings: the new parameters change nothing at their defaults, and the
// digital baselines change no analog number.
func TestBeyondOffEqualsPaper(t *testing.T) {
	gauss, _ := Lookup("gauss-snr")
	probit, _ := Lookup("probit-snr")
	small := []string{"N=300", "n_test=50", "ref_samples=200", "T=100", "K=5", "fresh_factor=1", "lbfgs_iters=30"}
	for _, c := range []struct {
		id, off string
		paper   runner.Spec
		x       string // the paper experiment's snr_db
		sets    []string
	}{
		{"csi-error-gauss", "0", gauss, "20", []string{"fading=rayleigh"}},
		{"snr-spread", "0", gauss, "10", nil},
		{"power-control", "0", gauss, "10", []string{"fading=rayleigh"}},
		{"analog-vs-digital", "10", gauss, "10", nil},
		{"analog-vs-digital-uses", "1", gauss, "10", nil},
		{"csi-error-probit", "0", probit, "20", small},
		{"coherence", "1", probit, "10", append(slices.Clone(small), "pilots=false")},
		{"rx-antennas", "1", probit, "-5", append(slices.Clone(small), "physical=false")},
	} {
		spec, err := Lookup(c.id)
		if err != nil {
			t.Fatal(err)
		}
		sets := c.sets
		if spec.ID == "csi-error-probit" {
			sets = slices.Concat(sets, []string{"snr_db=20"})
		}
		beyond := runTask(t, spec, c.off, sets...)
		paper := runTask(t, c.paper, c.x, c.sets...)
		var analog []runner.Row
		for _, r := range beyond.Rows {
			if !scheme.IsDigital(r.Scheme) {
				analog = append(analog, r)
			}
		}
		if len(paper.Rows) == 0 || !reflect.DeepEqual(analog, paper.Rows) {
			t.Errorf("%s at %s: rows differ from %s's:\n%v\n%v", c.id, c.off, c.paper.ID, analog, paper.Rows)
		}
		if digital := len(analog) < len(beyond.Rows); digital != strings.HasPrefix(c.id, "analog-vs-digital") {
			t.Errorf("%s: %d rows, %d of analog schemes", c.id, len(beyond.Rows), len(analog))
		}
	}
}

// The digital baselines run only when digital=true, and naming one
// without it is an error that says so.
func TestDigitalOnlyWhenAsked(t *testing.T) {
	spec, _ := Lookup("gauss-snr")
	out := runTask(t, spec, "10")
	for _, r := range out.Rows {
		if scheme.IsDigital(r.Scheme) {
			t.Fatalf("gauss-snr at its defaults reported %s", r.Scheme)
		}
	}
	if _, _, err := runner.Resolve(spec, []string{"schemes=gcmc,digital-gcmc"}, true, 1); err == nil || !strings.Contains(err.Error(), "digital=true") {
		t.Errorf("digital-gcmc without digital=true: %v", err)
	}
	out = runTask(t, spec, "10", "digital=true", "schemes=digital-wgcmc-noma")
	if len(out.Rows) != len(spec.Metrics) || out.Rows[0].Scheme != scheme.DigitalWGCMCNOMA {
		t.Errorf("schemes=digital-wgcmc-noma: rows %v", out.Rows)
	}
	// Digital WVCMC learns its map under the default protocol and records
	// the fit beside the link's budget; without that protocol it is a skip.
	out = runTask(t, spec, "10", "digital=true", "schemes=digital-wvcmc-noma")
	info := out.Info[scheme.DigitalWVCMCNOMA]
	if len(out.Rows) != len(spec.Metrics) || out.Rows[0].Scheme != scheme.DigitalWVCMCNOMA || info["optimizer"] == nil || info["bits_per_sample"] == nil {
		t.Errorf("schemes=digital-wvcmc-noma: rows %v, info %v", out.Rows, info)
	}
	out = runTask(t, spec, "10", "digital=true", "schemes=digital-wvcmc-oma", "protocols=paper")
	if len(out.Rows) != 0 || len(out.Skipped) != 1 || !strings.Contains(out.Skipped[0].Reason, "default protocol") {
		t.Errorf("digital-wvcmc-oma without the default protocol: rows %v, skipped %v", out.Rows, out.Skipped)
	}
	// The digital link models imperfect CSI with zf only: the others are
	// refused before any work (the charged pilots and block fading:
	// TestPilotsParametersChecked).
	if _, _, err := runner.Resolve(spec, []string{"digital=true", "fading=rayleigh", "csi_error=0.1"}, true, 1); err != nil {
		t.Errorf("digital with imperfect CSI and zf: %v", err)
	}
	if _, _, err := runner.Resolve(spec, []string{"digital=true", "fading=rayleigh", "csi_error=0.1", "digital_capacity=isotropic"}, true, 1); err == nil || !strings.Contains(err.Error(), "imperfect CSI") {
		t.Errorf("digital with imperfect CSI and isotropic capacity: %v", err)
	}
}

// Bad combinations of the channel parameters fail before any work, each
// with a message that names the problem.
func TestBeyondParametersChecked(t *testing.T) {
	spec, _ := Lookup("gauss-snr")
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"csi_error=0.1"}, "flat fading"},
		{[]string{"snr_offsets_db=0,3"}, "2 offsets for K = 10"},
		{[]string{"snr_offsets_db=0,x"}, "not a number"},
		{[]string{"snr_spread_db=10", "d_min=1", "d_max=10", "path_exponent=3"}, "choose one"},
		{[]string{"peak_power=20"}, "rayleigh"},
		{[]string{"fading=rician", "k_factor=2"}, "complex"},
		{[]string{"fading=rician", "complex=true", "k_factor=1e300"}, "K-factor = 1e+300: must be in [0, 1e+06]"},
		{[]string{"fading=rayleigh", "csi_error=1e300"}, "σ_e² = 1e+300: must be in [0, 1e+10]"},
		{[]string{"snr_offsets_db=1e300,0,0,0,0,0,0,0,0,0"}, "offset of worker 1 = 1e+300 dB: must be in [-100, 100]"},
		{[]string{"fading=rayleigh", "pilot_len=20", "pilot_snr_db=-1e300"}, "pilot SNR = -1e+300 dB: must be in [-100, 100]"},
		{[]string{"snr_spread_db=1e300"}, "snr_spread_db = 1e+300 dB: must be at most 200"},
	} {
		_, _, err := runner.Resolve(spec, c.sets, true, 1)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error mentioning %q", c.sets, err, c.want)
		}
	}
}

// trialGains: an SNR spread Δ gives offsets evenly spaced over [−Δ/2, Δ/2]
// dB in a random order (mean 0 dB); the path-loss distances are drawn once
// per trial, so the OMA and NOMA links of a trial share them.
func TestTrialGains(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	link, err := trialGains(rng, channel.Config{}, 12, 5)
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Clone(link.Gains.OffsetDB)
	slices.Sort(got)
	if !reflect.DeepEqual(got, []float64{-6, -3, 0, 3, 6}) {
		t.Errorf("offsets %v", link.Gains.OffsetDB)
	}
	if same, _ := trialGains(rng, channel.Config{SNRdB: 3}, 0, 5); !reflect.DeepEqual(same, channel.Config{SNRdB: 3}) {
		t.Errorf("no spread, no path loss: %+v", same)
	}
	spec, _ := Lookup("gauss-snr")
	out := runTask(t, spec, "10", "d_min=5", "d_max=50", "path_exponent=3", "schemes=wgcmc-oma,wgcmc-noma")
	oma, noma := out.Info["link-oma"]["gain"], out.Info["link-noma"]["gain"]
	if oma == nil || !reflect.DeepEqual(oma, noma) {
		t.Errorf("OMA gains %v, NOMA gains %v", oma, noma)
	}
}

// Truncated inversion: the schemes see only the blocks delivered, and
// a peak below what the samples need is a skip that names the minimum.
func TestPowerControlOutage(t *testing.T) {
	spec, _ := Lookup("power-control")
	out := runTask(t, spec, "60")
	lost, ok := out.Info["link-noma"]["outage"].([]float64)
	if !ok || slices.Max(lost) == 0 {
		t.Fatalf("NOMA outage %v", out.Info["link-noma"]["outage"])
	}
	if s := out.Info["link-noma"]["samples_per_stream"].(int); s >= 2000 {
		t.Errorf("NOMA delivered all %d blocks despite outage %v", s, lost)
	}
	out = runTask(t, spec, "2")
	if len(out.Rows) != len(spec.Metrics) || len(out.Skipped) != 5 || !strings.Contains(out.Skipped[0].Reason, "need a peak power of at least") {
		t.Errorf("peak 2: rows %v, skipped %v", out.Rows, out.Skipped)
	}
}

// The exact fresh second moment under imperfect CSI (docs/BEYOND.md
// (12.9), also with charged pilots) and of the test-channel digital
// stream (16.7) agree with the
// moment measured on many fresh signals, within 5 Monte Carlo standard
// errors entry by entry, and the law without the model (perfect CSI; a
// decoded sample equal to the sample) does not.
func TestFreshMomentMatchesMeasured(t *testing.T) {
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
	link := channel.Config{Fading: channel.Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: 20, CSI: channel.CSI{ErrorVar: 0.1},
		Gains: channel.LargeScale{OffsetDB: []float64{0, -4, 3}}}
	enabled := map[string]bool{SchemeWGCMCOMA: true, SchemeWGCMCNOMA: true, scheme.DigitalGCMC: true, scheme.WGCMCOMACSI: true, scheme.WGCMCNOMACSI: true}
	digitalLink := link
	digitalLink.CSI = channel.CSI{}
	check := func(l channel.Config, names ...string) {
		cfg := cmcConfig{link: l, enabled: enabled, omaPerWkr: n, nomaPerWk: n, digital: &digitalConfig{quantizer: digitalTestChannel}}
		out, err := runCMC(rand.New(rand.NewPCG(9, 10)), samples, cfg)
		if err != nil {
			t.Fatal(err)
		}
		draws := make([]*mat.Dense, k)
		for i, g := range p.sub {
			draws[i] = drawGaussian(rng, g, fresh)
		}
		thetas, err := out.applyFresh(rand.New(rand.NewPCG(11, 12)), l, draws, fresh, fresh)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			so := out.schemes[name]
			exact, ok := p.freshMoment(out, so, l)
			if !ok {
				t.Fatalf("%s: no closed form", name)
			}
			measured, se := momentAndError(thetas[name])
			// The law that ignores the model tested: perfect CSI, or a
			// decoded sample equal to the sample (N0 = 0 of channel.Ideal).
			perfect, _ := p.freshMoment(out, so, digitalLink)
			if scheme.IsDigital(name) {
				ds := out.digital[0]
				ds.quant = digitalAdditive
				perfect, _ = p.freshMoment(out, so, l)
				ds.quant = digitalTestChannel
			}
			var worst, perfectWorst float64
			for i := range 3 {
				for j := range 3 {
					worst = math.Max(worst, math.Abs(exact.At(i, j)-measured.At(i, j))/se.At(i, j))
					perfectWorst = math.Max(perfectWorst, math.Abs(perfect.At(i, j)-measured.At(i, j))/se.At(i, j))
				}
			}
			t.Logf("%s: exact vs measured within %.1f standard errors; the law without the model at %.1f", name, worst, perfectWorst)
			if worst > 5 {
				t.Errorf("%s: exact and measured fresh moments differ by %.1f standard errors\n%v\n%v", name, worst, mat.Formatted(exact), mat.Formatted(measured))
			}
			if perfectWorst < 10 {
				t.Errorf("%s: the law without the model is within %.1f standard errors: the test cannot tell the model from it", name, perfectWorst)
			}
		}
	}
	check(link, SchemeWGCMCOMA, SchemeWGCMCNOMA)
	// Charged pilots (10 dB below the data) set the CSI of the MMSE model;
	// the pilot uses leave fewer learning samples, not another law. The
	// CSI-aware maps are tested on the same law.
	pilots := link
	pilots.CSI, pilots.Pilots = channel.CSI{}, channel.Pilots{On: true, BoostDB: -10}
	check(pilots, SchemeWGCMCOMA, SchemeWGCMCNOMA, scheme.WGCMCOMACSI, scheme.WGCMCNOMACSI)
	// At 0 dB the digital link carries about 3 bits per sample of d = 3.
	digitalLink.SNRdB = 0
	check(digitalLink, scheme.DigitalGCMC)
}

// Where the link has no closed-form fresh moment (imperfect CSI with
// Rician fading, a uniform quantiser), err2_fresh is measured on fresh
// signals instead: the schemes still report it.
func TestMeasuredFreshFallback(t *testing.T) {
	spec, _ := Lookup("gauss-snr")
	for _, sets := range [][]string{
		{"fading=rician", "complex=true", "k_factor=3", "csi_error=0.05", "schemes=wgcmc-oma,wgcmc-noma", "T=500"},
		{"digital=true", "digital_quantizer=uniform", "schemes=digital-gcmc", "T=500"},
	} {
		out := runTask(t, spec, "10", sets...)
		fresh := 0
		for _, r := range out.Rows {
			if r.Metric == "err2_fresh" && r.Value > 0 && !math.IsInf(r.Value, 0) {
				fresh++
			}
		}
		if want := strings.Count(sets[len(sets)-2], ",") + 1; fresh != want {
			t.Errorf("%v: %d err2_fresh rows, want %d (rows %v, skipped %v)", sets, fresh, want, out.Rows, out.Skipped)
		}
	}
}

// momentAndError returns the second moment (1/n) Σ θθᵀ of the rows of
// theta and the standard error of each entry.
func momentAndError(theta *mat.Dense) (m, se *mat.Dense) {
	n, d := theta.Dims()
	m, se = mat.NewDense(d, d, nil), mat.NewDense(d, d, nil)
	sm := metric.SecondMoment(theta)
	for i := range d {
		for j := range d {
			var ss float64
			for s := range n {
				dev := theta.At(s, i)*theta.At(s, j) - sm.At(i, j)
				ss += dev * dev
			}
			m.Set(i, j, sm.At(i, j))
			se.Set(i, j, math.Sqrt(ss/float64(n-1)/float64(n)))
		}
	}
	return m, se
}

// freshMoment returns the exact second moment E[θθᵀ] of the learned map's
// output on fresh signals of the link it was learned on (freshLaw); ok is
// false where that link has no closed form.
func (p *gaussProblem) freshMoment(out *cmcOutput, so *schemeOutput, link channel.Config) (m *mat.SymDense, ok bool) {
	law, ok := p.freshLaw(out, so, link)
	if !ok {
		return nil, false
	}
	return law.moment(), true
}
