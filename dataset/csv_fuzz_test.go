package dataset

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// FuzzReadCSV: on any input ReadCSV either returns an error or a set that
// keeps its promises — N ≥ 1 rows of d ≥ 1 finite covariates, labels 0 or
// 1 — and that WriteCSV and ReadCSV carry through unchanged.
func FuzzReadCSV(f *testing.F) {
	for _, seed := range []string{
		"label,x1,x2\n0,1.5,-2\n1,0,3e-5\n",
		"1,2\n0,3\n",
		"0,NaN\n", "1,1e309\n", "0,1\n1\n", "2,1\n", "\"0\",\"1\"\n", "", "label\n",
		"0,1,2\n1,3,4,5\n", "0, 1\n1,\t2\n", "0,0x10\n", "1,1_0\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadCSV(bytes.NewReader(data), "fuzz.csv")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.csv") {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		n, d := s.Len(), s.Dim()
		if n < 1 || d < 1 {
			t.Fatalf("accepted a set of N = %d, d = %d", n, d)
		}
		for i := range n {
			if s.V[i] != 0 && s.V[i] != 1 {
				t.Fatalf("label %v accepted", s.V[i])
			}
			for j := range d {
				if v := s.U.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("covariate %v accepted", v)
				}
			}
		}
		var buf bytes.Buffer
		if err := WriteCSV(&buf, s); err != nil {
			t.Fatal(err)
		}
		back, err := ReadCSV(&buf, "again.csv")
		if err != nil {
			t.Fatalf("what WriteCSV wrote does not read back: %v", err)
		}
		if back.Len() != n || back.Dim() != d {
			t.Fatalf("round trip changed the shape: %d×%d → %d×%d", n, d, back.Len(), back.Dim())
		}
		for i := range n {
			if back.V[i] != s.V[i] {
				t.Fatalf("round trip changed label %d", i)
			}
			for j := range d {
				if back.U.At(i, j) != s.U.At(i, j) {
					t.Fatalf("round trip changed covariate (%d, %d): %v → %v", i, j, s.U.At(i, j), back.U.At(i, j))
				}
			}
		}
	})
}
