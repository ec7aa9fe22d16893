package model

import "math"

// Row forms of the special functions: the probit data term applies them to
// the margins m_j of one row of the margin matrix, x_j = s_j m_j, and the
// predictive probabilities add Φ(m_j) (cdfRowAdd). Where the CPU has AVX2
// and FMA (polyRows and cdfRows, normal_rows_amd64.s), four margins at a
// time are evaluated with the arithmetic of the scalar code, operation for
// operation (the same coefficients, the same Estrin scheme by fused
// multiply-adds, the same rounding of every product, the same
// continued-fraction depth, and φ's exponential and log as the Go runtime
// computes them): the polynomial ranges −8 < x < 6 (and Φ's −8 < x < 8)
// and, for λ and log Φ, the right tail 8 ≤ x < tailMax. Where it also has
// AVX-512 (normal_rows512_amd64.s), eight at a time, and every margin but
// NaN: the band 6 ≤ x < 8, the left tail x ≤ −8 and the right tail beyond
// tailMax of λ and log Φ, and Φ's tails |x| ≥ 8 as well. The other margins
// are finished one by one by the scalar functions, and sums are added in
// order of j. The results are therefore bit-identical to the generic loops
// below, which are used elsewhere and for the last len(row) mod 4 (or 8)
// margins (TestRowFunctionsVectorGeneric, TestRowFunctionsTail,
// TestCDFRowVectorGeneric, each for every kernel the CPU has).

// Modes of polyRows: which outputs it writes.
const (
	polyLam = 1 << iota // row[j] = scale·s_j·λ(x_j)
	polyLog             // lp[j] = log Φ(x_j)
)

// polyChunk is the number of margins handed to polyRows at a time (the
// size of the stack buffers of its outputs).
const polyChunk = 256

// Combined tables for polyRows: piece k < leftPieces is piece k of the
// left tables (argument t = −x), piece leftPieces + k piece k of the right
// tables (argument x); polyLamTab holds λ's polynomials (M on the left),
// polyLogTab log Φ's (G on the left, −log Φ on the right). Each piece is
// padded to polyStride coefficients, so that the kernel loads them in
// pairs.
const (
	leftPieces = -tailSwitch * leftScale
	polyStride = polyDegree + 2
)

var polyLamTab, polyLogTab [leftPieces + rightPolyMax*rightScale][polyStride]float64

func init() {
	for k := range invMillsPoly {
		copy(polyLamTab[k][:], invMillsPoly[k][:])
		copy(polyLogTab[k][:], logMillsPoly[k][:])
	}
	for k := range lamPoly {
		copy(polyLamTab[leftPieces+k][:], lamPoly[k][:])
		copy(polyLogTab[leftPieces+k][:], negLogPoly[k][:])
	}
}

// polyRowsConsts are the constants of polyRows, four copies each, computed
// by Go as the scalar code uses them: rightPolyMax, tailSwitch,
// rightScale, leftScale, 2·rightScale, −0.5, logSqrt2Pi, the sign bit, and
// leftPieces as a float64.
//
//lint:ignore U1000 used from assembly (normal_rows_amd64.s)
var polyRowsConsts = func() (c [9][4]float64) {
	v := [...]float64{rightPolyMax, tailSwitch, rightScale, leftScale, 2 * rightScale, -0.5, logSqrt2Pi,
		math.Copysign(0, -1), leftPieces}
	for i, x := range v {
		c[i] = [4]float64{x, x, x, x}
	}
	return c
}()

// polyRowsInts are the int32 constants of polyRows, four copies each: 1
// and polyStride.
//
//lint:ignore U1000 used from assembly (normal_rows_amd64.s)
var polyRowsInts = [2][4]int32{{1, 1, 1, 1}, {polyStride, polyStride, polyStride, polyStride}}

// invMillsRow sets row[j] = scale·s_j·λ(s_j·row[j]), s = sg.
func invMillsRow(row, sg []float64, scale float64) {
	sg = sg[:len(row)]
	n := 0
	if usePolyRows {
		w := polyGroup()
		n = len(row) &^ (w - 1)
		var out [polyChunk / 4]uint8
		for c0 := 0; c0 < n; c0 += polyChunk {
			r, s := row[c0:min(c0+polyChunk, n)], sg[c0:min(c0+polyChunk, n)]
			polyRows(r, s, scale, nil, &out[0], polyLam)
			for g, o := range out[:len(r)/w] {
				for b := 0; o != 0; b, o = b+1, o>>1 {
					if o&1 != 0 {
						j := w*g + b
						r[j] = scale * s[j] * InvMills(s[j]*r[j])
					}
				}
			}
		}
	}
	invMillsRowGeneric(row[n:], sg[n:], scale)
}

