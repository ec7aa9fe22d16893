package channel

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestTransmitMessages: what used to pass or fail with a misleading message
// (N0 = 0 written to link.json, "json: unsupported value: +Inf", samples of
// 1e154 or denormals reported as "all zero") fails naming the real problem.
func TestTransmitMessages(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	good := []*mat.Dense{gaussSamples(rng, 20, 3, 1), gaussSamples(rng, 20, 3, 1)}
	scaled := func(c float64) []*mat.Dense {
		out := make([]*mat.Dense, len(good))
		for i, m := range good {
			out[i] = mat.DenseCopyOf(m)
			out[i].Scale(c, m)
		}
		return out
	}
	cfg := Config{Access: NOMA, Fading: Flat, Repetition: 2, Power: 1, SNRdB: 10}
	for _, c := range []struct {
		name    string
		snr     float64
		samples []*mat.Dense
		want    string
	}{
		{"SNR 1e6 dB", 1e6, good, "N0 = P/(m_r·10^(SNR/10)) = 0"},
		{"SNR -1e6 dB", -1e6, good, "= +Inf, outside floating point"},
		{"samples 1e154", 10, scaled(1e154), "samples too large (largest |θ| = "},
		{"denormal samples", 10, scaled(1e-320), "samples too small"},
		{"zero samples", 10, scaled(0), "samples are all zero"},
	} {
		cfg.SNRdB = c.snr
		_, err := Transmit(rng, cfg, c.samples)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
}

func TestLinkRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	samples := []*mat.Dense{gaussSamples(rng, 10, 2, 1), gaussSamples(rng, 10, 2, 2)}
	for _, acc := range []Access{OMA, NOMA} {
		cfg := Config{Access: acc, Fading: Rayleigh, Repetition: 2, ExtraTx: 2, Power: 1, SNRdB: 10, Physical: true}
		rx, err := Transmit(rng, cfg, samples)
		if err != nil {
			t.Fatal(err)
		}
		l := NewLink(cfg, rx, 7)
		dir := t.TempDir()
		data, err := l.Encode()
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, LinkFileName), data, 0o644)
		byName := map[string]*mat.Dense{}
		for i, f := range l.SignalFiles(filepath.Join(dir, LinkFileName)) {
			byName[f] = rx.Y[i]
		}
		got, back, err := LoadReceived(dir, func(p string) (*mat.Dense, error) { return byName[p], nil })
		if err != nil {
			t.Fatal(err)
		}
		if got.N0 != rx.N0 || got.K != rx.K || got.Access != acc || back.Seed != 7 || len(got.Y) != len(rx.Y) || got.Y[0] != rx.Y[0] {
			t.Errorf("%v: round trip %+v, want %+v", acc, got, rx)
		}
	}
}

func TestParseLinkRefusals(t *testing.T) {
	valid := `{"format":"wcmc-link/1","access":"noma","repetition":2,"P":1,"N0":0.1,"P_k":[1,2],"d":3,"K":2,"S":5,"m_r":6,"signals":["received.npy"]}`
	if _, err := ParseLink([]byte(valid)); err != nil {
		t.Fatal(err)
	}
	for edit, want := range map[[2]string]string{
		{`"N0":0.1`, `"N0":0`}:                         "N0 = 0, want a positive finite noise variance",
		{`"format":"wcmc-link/1"`, `"format":"x"`}:     `format "x"`,
		{`"m_r":6`, `"m_r":7`}:                         "m_r = 7, want repetition·d = 2·3",
		{`"P_k":[1,2]`, `"P_k":[1]`}:                   "P_k has 1 entries for K = 2",
		{`"P_k":[1,2]`, `"P_k":[1,-2]`}:                "P_k of worker 2 = -2",
		{`"P":1`, `"P":1e400`}:                         "cannot unmarshal",
		{`"signals":["received.npy"]`, `"signals":[]`}: "0 signal files listed, want 1 under noma",
		{`"access":"noma"`, `"access":"tdma"`}:         `unknown access "tdma"`,
	} {
		_, err := ParseLink([]byte(strings.Replace(valid, edit[0], edit[1], 1)))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s → %s: error %v, want %q", edit[0], edit[1], err, want)
		}
	}
}

// FuzzParseLink: the link.json reader never panics, and what it accepts
// assembles into a Received from signals of the stated shape.
func FuzzParseLink(f *testing.F) {
	f.Add([]byte(`{"format":"wcmc-link/1","access":"oma","repetition":1,"P":1,"N0":1,"P_k":[1,2],"d":1,"K":2,"S":1,"m_r":1,"signals":["a","b"]}`))
	f.Add([]byte(`{"format":"wcmc-link/1","access":"noma","repetition":3,"P":1e-300,"N0":5e-324,"P_k":[1],"d":2,"K":1,"S":3,"m_r":6,"signals":["y"]}`))
	f.Add([]byte(`{"format":"wcmc-link/1","m_r":-9223372036854775808,"repetition":-1,"d":9223372036854775807}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseLink(data)
		if err != nil {
			return
		}
		if l.S > 64 || l.Mr > 64 || len(l.Signals) > 64 {
			return // keep the allocation below small
		}
		y := make([]*mat.Dense, len(l.Signals))
		for i := range y {
			y[i] = mat.NewDense(l.S, l.Mr, nil)
		}
		rx, err := l.Received(y, l.Signals)
		if err != nil {
			t.Fatalf("accepted link %+v does not assemble: %v", l, err)
		}
		if !(rx.N0 > 0) || math.IsInf(rx.N0, 0) || rx.Streams() != len(l.Signals) {
			t.Fatalf("accepted link %+v gives %+v", l, rx)
		}
	})
}
