package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/channel"
)

// wcmc transmit --centre: the signals equal the library's bit for bit,
// link.json records the decoded means and the blocks they took, and wcmc
// aggregate uses the transmitted means: its output equals the library's
// Aggregate on the loaded link, and its mean is the workers' (not shrunk
// towards 0 as the paper's WGCMC shrinks it).
func TestTransmitCentre(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(6, 7))
	mean := []float64{5, -3, 2}
	var paths []string
	var samples []*mat.Dense
	for k := 1; k <= 3; k++ {
		path := writeNPY(t, p(fmt.Sprintf("s/samples-%d.npy", k)), 400, 3, func(m *mat.Dense) {
			for i := range 400 {
				for j := range 3 {
					m.Set(i, j, mean[j]+0.2*rng.NormFloat64())
				}
			}
		})
		paths = append(paths, path)
		samples = append(samples, mustNPY(t, path))
	}
	for _, access := range []string{"oma", "noma"} {
		out := p("rx-" + access)
		msg := mustRun(t, append([]string{"transmit", "--access", access, "--fading", "rayleigh", "--snr", "10", "--centre", "--out", out}, paths...)...)
		if !strings.Contains(msg, "centred: the means took") {
			t.Errorf("%s: transmit printed %q", access, msg)
		}
		acc, _ := channel.ParseAccess(access)
		cfg := channel.Config{Access: acc, Fading: channel.Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: 10, Physical: true, Centre: true}
		want, err := wcmc.Transmit(samples, cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		got, link, err := loadReceived(out)
		if err != nil {
			t.Fatal(err)
		}
		if !link.Centre || got.S != want.S || got.Budget != 400 || len(got.Mean) != 3 {
			t.Fatalf("%s: link.json centre %v, S = %d (library %d), budget %d, %d means", access, link.Centre, got.S, want.S, got.Budget, len(got.Mean))
		}
		for i := range want.Y {
			sameBits(t, fmt.Sprintf("%s stream %d", access, i+1), got.Y[i], want.Y[i])
		}
		for k := range want.Mean {
			for j, v := range want.Mean[k] {
				if got.Mean[k][j] != v {
					t.Fatalf("%s: worker %d's mean %v in link.json, %v in process", access, k+1, got.Mean[k], want.Mean[k])
				}
			}
		}
		mustRun(t, "aggregate", "--scheme", "wgcmc", "--rx", out, "--out", p("theta-"+access+".npy"))
		theta := mustNPY(t, p("theta-"+access+".npy"))
		res, err := wcmc.Aggregate(got, wcmc.Aggregation{Scheme: wcmc.WGCMC}, 1)
		if err != nil {
			t.Fatal(err)
		}
		sameBits(t, access+" aggregate", theta, res.Theta)
		r, _ := theta.Dims()
		for j, m := range mean {
			var avg float64
			for i := range r {
				avg += theta.At(i, j) / float64(r)
			}
			// The workers' means are m ± 0.2/√400 per coordinate; the
			// output's, over r samples of variance ≈ 0.04/3, adds 0.12/√r.
			if tol := 4 * math.Hypot(0.2/math.Sqrt(1200), 0.12/math.Sqrt(float64(r))); math.Abs(avg-m) > tol {
				t.Errorf("%s: output mean %g in coordinate %d, want %g ± %g", access, avg, j, m, tol)
			}
		}
	}
}
