package consensus

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc/channel"
)

// mustPinv is pinv for matrices known to be finite.
func mustPinv(a mat.Symmetric) *mat.SymDense {
	p, err := pinv(a)
	if err != nil {
		panic(err)
	}
	return p
}

// TestExtremeSignalsError: signals ×1e160 (whose covariance overflows) and
// a denormal P_k panicked with "symmetric eigendecomposition failed"; every
// Gaussian scheme now returns ErrNotFinite.
func TestExtremeSignalsError(t *testing.T) {
	samples := make([]*mat.Dense, 2)
	for k := range samples {
		samples[k] = mat.NewDense(4, 2, []float64{1, 2, -1, 0.5, 0.3, -2, 2, 1})
		samples[k].Scale(1e160, samples[k])
	}
	if _, err := Noiseless(samples); !errors.Is(err, ErrNotFinite) {
		t.Errorf("Noiseless ×1e160: %v, want ErrNotFinite", err)
	}
	for _, acc := range []channel.Access{channel.OMA, channel.NOMA} {
		rx := channel.Ideal(samples)
		rx.Access = acc
		if acc == channel.NOMA {
			rx.Y = rx.Y[:1]
		}
		rx.N0 = 1
		if _, err := WGCMC(rx); !errors.Is(err, ErrNotFinite) {
			t.Errorf("WGCMC %v ×1e160: %v, want ErrNotFinite", acc, err)
		}
	}
	small := make([]*mat.Dense, 2)
	for k := range small {
		small[k] = mat.NewDense(4, 2, []float64{1, 2, -1, 0.5, 0.3, -2, 2, 1})
	}
	rx := channel.Ideal(small)
	rx.N0 = 1e-3
	rx.Pk = []float64{math.SmallestNonzeroFloat64, 1}
	for name, f := range map[string]func(*channel.Received) (Map, error){"GCMC": GCMC, "WGCMC": WGCMC} {
		if _, err := f(rx); !errors.Is(err, ErrNotFinite) {
			t.Errorf("%s with a denormal P_k: %v, want ErrNotFinite", name, err)
		}
	}
}
