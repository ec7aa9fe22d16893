package experiment

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/digital"
	"github.com/wcmc-project/wcmc/scheme"
)

// analogDigitalGolden is one task of analog-vs-digital (every analog scheme
// and every digital baseline) with the hash of its err2 and err2_fresh
// rows, recorded with gonum's BLAS before the matched precoder and the
// practical digital options existed.
var analogDigitalGolden = struct {
	x    string
	sets []string
	want uint64
}{"5", []string{"T=200", "lbfgs_iters=30"}, 0x6f55df5155826b3c}

// checkAnalogDigitalGolden checks analogDigitalGolden at its settings and
// with off added to them.
func checkAnalogDigitalGolden(t *testing.T, off ...string) {
	t.Helper()
	saved := blas64.Implementation()
	blas64.Use(gonum.Implementation{})
	t.Cleanup(func() { blas64.Use(saved) })
	spec, err := Lookup("analog-vs-digital")
	if err != nil {
		t.Fatal(err)
	}
	c := analogDigitalGolden
	for _, sets := range [][]string{c.sets, slices.Concat(c.sets, off)} {
		if got := rowsHash(runTask(t, spec, c.x, sets...), "err2", "err2_fresh"); got != c.want {
			t.Errorf("analog-vs-digital at %s %v: hash %#x, want %#x", c.x, sets, got, c.want)
		}
	}
}

// TestAnalogDigitalGolden: analog-vs-digital is bit for bit what it was
// before the matched precoder and the practical digital options.
func TestAnalogDigitalGolden(t *testing.T) {
	checkAnalogDigitalGolden(t)
}

// TestPrecoderOffGolden: with the identity precoder and the ideal digital
// link set explicitly, the paper's experiments (the tasks of paperGolden)
// and analog-vs-digital give bit for bit the numbers recorded before the
// options existed.
func TestPrecoderOffGolden(t *testing.T) {
	checkPaperGolden(t, "precoder=identity")
	checkAnalogDigitalGolden(t, "precoder=identity", "gap_db=0", "blocklength=0", "error_prob=1e-3")
}

// On a link with the whiten precoder (Rayleigh fading simulated
// physically, l = 2, unequal gains), the closed-form fresh second moment of
// the WGCMC outputs (freshLaw, through the precoded encoders) matches the
// moment measured on 200,000 fresh signals within 5 Monte Carlo standard
// errors entry by entry, and the law of the identity encoders does not.
func TestMatchedFreshMoment(t *testing.T) {
	const k, n, fresh = 3, 600, 200000
	p, err := newGaussProblem(gaussConfig{d: 3, k: k})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(17, 18))
	samples := make([]*mat.Dense, k)
	for i, g := range p.sub {
		samples[i] = drawGaussian(rng, g, n)
	}
	link := channel.Config{Fading: channel.Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: 5, Physical: true,
		Gains: channel.LargeScale{OffsetDB: []float64{0, -4, 3}}, Precoder: channel.Whiten}
	enabled := map[string]bool{SchemeGCMC: true, SchemeWGCMCOMA: true, SchemeWGCMCNOMA: true}
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
	for _, name := range []string{SchemeGCMC, SchemeWGCMCOMA, SchemeWGCMCNOMA} {
		so := out.schemes[name]
		if so.rx.Rotation == nil {
			t.Fatalf("%s: learned on a link without the precoder", name)
		}
		exact, ok := p.freshMoment(out, so, link)
		if !ok {
			t.Fatalf("%s: no closed form", name)
		}
		rot, gain := so.rx.Rotation, so.rx.DirGain
		so.rx.Rotation, so.rx.DirGain = nil, nil
		plain, _ := p.freshMoment(out, so, link)
		so.rx.Rotation, so.rx.DirGain = rot, gain
		measured, se := momentAndError(thetas[name])
		var worst, plainWorst float64
		for i := range 3 {
			for j := range 3 {
				worst = math.Max(worst, math.Abs(exact.At(i, j)-measured.At(i, j))/se.At(i, j))
				plainWorst = math.Max(plainWorst, math.Abs(plain.At(i, j)-measured.At(i, j))/se.At(i, j))
			}
		}
		t.Logf("%s: exact vs measured within %.1f standard errors; identity encoders' law at %.1f", name, worst, plainWorst)
		if worst > 5 {
			t.Errorf("%s: exact and measured fresh moments differ by %.1f standard errors\n%v\n%v", name, worst, mat.Formatted(exact), mat.Formatted(measured))
		}
		if plainWorst < 10 {
			t.Errorf("%s: the identity encoders' law is within %.1f standard errors: the test cannot tell the precoder from it", name, plainWorst)
		}
	}
}

// One task of matched-vs-practical: every analog scheme learns on the
// whitened links, whose records show the moments' blocks adding up to the
// budget (OMA: K·budget = K·S' + side + idle; NOMA: budget = S' + side);
// the digital baselines carry the practical rate in closed form,
// d·NormalApprox(SNR/Γ, n, ε) bits per sample under OMA.
func TestMatchedVsPracticalTask(t *testing.T) {
	spec, err := Lookup("matched-vs-practical")
	if err != nil {
		t.Fatal(err)
	}
	const k, tBlocks, d = 10, 600, 5
	out := runTask(t, spec, "10", "T=600", "blocklength=250", "lbfgs_iters=20")
	seen := map[string]bool{}
	for _, r := range out.Rows {
		seen[r.Scheme] = true
	}
	for _, s := range []string{SchemeGCMC, SchemeWGCMCOMA, SchemeWGCMCNOMA, SchemeWVCMCOMA, SchemeWVCMCNOMA, scheme.DigitalGCMC, scheme.DigitalWGCMCOMA, scheme.DigitalWGCMCNOMA} {
		if !seen[s] {
			t.Errorf("no rows of %s (skipped: %v)", s, out.Skipped)
		}
	}
	for _, c := range []struct {
		link   string
		budget int
	}{{"link-oma", tBlocks / k}, {"link-noma", tBlocks}} {
		info := out.Info[c.link]
		m, ok := info["matched"].(map[string]any)
		if !ok {
			t.Fatalf("%s: no matched record in %v", c.link, info)
		}
		s := info["samples_per_stream"].(int)
		used, idle, budget := m["side_blocks_total"].(int), m["idle_blocks"].(int), m["budget_blocks"].(int)
		switch {
		case budget != c.budget:
			t.Errorf("%s: budget %d blocks, want %d", c.link, budget, c.budget)
		case c.link == "link-oma" && k*budget != k*s+used+idle:
			t.Errorf("OMA: K·budget = %d, K·S' + side + idle = %d·%d + %d + %d", k*budget, k, s, used, idle)
		case c.link == "link-noma" && budget != s+used:
			t.Errorf("NOMA: budget = %d, S' + side = %d + %d", budget, s, used)
		}
	}
	want := d * digital.NormalApprox(10/math.Pow(10, 0.153), 250, 1e-3)
	for _, b := range out.Info[scheme.DigitalWGCMCOMA]["bits_per_sample"].([]float64) {
		if math.Abs(b-want) > 1e-12 {
			t.Errorf("digital-wgcmc-oma carries %v bits per sample, want %v", b, want)
		}
	}
}
