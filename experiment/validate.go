package experiment

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wcmc-project/wcmc/internal/memlimit"
)

// Checks that every experiment's parameters must pass before any work
// starts, beyond what runner.Resolve checks (kinds, declared ranges,
// finiteness): each family's check (gaussConfig.check, probitBase.check,
// …) reports them, point by point, once per parameter, each error naming
// it. Values far outside these limits do not fail cleanly downstream: an
// SNR of −3100 dB overflows N0 = P/(m_r 10^{SNR/10}) and the
// eigendecomposition of the GCMC map panics; a transmit power of 1e-320
// underflows the same way; prior_var = 1e-300 stalls the samplers;
// repetition = 100000 allocates m_r × m_r matrices with m_r = l·d = 500000.

// Limits of the parameters the experiments check.
const (
	MinSNRdB    = -100.0 // dB; the paper's figures span 0–35 dB
	MaxSNRdB    = 100.0
	MinPower    = 1e-12 // transmit power budget P
	MaxPower    = 1e12
	MinPriorVar = 1e-6 // probit prior variance σ²
	MaxPriorVar = 1e6
	MaxMr       = 4096 // received dimensions m_r = l·d
	MNISTPixels = 28 * 28
)

// size is a parameter that sets an array's size, for messages.
type size struct {
	name string
	n    int
}

// memoryNeed is the memory of one run: the data sets (points, in bytes:
// N×d training, n_test×d test and ref_samples×d reference floats) and, per
// task, the workers' samples and received signals, k·s·d and k·s·l·d
// floats at most (s samples per worker: T blocks, NOMA's S = T, or S) and
// fresh times again for the fresh signals.
type memoryNeed struct {
	sizes             []size // the parameters they follow from
	points            float64
	k, s, d, l, fresh int
}

// check refuses, under the key "memory", sizes whose arrays cannot fit in
// memory (package memlimit), naming the parameters they follow from.
func (m memoryNeed) check(p *problems) {
	task := (memlimit.Floats(m.k, m.s, m.d) + memlimit.Floats(m.k, m.s, m.l, m.d)) * float64(1+m.fresh)
	named := make([]string, len(m.sizes))
	for i, s := range m.sizes {
		named[i] = s.name + " = " + s.text()
	}
	p.add("memory", memlimit.Check(strings.Join(named, ", "), m.points+task))
}

// text writes the size as one would set it: a round size of a million or
// more as m·10^e ("1e11"), any other in decimal.
func (s size) text() string {
	if m, e := s.n, 0; m >= 1e6 {
		for m%10 == 0 {
			m, e = m/10, e+1
		}
		if m < 10 {
			return fmt.Sprintf("%de%d", m, e)
		}
	}
	return strconv.Itoa(s.n)
}
