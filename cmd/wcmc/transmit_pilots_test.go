package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/consensus"
	"github.com/wcmc-project/wcmc/experiment"
	"github.com/wcmc-project/wcmc/runner"
)

// wcmc transmit --coherence, --pilots, --pilot-len, --pilot-boost-db: the
// signals, the pilots' split of the budget and the CSI statistics equal bit
// for bit those of the library on the channel.Config that the experiments'
// parameters coherence, pilots, pilot_len and pilot_boost_db give, at the
// same seed; link.json records them and wcmc aggregate reads them back (its
// WGCMC output equals the library's on the in-process signals).
func TestTransmitPilotsFlags(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(8, 9))
	const budget = 200
	var paths []string
	var samples []*mat.Dense
	for k := 1; k <= 3; k++ {
		path := writeNPY(t, p(fmt.Sprintf("s/samples-%d.npy", k)), budget, 3, func(m *mat.Dense) {
			for i := range budget {
				for j := range 3 {
					m.Set(i, j, float64(j)+rng.NormFloat64())
				}
			}
		})
		paths = append(paths, path)
		samples = append(samples, mustNPY(t, path))
	}
	for _, c := range []struct {
		flags  []string
		access channel.Access
		tc     int
		pilots channel.Pilots
		csi    channel.CSI
	}{
		{[]string{"--access", "oma", "--coherence", "5", "--pilots"}, channel.OMA, 5, channel.Pilots{On: true}, channel.CSI{}},
		{[]string{"--access", "noma", "--coherence", "10", "--pilots", "--pilot-len", "9", "--pilot-boost-db", "3"},
			channel.NOMA, 10, channel.Pilots{On: true, Len: 9, BoostDB: 3}, channel.CSI{}},
		// Block fading with the free pilots: not charged, CSI dependent
		// within an interval.
		{[]string{"--access", "oma", "--coherence", "4", "--pilot-len", "8", "--pilot-snr", "5"},
			channel.OMA, 4, channel.Pilots{}, channel.CSI{PilotLen: 8, PilotSNRdB: 5}},
		{[]string{"--access", "noma", "--coherence", "3"}, channel.NOMA, 3, channel.Pilots{}, channel.CSI{}},
	} {
		out := p("rx" + strings.Join(c.flags, ""))
		msg := mustRun(t, append(append([]string{"transmit", "--snr", "10", "--seed", "4", "--out", out}, c.flags...), paths...)...)
		cfg := channel.Config{Access: c.access, Fading: channel.Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: 10, Physical: true,
			Coherence: c.tc, Pilots: c.pilots, CSI: c.csi}
		want, err := wcmc.Transmit(samples, cfg, 4)
		if err != nil {
			t.Fatal(err)
		}
		got, link, err := loadReceived(out)
		if err != nil {
			t.Fatal(err)
		}
		if link.Coherence != c.tc || link.PilotBoostDB != c.pilots.BoostDB {
			t.Errorf("%v: link.json coherence %d, pilot boost %v", c.flags, link.Coherence, link.PilotBoostDB)
		}
		if got.S != want.S || len(got.Y) != len(want.Y) {
			t.Fatalf("%v: %d signals in %d streams, in process %d in %d", c.flags, got.S, len(got.Y), want.S, len(want.Y))
		}
		for i := range want.Y {
			sameBits(t, fmt.Sprintf("%v stream %d", c.flags, i+1), got.Y[i], want.Y[i])
		}
		if !slices.Equal(got.CSIGain, want.CSIGain) || !slices.Equal(got.CSINoise, want.CSINoise) {
			t.Errorf("%v: CSI gain %v and noise %v read back, in process %v and %v", c.flags, got.CSIGain, got.CSINoise, want.CSIGain, want.CSINoise)
		}
		if (c.csi != channel.CSI{} || c.pilots.On) && want.CSINoise == nil {
			t.Errorf("%v: no CSI statistics on a link with imperfect CSI", c.flags)
		}
		switch {
		case !c.pilots.On:
			if got.Pilots != nil || got.S != budget {
				t.Errorf("%v: pilots %+v and S = %d without charged pilots", c.flags, got.Pilots, got.S)
			}
		case got.Pilots == nil || *got.Pilots != *want.Pilots:
			t.Errorf("%v: pilot budget %+v read back, in process %+v", c.flags, got.Pilots, want.Pilots)
		default:
			b := got.Pilots
			if b.Samples >= budget || b.Coherence != c.tc {
				t.Errorf("%v: the pilots left S' = %d of %d samples at T_c = %d", c.flags, b.Samples, budget, b.Coherence)
			}
			if line := fmt.Sprintf("S = %d samples of the %d given per worker", b.Samples, budget); !strings.Contains(msg, line) {
				t.Errorf("%v: transmit printed %q, want %q", c.flags, msg, line)
			}
		}
		// WGCMC, and the CSI-aware WGCMC from the statistics link.json
		// records, equal the library's and consensus.WGCMCAware's; the
		// aware one differs from WGCMC exactly when the CSI is imperfect.
		var plain *mat.Dense
		for _, scheme := range []string{wcmc.WGCMC, wcmc.WGCMCAware} {
			theta := p("theta-" + scheme + strings.Join(c.flags, "") + ".npy")
			mustRun(t, "aggregate", "--scheme", scheme, "--rx", out, "--out", theta)
			res, err := wcmc.Aggregate(want, wcmc.Aggregation{Scheme: scheme}, 1)
			if err != nil {
				t.Fatal(err)
			}
			sameBits(t, fmt.Sprintf("%v aggregate %s", c.flags, scheme), mustNPY(t, theta), res.Theta)
			if scheme == wcmc.WGCMC {
				plain = res.Theta
				continue
			}
			m, err := consensus.WGCMCAware(want)
			if err != nil {
				t.Fatal(err)
			}
			sameBits(t, fmt.Sprintf("%v aware map", c.flags), res.Theta, m.Apply(want))
			if imperfect := want.CSINoise != nil; mat.Equal(res.Theta, plain) == imperfect {
				t.Errorf("%v: CSI-aware WGCMC equal to WGCMC: %v, want %v", c.flags, imperfect, !imperfect)
			}
		}
	}
}

