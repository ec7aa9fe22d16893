package dataset

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestSubsetCopies(t *testing.T) {
	s := Set{U: mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 6}), V: []float64{0, 1, 1}}
	sub := s.Subset([]int{2, 0})
	if sub.Len() != 2 || sub.Dim() != 2 {
		t.Fatalf("Subset size %d×%d, want 2×2", sub.Len(), sub.Dim())
	}
	if !mat.Equal(sub.U, mat.NewDense(2, 2, []float64{5, 6, 1, 2})) || sub.V[0] != 1 || sub.V[1] != 0 {
		t.Fatalf("Subset = %v %v", mat.Formatted(sub.U), sub.V)
	}
	sub.U.Set(0, 0, -1)
	sub.V[0] = 0
	if s.U.At(2, 0) != 5 || s.V[2] != 1 {
		t.Fatal("Subset shares memory with the original")
	}
	if e := s.Subset(nil); e.Len() != 0 || e.Dim() != 0 {
		t.Fatalf("empty Subset has size %d×%d", e.Len(), e.Dim())
	}
}

func TestSubsetPanicsOutOfRange(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for an out-of-range index")
		}
	}()
	Set{U: mat.NewDense(1, 1, nil), V: []float64{0}}.Subset([]int{1})
}

func TestValidate(t *testing.T) {
	good := Set{U: mat.NewDense(2, 2, []float64{1, 2, 3, 4}), V: []float64{0, 1}}
	if err := good.Validate(); err != nil {
		t.Fatalf("valid set: %v", err)
	}
	for _, tc := range []struct {
		name string
		s    Set
		want []string
	}{
		{"empty", Set{}, []string{"empty", "N ≥ 1"}},
		{"label", Set{U: good.U, V: []float64{0, 2}}, []string{"label 1", "2", "0 or 1"}},
		{"label NaN", Set{U: good.U, V: []float64{math.NaN(), 1}}, []string{"label 0", "NaN"}},
		{"NaN", Set{U: mat.NewDense(2, 2, []float64{1, 2, 3, math.NaN()}), V: good.V}, []string{"row 1, column 1", "NaN"}},
		{"Inf", Set{U: mat.NewDense(2, 2, []float64{1, math.Inf(-1), 3, 4}), V: good.V}, []string{"row 0, column 1", "-Inf"}},
		{"length", Set{U: good.U, V: []float64{0}}, []string{"2 covariate rows", "1 labels"}},
	} {
		err := tc.s.Validate()
		errorMentions(t, tc.name, err, tc.want...)
	}
}

// errorMentions reports, under the case name, a nil err or one whose message
// lacks any of want.
func errorMentions(t *testing.T, name string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", name)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not mention %q", name, err, w)
		}
	}
}
