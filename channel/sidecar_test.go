package channel

import (
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestLinkRefusesExtremes: a denormal P_k and N0 = 1e300 were accepted,
// and signals ×1e160 reached the schemes (which panicked); N0 far above
// the signals' mean square gave all-zero samples.
func TestLinkRefusesExtremes(t *testing.T) {
	valid := `{"format":"wcmc-link/1","access":"noma","repetition":2,"P":1,"N0":0.1,"P_k":[1,2],"d":3,"K":2,"S":5,"m_r":6,"signals":["received.npy"]}`
	for edit, want := range map[[2]string]string{
		{`"P_k":[1,2]`, `"P_k":[5e-324,2]`}: "P_k of worker 1 = 5e-324",
		{`"N0":0.1`, `"N0":1e300`}:          "N0 = 1e+300",
		{`"P":1`, `"P":1e-200`}:             "P = 1e-200",
	} {
		_, err := ParseLink([]byte(strings.Replace(valid, edit[0], edit[1], 1)))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s → %s: error %v, want %q", edit[0], edit[1], err, want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	samples := []*mat.Dense{gaussSamples(rng, 10, 2, 1), gaussSamples(rng, 10, 2, 2)}
	for _, acc := range []Access{OMA, NOMA} {
		cfg := Config{Access: acc, Repetition: 1, Power: 1, SNRdB: 10}
		rx, err := Transmit(rng, cfg, samples)
		if err != nil {
			t.Fatal(err)
		}
		l := NewLink(cfg, rx, 1)
		names := l.Signals
		if err := l.checkSignals(acc, rx.Y, names); err != nil {
			t.Fatalf("%v: %v", acc, err)
		}
		big := make([]*mat.Dense, len(rx.Y))
		for i, y := range rx.Y {
			big[i] = mat.DenseCopyOf(y)
			big[i].Scale(1e160, big[i])
		}
		if err := l.checkSignals(acc, big, names); err == nil || !strings.Contains(err.Error(), "rescale") {
			t.Errorf("%v: signals ×1e160: %v, want a refusal", acc, err)
		}
		noisy := l
		noisy.N0 = 1e100
		if err := noisy.checkSignals(acc, rx.Y, names); err == nil || !strings.Contains(err.Error(), "N0 = 1e+100") {
			t.Errorf("%v: N0 = 1e100: %v, want a refusal", acc, err)
		}
	}
}

// TestTransmitNil: a nil sample matrix, or Retransmit over a nil link,
// was a nil-pointer panic.
func TestTransmitNil(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cfg := Config{Access: OMA, Repetition: 1, Power: 1, SNRdB: 10}
	ok := gaussSamples(rng, 4, 2, 1)
	for _, s := range [][]*mat.Dense{{nil}, {ok, nil}} {
		if _, err := Transmit(rng, cfg, s); err == nil || !strings.Contains(err.Error(), "nil sample matrix") {
			t.Errorf("Transmit %v: %v, want a nil-matrix error", s, err)
		}
	}
	if _, err := Retransmit(rng, cfg, nil, []*mat.Dense{ok}); err == nil || !strings.Contains(err.Error(), "nil link") {
		t.Errorf("Retransmit(nil rx): %v", err)
	}
}
