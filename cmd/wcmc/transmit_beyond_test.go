package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/channel"
)

// The channel models beyond the paper from the command line: the flags
// reach channel.Config (the signals equal the library's bit for bit),
// link.json records them, wcmc aggregate gets only the blocks delivered,
// and channel.Config.Validate refuses what cannot be simulated.
func TestTransmitBeyondFlags(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(4, 5))
	var paths []string
	var samples []*mat.Dense
	for k := 1; k <= 3; k++ {
		path := writeNPY(t, p(fmt.Sprintf("s/samples-%d.npy", k)), 200, 3, func(m *mat.Dense) {
			for i := range 200 {
				for j := range 3 {
					m.Set(i, j, rng.NormFloat64())
				}
			}
		})
		paths = append(paths, path)
		samples = append(samples, mustNPY(t, path))
	}

	for _, c := range []struct {
		flags []string
		cfg   channel.Config
		check func(link channel.Link) string
	}{
		{[]string{"--access", "oma", "--peak-power", "40"},
			channel.Config{Access: channel.OMA, Control: channel.PowerControl{PeakPower: 40}},
			func(l channel.Link) string {
				if l.PeakPower != 40 || len(l.Outage) != 3 {
					return fmt.Sprintf("peak %v, outage %v", l.PeakPower, l.Outage)
				}
				return ""
			}},
		{[]string{"--access", "noma", "--complex", "--extra-tx", "1", "--csi-error", "0.05", "--snr-offsets", "0,-3,3"},
			channel.Config{Access: channel.NOMA, Complex: true, ExtraTx: 1, CSI: channel.CSI{ErrorVar: 0.05}, Gains: channel.LargeScale{OffsetDB: []float64{0, -3, 3}}},
			func(l channel.Link) string {
				if !l.Complex || l.CSIError != 0.05 || len(l.Gain) != 3 || len(l.Residual) != 3 {
					return fmt.Sprintf("complex %v, csi %v, gains %v, residual %v", l.Complex, l.CSIError, l.Gain, l.Residual)
				}
				return ""
			}},
		{[]string{"--access", "oma", "--d-min", "5", "--d-max", "50", "--path-exponent", "3", "--pilot-len", "10", "--pilot-snr", "5"},
			channel.Config{Access: channel.OMA, CSI: channel.CSI{PilotLen: 10, PilotSNRdB: 5}, Gains: channel.LargeScale{DMin: 5, DMax: 50, Exponent: 3}},
			func(l channel.Link) string {
				if l.PilotLen != 10 || len(l.Gain) != 3 {
					return fmt.Sprintf("pilots %v, gains %v", l.PilotLen, l.Gain)
				}
				return ""
			}},
	} {
		out := p("rx" + strings.Join(c.flags, ""))
		mustRun(t, append(append([]string{"transmit", "--fading", "rayleigh", "--snr", "10", "--out", out}, c.flags...), paths...)...)
		cfg := c.cfg
		cfg.Fading, cfg.Repetition, cfg.Power, cfg.SNRdB, cfg.Physical = channel.Rayleigh, 2, 1, 10, true
		if cfg.ExtraTx == 0 {
			cfg.ExtraTx = 2
		}
		want, err := wcmc.Transmit(samples, cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		if want, err = want.Delivered(); err != nil {
			t.Fatal(err)
		}
		got, link, err := loadReceived(out)
		if err != nil {
			t.Fatal(err)
		}
		if msg := c.check(link); msg != "" {
			t.Errorf("%v: link.json: %s", c.flags, msg)
		}
		if got.S != want.S || len(got.Y) != len(want.Y) {
			t.Fatalf("%v: %d signals in %d streams, in process %d in %d", c.flags, got.S, len(got.Y), want.S, len(want.Y))
		}
		for i := range want.Y {
			sameBits(t, fmt.Sprintf("%v stream %d", c.flags, i+1), got.Y[i], want.Y[i])
		}
		if c.cfg.Control.PeakPower > 0 && got.S == 200 {
			t.Errorf("%v: no block lost to outage in 200 (p_out ≈ 0.07 per block)", c.flags)
		}
		mustRun(t, "aggregate", "--scheme", "wgcmc", "--rx", out, "--out", p("theta.npy"))
		if r, _ := mustNPY(t, p("theta.npy")).Dims(); r != got.S {
			t.Errorf("%v: aggregate wrote %d samples, %d delivered", c.flags, r, got.S)
		}
	}

	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--fading", "flat", "--csi-error", "0.1"}, "flat fading"},
		{[]string{"--snr-offsets", "0,3"}, "2 entries for K = 3"},
		{[]string{"--peak-power", "0.5"}, "P_peak > P"},
		{[]string{"--fading", "rician", "--k-factor", "3"}, "complex"},
		{[]string{"--k-factor", "3"}, "used only by rician"},
	} {
		_, err := runSteps(append(append([]string{"transmit", "--out", p("bad")}, c.flags...), paths...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error mentioning %q", c.flags, err, c.want)
		}
	}
	if _, err := os.Stat(p("bad")); err == nil {
		entries, _ := os.ReadDir(p("bad"))
		if len(entries) > 0 {
			t.Errorf("refused transmissions wrote %d files", len(entries))
		}
	}
}
