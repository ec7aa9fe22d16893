package experiment

import (
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
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