// The flags are refused where the experiments refuse their parameters,
// with the same message in the flags' names, before anything is written.
func TestTransmitPilotsRefused(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	var paths, one []string
	for k := 1; k <= 3; k++ {
		paths = append(paths, writeNPY(t, p(fmt.Sprintf("s/samples-%d.npy", k)), 50, 3, nil))
		one = append(one, writeNPY(t, p(fmt.Sprintf("one/samples-%d.npy", k)), 1, 3, nil))
	}
	spec, err := experiment.Lookup("gauss-snr")
	if err != nil {
		t.Fatal(err)
	}
	// What each flag is called among the experiments' parameters.
	asParam := strings.NewReplacer("--pilot-boost-db", "pilot_boost_db", "--pilot-snr", "pilot_snr_db", "--pilots", "pilots=true",
		"--pilot-len", "pilot_len", "--coherence", "coherence")
	ray := "fading=rayleigh"
	for _, c := range []struct {
		flags []string
		sets  []string
		want  string
		files []string
	}{
		{[]string{"--coherence", "0"}, []string{ray, "coherence=0"}, "must be ≥ 1", paths},
		{[]string{"--fading", "flat", "--coherence", "5"}, []string{"fading=flat", "coherence=5"}, "flat fading", paths},
		{[]string{"--fading", "flat", "--pilots"}, []string{"fading=flat", "pilots=true"}, "flat fading", paths},
		{[]string{"--pilots", "--csi-error", "0.1"}, []string{ray, "pilots=true", "csi_error=0.1"}, "choose one", paths},
		{[]string{"--pilots", "--pilot-snr", "5"}, []string{ray, "pilots=true", "pilot_snr_db=5"}, "set --pilot-boost-db instead", paths},
		{[]string{"--pilot-boost-db", "3"}, []string{ray, "pilot_boost_db=3"}, "without --pilots", paths},
		{[]string{"--pilot-len", "8", "--pilot-snr", "5", "--pilot-boost-db", "3"}, []string{ray, "pilot_len=8", "pilot_snr_db=5", "pilot_boost_db=3"}, "without --pilots", paths},
		{[]string{"--pilots", "--pilot-boost-db", "1e300"}, []string{ray, "pilots=true", "pilot_boost_db=1e300"}, "pilot SNR", paths},
		{[]string{"--pilots", "--pilot-len", "3"}, []string{ray, "pilots=true", "pilot_len=3"}, "L_p ≥ m_t", paths},
		{[]string{"--pilots", "--centre"}, []string{ray, "pilots=true", "centre=true"}, "centring with pilots", paths},
		// One sample block of 6 uses per worker cannot carry 8 pilot uses
		// and a sample; gauss-snr's OMA at T = 20 neither.
		{[]string{"--access", "oma", "--pilots"}, []string{ray, "pilots=true", "T=20"}, "pilots take every sample block", one},
	} {
		_, err := runSteps(append(append([]string{"transmit", "--out", p("bad")}, c.flags...), c.files...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error mentioning %q", c.flags, err, c.want)
		}
		_, _, err = runner.Resolve(spec, c.sets, true, 1)
		if want := asParam.Replace(c.want); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("experiment %v: %v, want an error mentioning %q", c.sets, err, want)
		}
	}
	if entries, err := os.ReadDir(p("bad")); err == nil && len(entries) > 0 {
		t.Errorf("refused transmissions wrote %d files", len(entries))
	}
}