// logPhiRow returns Σ_j log Φ(s_j·row[j]), s = sg, added in order of j.
func logPhiRow(row, sg []float64) float64 {
	return logPhiRows(row, sg, 0, polyLog)
}

// logPhiMillsRow sets row[j] = scale·s_j·λ(x_j), x_j = s_j·row[j], s = sg,
// and returns Σ_j log Φ(x_j), added in order of j.
func logPhiMillsRow(row, sg []float64, scale float64) float64 {
	return logPhiRows(row, sg, scale, polyLog|polyLam)
}

// LogPhiInvMillsRow is the special-function work of the probit log-joint
// and gradient on one row of margins: it sets row[j] = scale·s_j·λ(x_j),
// x_j = s_j·row[j], s = sg, and returns Σ_j log Φ(x_j), added in order of
// j, with the vector kernel in use (RowKernel). It panics if sg is shorter
// than row.
func LogPhiInvMillsRow(row, sg []float64, scale float64) float64 {
	return logPhiMillsRow(row, sg, scale)
}

// RowKernel names the implementation of the row special functions in use:
// "AVX-512", "AVX2" (the vector kernels) or "portable" (the Go loops). All
// give the same results.
func RowKernel() string {
	switch {
	case useRows512:
		return "AVX-512"
	case usePolyRows:
		return "AVX2"
	}
	return "portable"
}

// logPhiRows is logPhiRow (mode polyLog) and logPhiMillsRow (mode
// polyLog|polyLam).
func logPhiRows(row, sg []float64, scale float64, mode int) float64 {
	sg = sg[:len(row)]
	var sum float64
	n := 0
	if usePolyRows {
		w := polyGroup()
		n = len(row) &^ (w - 1)
		var lp [polyChunk]float64
		var out [polyChunk / 4]uint8
		for c0 := 0; c0 < n; c0 += polyChunk {
			r, s := row[c0:min(c0+polyChunk, n)], sg[c0:min(c0+polyChunk, n)]
			polyRows(r, s, scale, &lp[0], &out[0], mode)
			for g, o := range out[:len(r)/w] {
				for b := 0; o != 0; b, o = b+1, o>>1 {
					if o&1 == 0 {
						continue
					}
					j := w*g + b
					x := s[j] * r[j]
					if mode&polyLam == 0 {
						lp[j] = LogPhi(x)
						continue
					}
					var lam float64
					lp[j], lam = LogPhiMills(x)
					r[j] = scale * s[j] * lam
				}
			}
			for _, v := range lp[:len(r)] {
				sum += v
			}
		}
	}
	if mode&polyLam == 0 {
		return logPhiRowAcc(sum, row[n:], sg[n:])
	}
	return logPhiMillsRowAcc(sum, row[n:], sg[n:], scale)
}

// invMillsRowGeneric sets row[j] = scale·s_j·λ(s_j·row[j]), s = sg.
func invMillsRowGeneric(row, sg []float64, scale float64) {
	sg = sg[:len(row)]
	for j, mv := range row {
		s := sg[j]
		x := s * mv
		var lam float64
		switch {
		case x > 0 && x < rightPolyMax:
			k := int(x * rightScale)
			lam = estrin(&lamPoly[k], 2*rightScale*x-float64(2*k+1))
		case x <= 0 && x > tailSwitch:
			t := -x
			k := int(t * leftScale)
			lam = estrin(&invMillsPoly[k], 2*leftScale*t-float64(2*k+1))
		default:
			lam = InvMills(x)
		}
		row[j] = scale * s * lam
	}
}

// logPhiRowAcc returns sum + Σ_j log Φ(s_j·row[j]), s = sg, added in order
// of j.
func logPhiRowAcc(sum float64, row, sg []float64) float64 {
	sg = sg[:len(row)]
	for j, mv := range row {
		x := sg[j] * mv
		switch {
		case x > 0 && x < rightPolyMax:
			k := int(x * rightScale)
			sum += -estrin(&negLogPoly[k], 2*rightScale*x-float64(2*k+1))
		case x <= 0 && x > tailSwitch:
			t := -x
			k := int(t * leftScale)
			sum += -0.5*x*x - logSqrt2Pi + estrin(&logMillsPoly[k], 2*leftScale*t-float64(2*k+1))
		default:
			sum += LogPhi(x)
		}
	}
	return sum
}

