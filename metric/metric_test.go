package metric

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestErr2(t *testing.T) {
	// Samples ±e_1, ±e_2 have second moment diag(1/2, 1/2).
	theta := mat.NewDense(4, 2, []float64{1, 0, -1, 0, 0, 1, 0, -1})
	ref := mat.NewSymDense(2, []float64{0.5, 0.25, 0.25, 0.5})
	// Diagonal entries exact; off-diagonal entries 0 vs 0.25: relative
	// error 1 on 2 of 4 entries → 0.5.
	got, err := Err2(theta, ref)
	if err != nil || math.Abs(got-0.5) > 1e-15 {
		t.Fatalf("err2 = %v, %v; want 0.5", got, err)
	}
	// A zero reference entry is left out rather than dividing by zero.
	got, err = Err2(theta, mat.NewSymDense(2, []float64{1, 0, 0, 1}))
	if err != nil || math.Abs(got-0.5) > 1e-15 {
		t.Fatalf("err2 with zero entries = %v, %v; want 0.5", got, err)
	}
	if _, err := Err2(theta, mat.NewSymDense(2, nil)); err == nil {
		t.Fatal("all-zero reference accepted")
	}
	if _, err := Err2(theta, mat.NewSymDense(3, nil)); err == nil {
		t.Fatal("dimension mismatch accepted")
	}
}

func TestPredictiveKL(t *testing.T) {
	if kl := BernoulliKL(0.3, 0.3); kl != 0 {
		t.Fatalf("KL(p‖p) = %g", kl)
	}
	want := 0.5*math.Log(0.5/0.9) + 0.5*math.Log(0.5/0.1)
	if kl := BernoulliKL(0.5, 0.9); math.Abs(kl-want) > 1e-15 {
		t.Fatalf("KL = %g, want %g", kl, want)
	}
	if kl := BernoulliKL(0, 0.2); math.Abs(kl-math.Log(1/0.8)) > 1e-15 {
		t.Fatalf("KL with p = 0: %g", kl)
	}
	kl, err := PredictiveKL([]float64{0.5, 0.3}, []float64{0.9, 0.3})
	if err != nil || math.Abs(kl-want/2) > 1e-15 {
		t.Fatalf("predictive KL = %g, %v", kl, err)
	}
	if _, err := PredictiveKL([]float64{0.5}, nil); err == nil {
		t.Fatal("length mismatch accepted")
	}
}

// A reference predictive that rounded to exactly 0 or 1 gives a finite KL, the
// one at the float64 resolution 2⁻⁵³, and equal saturated values give 0.
func TestPredictiveKLSaturated(t *testing.T) {
	eps := math.Nextafter(1, 0)
	if 1-eps != 0x1p-53 {
		t.Fatalf("float64 spacing below 1 is %g", 1-eps)
	}
	kl, err := PredictiveKL([]float64{0.9, 0.1}, []float64{1, 0})
	if err != nil {
		t.Fatal(err)
	}
	want := (BernoulliKL(0.9, 1-0x1p-53) + BernoulliKL(0.1, 0x1p-53)) / 2
	if math.IsInf(kl, 0) || math.Abs(kl-want) > 1e-12 {
		t.Fatalf("saturated reference: KL = %g, want %g", kl, want)
	}
	if kl < 3 {
		t.Fatalf("saturated reference: KL = %g, want a large penalty (> 3 nats)", kl)
	}
	if kl, err := PredictiveKL([]float64{1, 0}, []float64{1, 0}); err != nil || kl != 0 {
		t.Fatalf("equal saturated predictives: KL = %g, %v", kl, err)
	}
}
