package digital

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
)

// idealGolden are ideal digital links with the hashes of what Send gave
// (decoded samples, capacities and rates) before the practical options
// (SNR gap, finite block length, imperfect CSI, block fading) existed.
var idealGolden = []struct {
	link Link
	want uint64
}{
	{Link{Channel: channel.Config{Access: channel.OMA, Repetition: 1, Power: 1, SNRdB: 5}, Quantizer: TestChannel{}}, 0x901046222a318407},
	{Link{Channel: channel.Config{Access: channel.NOMA, Repetition: 2, Power: 1, SNRdB: 0}, Quantizer: AdditiveNoise{}, SideInfoBits: 8}, 0xabb8173ff2f33e89},
	{Link{Channel: channel.Config{Access: channel.OMA, Fading: channel.Rayleigh, ExtraTx: 2, Repetition: 1, Power: 1, SNRdB: 10}, Capacity: Isotropic, Quantizer: Uniform{Dither: true}}, 0xd197f9c5943f8488},
	{Link{Channel: channel.Config{Access: channel.OMA, Fading: channel.Rayleigh, ExtraTx: 3, Repetition: 1, Power: 1, SNRdB: 3}, Capacity: WaterFilling, Quantizer: TestChannel{PosteriorDraw: true}}, 0x4462d21072fba8fc},
	{Link{Channel: channel.Config{Access: channel.NOMA, Fading: channel.Rayleigh, ExtraTx: 2, Repetition: 1, Power: 1, SNRdB: 10, Gains: channel.LargeScale{OffsetDB: []float64{0, -3, 2}}}, Quantizer: AdditiveNoise{}}, 0x4735affd6193b9c4},
	{Link{Channel: channel.Config{Access: channel.OMA, Fading: channel.Rayleigh, Complex: true, ExtraTx: 1, Repetition: 1, Power: 1, SNRdB: 7}, Quantizer: Uniform{}}, 0xd8a3fd2a3a92fe85},
}

// checkIdealGolden checks the links of idealGolden, each edited by edit.
func checkIdealGolden(t *testing.T, edit func(Link) Link) {
	t.Helper()
	for i, c := range idealGolden {
		rng := rand.New(rand.NewPCG(uint64(i), 77))
		samples := workers(rng, 3, 40, 3)
		l := edit(c.link)
		decoded, b, err := l.Send(rng, samples)
		if err != nil {
			t.Fatal(err)
		}
		if got := hashSend(decoded, b); got != c.want {
			t.Errorf("%+v: hash %#x, want %#x", l, got, c.want)
		}
	}
}

// hashSend hashes the decoded samples and every worker's capacity and rate.
func hashSend(decoded []*mat.Dense, b Budget) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	put := func(v float64) {
		u := math.Float64bits(v)
		for i := range buf {
			buf[i] = byte(u >> (8 * i))
		}
		h.Write(buf[:])
	}
	for _, x := range decoded {
		for _, v := range x.RawMatrix().Data {
			put(v)
		}
	}
	for _, w := range b.Workers {
		put(w.Capacity)
		put(w.Rate)
	}
	return h.Sum64()
}

// TestIdealDigitalGolden: the ideal digital links are bit for bit what they
// were before the practical options existed.
func TestIdealDigitalGolden(t *testing.T) {
	checkIdealGolden(t, func(l Link) Link { return l })
}