// logPhiMillsRowAcc sets row[j] = scale·s_j·λ(x_j), x_j = s_j·row[j], s = sg,
// and returns sum + Σ_j log Φ(x_j), added in order of j.
func logPhiMillsRowAcc(sum float64, row, sg []float64, scale float64) float64 {
	sg = sg[:len(row)]
	for j, mv := range row {
		s := sg[j]
		x := s * mv
		var lp, lam float64
		switch {
		case x > 0 && x < rightPolyMax:
			k := int(x * rightScale)
			var nl float64
			nl, lam = estrin2(&negLogPoly[k], &lamPoly[k], 2*rightScale*x-float64(2*k+1))
			lp = -nl
		case x <= 0 && x > tailSwitch:
			t := -x
			k := int(t * leftScale)
			var g float64
			g, lam = estrin2(&logMillsPoly[k], &invMillsPoly[k], 2*leftScale*t-float64(2*k+1))
			lp = -0.5*x*x - logSqrt2Pi + g
		default:
			lp, lam = LogPhiMills(x)
		}
		sum += lp
		row[j] = scale * s * lam
	}
	return sum
}

// cdfRowAdd adds Φ(m_j) to out[j] for every j, each sum rounded as
// out[j] += normCDF(m[j]) rounds it (the vector kernel where there is one).
func cdfRowAdd(out, m []float64) {
	out = out[:len(m)]
	n := 0
	if usePolyRows {
		w := polyGroup()
		n = len(m) &^ (w - 1)
		var flags [polyChunk / 4]uint8
		for c0 := 0; c0 < n; c0 += polyChunk {
			o, r := out[c0:min(c0+polyChunk, n)], m[c0:min(c0+polyChunk, n)]
			cdfRows(o, r, &flags[0])
			for g, f := range flags[:len(r)/w] {
				for b := 0; f != 0; b, f = b+1, f>>1 {
					if f&1 != 0 {
						o[w*g+b] += normCDF(r[w*g+b])
					}
				}
			}
		}
	}
	for j, mv := range m[n:] {
		out[n+j] += normCDF(mv)
	}
}

// Tables and constants of the Φ kernel (cdfRowsAVX2): cdfTab holds M's
// pieces (left lanes, argument −x) then P = 1/Φ's (right lanes), padded as
// polyLamTab; cdfConsts, four copies each: the right lanes' piece offset,
// −0.5, then the constants of the Go runtime's exponential on amd64
// (math/exp_amd64.s: log₂e, the upper and lower parts of ln 2, 1/16, the
// Taylor coefficients 1/8! … 1/3!, 1/2, 1, and 2), and 1/√(2π); cdfInts
// the exponent bias.
var cdfTab [2 * leftPieces][polyStride]float64

//lint:ignore U1000 used from assembly (normal_rows_amd64.s)
var cdfConsts = func() (c [16][4]float64) {
	v := [...]float64{leftPieces, -0.5,
		1.4426950408889634073599246810018920,                  // log₂e
		0.69314718055966295651160180568695068359375,           // ln 2, upper part
		0.28235290563031577122588448175013436025525412068e-12, // ln 2, lower part
		0.0625,
		2.4801587301587301587e-5, 1.9841269841269841270e-4, 1.3888888888888888889e-3,
		8.3333333333333333333e-3, 4.1666666666666666667e-2, 1.6666666666666666667e-1,
		0.5, 1.0, 2.0, invSqrt2Pi}
	for i, x := range v {
		c[i] = [4]float64{x, x, x, x}
	}
	return c
}()

//lint:ignore U1000 used from assembly (normal_rows_amd64.s)
var cdfInts = [4]int64{1023, 1023, 1023, 1023}

// tailMax bounds the right tail the kernel of polyRows evaluates,
// [−tailSwitch, tailMax): beyond, exp(−x²/2) approaches the range where
// math.Exp leaves its common path (and φ then underflows).
const tailMax = 37.0

// tailConsts (four copies each: −tailSwitch, tailMax, 500) and tailInts
// (the depth rule of millsTail: 9, tailTerms) are the constants of the
// right tail in polyRows.
var (
	//lint:ignore U1000 used from assembly (normal_rows_amd64.s)
	tailConsts = [3][4]float64{
		{-tailSwitch, -tailSwitch, -tailSwitch, -tailSwitch}, {tailMax, tailMax, tailMax, tailMax}, {500, 500, 500, 500}}
	//lint:ignore U1000 used from assembly (normal_rows_amd64.s)
	tailInts = [2][4]int32{{9, 9, 9, 9}, {tailTerms, tailTerms, tailTerms, tailTerms}}
)

func init() {
	for k := range invMillsPoly {
		copy(cdfTab[k][:], invMillsPoly[k][:])
		copy(cdfTab[leftPieces+k][:], invPhiPoly[k][:])
	}
}
