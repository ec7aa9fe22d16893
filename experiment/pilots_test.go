package experiment

import (
	"math"
	"strings"
	"testing"

	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/scheme"
)

// TestPilotsOffGolden: coherence 1 and pilots off, set explicitly, give
// bit for bit the paper's numbers recorded before the options existed.
func TestPilotsOffGolden(t *testing.T) {
	checkPaperGolden(t, "coherence=1", "pilots=false", "pilot_boost_db=0")
}

// Bad block-fading and pilot settings fail before any work, each with a
// message that names the problem.
func TestPilotsParametersChecked(t *testing.T) {
	spec, _ := Lookup("gauss-snr")
	ray := "fading=rayleigh"
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"coherence=0"}, "coherence"},
		{[]string{"coherence=5"}, "flat fading"},
		{[]string{"pilots=true"}, "flat fading"},
		{[]string{ray, "pilots=true", "csi_error=0.1"}, "choose one"},
		{[]string{ray, "pilots=true", "pilot_snr_db=5"}, "set pilot_boost_db instead"},
		{[]string{ray, "pilot_boost_db=3"}, "without pilots=true"},
		{[]string{ray, "pilots=true", "pilot_boost_db=1e300"}, "pilot SNR"},
		{[]string{ray, "pilots=true", "pilot_len=3"}, "L_p ≥ m_t = 7"},
		{[]string{ray, "pilots=true", "centre=true"}, "centring with pilots"},
		// OMA: ⌊20/10⌋ = 2 blocks of 5 uses per worker, less than 7 pilot
		// uses and one block.
		{[]string{ray, "pilots=true", "T=20"}, "pilots take every sample block"},
		{[]string{ray, "pilots=true", "digital=true", "digital_capacity=isotropic"}, "imperfect CSI with isotropic"},
	} {
		_, _, err := runner.Resolve(spec, c.sets, true, 1)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error mentioning %q", c.sets, err, c.want)
		}
	}
	// The same budget with only the NOMA schemes leaves NOMA its samples;
	// the digital baselines take pilots and block fading with zf.
	for _, sets := range [][]string{{ray, "pilots=true", "T=20", "schemes=wgcmc-noma"}, {ray, "pilots=true", "digital=true"}, {ray, "coherence=3", "digital=true"}} {
		if _, _, err := runner.Resolve(spec, sets, true, 1); err != nil {
			t.Errorf("%v: %v", sets, err)
		}
	}
}

// With the pilots charged, the schemes see S' samples per stream, the
// results record how the pilots split the budget (their uses adding up to
// it), and "all" adds the CSI-aware WGCMC, which on a link with perfect
// CSI is WGCMC itself: naming it there gives WGCMC's values.
func TestPilotsInExperiments(t *testing.T) {
	spec, _ := Lookup("gauss-snr")
	const k, tBlocks = 10, 400
	out := runTask(t, spec, "10", "fading=rayleigh", "pilots=true", "coherence=5", "T=400", "lbfgs_iters=20")
	seen := map[string]bool{}
	for _, r := range out.Rows {
		seen[r.Scheme] = true
	}
	for _, s := range append([]string{SchemeWGCMCOMA, SchemeWGCMCNOMA}, scheme.CSIAware...) {
		if !seen[s] {
			t.Errorf("pilots: no rows of %s (skipped %v)", s, out.Skipped)
		}
	}
	link := channel.Config{Fading: channel.Rayleigh, Repetition: 1, ExtraTx: 2, Power: 1, SNRdB: 10, Coherence: 5, Pilots: channel.Pilots{On: true}}
	for _, a := range []struct {
		access channel.Access
		name   string
		s      int
	}{{channel.OMA, "link-oma", tBlocks / k}, {channel.NOMA, "link-noma", tBlocks}} {
		link.Access = a.access
		want, err := link.SplitBudget(k, a.s, 5)
		if err != nil {
			t.Fatal(err)
		}
		info := out.Info[a.name]
		p, _ := info["pilots"].(map[string]any)
		if info["samples_per_stream"] != want.Samples || p == nil || p["pilot_uses"] != want.Uses() || p["idle_uses"] != want.Idle {
			t.Errorf("%s: recorded %v, want %+v", a.name, info, want)
		}
		if got := want.Samples*want.BlockUses + want.Uses() + want.Idle; got != a.s*want.BlockUses {
			t.Errorf("%s: %d uses, budget %d", a.name, got, a.s*want.BlockUses)
		}
		noise, _ := info["csi_noise"].([]float64)
		if len(noise) != k || !(noise[0] > 0) {
			t.Errorf("%s: CSI noise %v", a.name, info["csi_noise"])
		}
	}

	plain := runTask(t, spec, "10")
	for _, r := range plain.Rows {
		if scheme.IsCSIAware(r.Scheme) {
			t.Fatalf("gauss-snr at its defaults reported %s", r.Scheme)
		}
	}
	named := runTask(t, spec, "10", "schemes=wgcmc-oma,wgcmc-oma-csi,wgcmc-noma,wgcmc-noma-csi")
	values := map[string]float64{}
	for _, r := range named.Rows {
		values[r.Scheme+"/"+r.Metric] = r.Value
	}
	for _, m := range spec.Metrics {
		for _, pair := range [][2]string{{SchemeWGCMCOMA, scheme.WGCMCOMACSI}, {SchemeWGCMCNOMA, scheme.WGCMCNOMACSI}} {
			u, a := values[pair[0]+"/"+m], values[pair[1]+"/"+m]
			if u != a && !(math.IsNaN(u) && math.IsNaN(a)) {
				t.Errorf("perfect CSI, %s: %s %g, %s %g", m, pair[0], u, pair[1], a)
			}
		}
	}
}
