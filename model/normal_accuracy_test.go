package model

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// normalRef is one line of testdata/normal_ref.txt: x and log Φ(x),
// λ(x) = φ(x)/Φ(x) and Φ(x) from mpmath with 60 digits to spare, rounded
// to double (testdata/normal_ref.py writes the file).
type normalRef struct{ x, logPhi, lam, cdf float64 }

func readNormalRefs(t *testing.T) []normalRef {
	t.Helper()
	f, err := os.Open("testdata/normal_ref.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var refs []normalRef
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		var v [4]float64
		fs := strings.Fields(line)
		if len(fs) != len(v) {
			t.Fatalf("testdata/normal_ref.txt: %q", line)
		}
		for i, s := range fs {
			if v[i], err = strconv.ParseFloat(s, 64); err != nil {
				t.Fatal(err)
			}
		}
		refs = append(refs, normalRef{v[0], v[1], v[2], v[3]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return refs
}

// normalRange is a range of x, lo < x ≤ hi, and the relative error bound,
// in units of ε = 2⁻⁵², that log Φ, λ and Φ meet there against the
// references.
type normalRange struct {
	name   string
	lo, hi float64
	bound  float64
}

// normalRanges are the ranges of the functions' branches and their bounds,
// the same on every path: 4ε where the continued fraction (and φ, and log
// on the left) give the values, 18ε (4e−15) where the piecewise
// polynomials do (the band 6 ≤ x < 8 through M(x) too).
var normalRanges = []normalRange{
	{"x ≤ −8", math.Inf(-1), -8, 4},
	{"−8 < x ≤ 0", -8, 0, 18},
	{"0 < x < 6", 0, math.Nextafter(6, 0), 18},
	{"6 ≤ x < 8", math.Nextafter(6, 0), math.Nextafter(8, 0), 18},
	{"x ≥ 8", math.Nextafter(8, 0), math.Inf(1), 4},
}

// relErr returns |got − want| in units of ε·max(|want|, the smallest
// normal double): relative error, absolute where want is subnormal or 0.
func relErr(got, want float64) float64 {
	if got == want {
		return 0
	}
	return math.Abs(got-want) / (0x1p-52 * math.Max(math.Abs(want), 0x1p-1022))
}

// TestNormalFuncsAgainstMpmath compares log Φ, λ and Φ with the mpmath
// references over the whole range, range by range, on every path: the
// scalar functions, and the row functions with each implementation the
// machine runs (the AVX-512 and AVX2 kernels and the generic loops).
func TestNormalFuncsAgainstMpmath(t *testing.T) {
	refs := readNormalRefs(t)
	xs := make([]float64, len(refs))
	for i, r := range refs {
		xs[i] = r.x
	}
	type vals struct{ logPhi, lam, cdf []float64 }
	eval := map[string]vals{}
	{
		v := vals{make([]float64, len(xs)), make([]float64, len(xs)), make([]float64, len(xs))}
		for i, x := range xs {
			lp, lam := LogPhiMills(x)
			if lp != LogPhi(x) || lam != InvMills(x) {
				t.Fatalf("x = %v: LogPhiMills (%v, %v), LogPhi %v, InvMills %v", x, lp, lam, LogPhi(x), InvMills(x))
			}
			v.logPhi[i], v.lam[i], v.cdf[i] = lp, lam, normCDF(x)
		}
		eval["scalar"] = v
	}
	ones := make([]float64, len(xs))
	for i := range ones {
		ones[i] = 1
	}
	for _, k := range rowKernels() {
		restore := useRowKernel(k)
		v := vals{make([]float64, len(xs)), append([]float64(nil), xs...), make([]float64, len(xs))}
		invMillsRow(v.lam, ones, 1)
		cdfRowAdd(v.cdf, xs)
		// log Φ one margin at a time, in a group whose other margins add −0.
		row := make([]float64, 8)
		for i, x := range xs {
			row[0] = x
			for j := 1; j < len(row); j++ {
				row[j] = 50
			}
			v.logPhi[i] = logPhiRow(row, ones[:8])
			if lp := logPhiMillsRow(row, ones[:8], 1); !sameBits(lp, v.logPhi[i]) || !sameBits(row[0], v.lam[i]) {
				t.Fatalf("%s, x = %v: logPhiMillsRow (%v, %v), logPhiRow %v, invMillsRow %v", k, x, lp, row[0], v.logPhi[i], v.lam[i])
			}
		}
		restore()
		eval[k] = v
	}
	for _, path := range append([]string{"scalar"}, rowKernels()...) {
		v := eval[path]
		for _, rg := range normalRanges {
			var worst [3]float64
			n := 0
			for i, r := range refs {
				if !(r.x > rg.lo && r.x <= rg.hi) {
					continue
				}
				n++
				got := [3]float64{v.logPhi[i], v.lam[i], v.cdf[i]}
				want := [3]float64{r.logPhi, r.lam, r.cdf}
				for f, name := range [3]string{"log Φ", "λ", "Φ"} {
					e := relErr(got[f], want[f])
					if !(e <= rg.bound) {
						t.Errorf("%s, %s: %s(%v) = %v, reference %v: error %.3gε > %gε", path, rg.name, name, r.x, got[f], want[f], e, rg.bound)
					}
					worst[f] = max(worst[f], e)
				}
			}
			if n == 0 {
				t.Fatalf("no reference in %s", rg.name)
			}
			t.Logf("%-7s %-11s %4d values, largest errors: log Φ %.2fε, λ %.2fε, Φ %.2fε", path, rg.name, n, worst[0], worst[1], worst[2])
		}
	}
}
