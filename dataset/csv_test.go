package dataset

import (
	"bytes"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

var update = flag.Bool("update", false, "rewrite testdata/probit-small.csv")

// probitSmall regenerates testdata/probit-small.csv: N = 400 points of the
// d = 3 probit model with θ* = ThetaStar(3), seed PCG(2024, 3).
func probitSmall() Set {
	return Synthetic(rand.New(rand.NewPCG(2024, 3)), ThetaStar(3), 400)
}

func TestProbitSmallCSV(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, probitSmall()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "probit-small.csv")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	disk, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(disk, buf.Bytes()) {
		t.Fatalf("%s differs from its deterministic generator; regenerate with go test ./dataset -run TestProbitSmallCSV -update", path)
	}
	s, err := ReadCSV(bytes.NewReader(disk), path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 400 || s.Dim() != 3 {
		t.Fatalf("%s is %d×%d, want 400×3", path, s.Len(), s.Dim())
	}
}

func TestCSVRoundTrip(t *testing.T) {
	s := Synthetic(rand.New(rand.NewPCG(4, 4)), ThetaStar5[:], 57)
	s.U.Set(0, 0, 1e-300)
	s.U.Set(1, 1, -123456789.125)
	var buf bytes.Buffer
	if err := WriteCSV(&buf, s); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "label,x1,x2,x3,x4,x5\n") {
		t.Fatalf("header %q", strings.SplitN(buf.String(), "\n", 2)[0])
	}
	got, err := ReadCSV(&buf, "rt.csv")
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(got.U, s.U) || !floats.Equal(got.V, s.V) {
		t.Fatal("CSV round trip changed the data")
	}
}

func TestReadCSVNoHeader(t *testing.T) {
	got, err := ReadCSV(strings.NewReader("1, 0.5,-2\n0,3,4e-1\n"), "nh.csv")
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(got.U, mat.NewDense(2, 2, []float64{0.5, -2, 3, 0.4})) || !floats.Equal(got.V, []float64{1, 0}) {
		t.Fatalf("read %v %v", mat.Formatted(got.U), got.V)
	}
}

func TestReadCSVErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"label 2", "label,a,b\n0,1,2\n2,1,2\n", []string{"bad.csv", "line 3, column 1 (label)", `"2"`, "0 or 1"}},
		{"label 0.5", "0.5,1\n", []string{"line 1, column 1", "0 or 1"}},
		{"NaN", "label,a,b\n0,1,2\n1,3,NaN\n", []string{"line 3, column 3 (x2)", "NaN", "finite"}},
		{"Inf", "0,-Inf\n", []string{"line 1, column 2 (x1)", "finite"}},
		{"not a number", "1,2\n0,abc\n", []string{"line 2, column 2 (x1)", `"abc"`}},
		{"ragged", "label,a,b\n0,1,2\n1,3\n", []string{"line 3 has 2 fields, want 3 as on line 1"}},
		{"ragged long", "0,1\n1,2,3\n", []string{"line 2 has 3 fields, want 2 as on line 1"}},
		{"empty", "", []string{"bad.csv", "no data rows"}},
		{"header only", "label,x1\n", []string{"no data rows"}},
		{"no covariates", "label\n1\n", []string{"line 1 has 1 field(s)", "at least one covariate"}},
		{"quote", "0,1\n1,\"2\n", []string{"bad.csv", "line 2", "column"}},
	} {
		_, err := ReadCSV(strings.NewReader(tc.in), "bad.csv")
		errorMentions(t, tc.name, err, tc.want...)
	}
}

func TestWriteCSVInvalid(t *testing.T) {
	var buf bytes.Buffer
	s := Set{U: mat.NewDense(1, 1, []float64{math.NaN()}), V: []float64{1}}
	if err := WriteCSV(&buf, s); err == nil || buf.Len() != 0 {
		t.Fatalf("WriteCSV of a NaN: error %v, wrote %d bytes", err, buf.Len())
	}
}
