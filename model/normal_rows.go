package model

import "math"

// Row forms of the special functions: the probit data term applies them to
// the margins m_j of one row of the margin matrix, x_j = s_j m_j. Where the
// CPU has AVX2 and FMA (polyRows, normal_rows_amd64.s), margins in the
// polynomial ranges (−8 < x < 6) are evaluated four at a time with the
// arithmetic of the scalar code, operation for operation (the same
// coefficients, the same Estrin scheme by fused multiply-adds, the same
// rounding of every product), and the others are finished one by one by
// the scalar functions; sums are added in order of j. The results are
// therefore bit-identical to the generic loops below, which are used
// elsewhere and for the last len(row) mod 4 margins.

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
var polyRowsInts = [2][4]int32{{1, 1, 1, 1}, {polyStride, polyStride, polyStride, polyStride}}

// invMillsRow sets row[j] = scale·s_j·λ(s_j·row[j]), s = sg.
func invMillsRow(row, sg []float64, scale float64) {
	sg = sg[:len(row)]
	n := 0
	if usePolyRows {
		n = len(row) &^ 3
		var out [polyChunk / 4]uint8
		for c0 := 0; c0 < n; c0 += polyChunk {
			r, s := row[c0:min(c0+polyChunk, n)], sg[c0:min(c0+polyChunk, n)]
			polyRows(r, s, scale, nil, &out[0], polyLam)
			for g, o := range out[:len(r)/4] {
				for b := 0; o != 0; b, o = b+1, o>>1 {
					if o&1 != 0 {
						j := 4*g + b
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

// logPhiRows is logPhiRow (mode polyLog) and logPhiMillsRow (mode
// polyLog|polyLam).
func logPhiRows(row, sg []float64, scale float64, mode int) float64 {
	sg = sg[:len(row)]
	var sum float64
	n := 0
	if usePolyRows {
		n = len(row) &^ 3
		var lp [polyChunk]float64
		var out [polyChunk / 4]uint8
		for c0 := 0; c0 < n; c0 += polyChunk {
			r, s := row[c0:min(c0+polyChunk, n)], sg[c0:min(c0+polyChunk, n)]
			polyRows(r, s, scale, &lp[0], &out[0], mode)
			for g, o := range out[:len(r)/4] {
				for b := 0; o != 0; b, o = b+1, o>>1 {
					if o&1 == 0 {
						continue
					}
					j := 4*g + b
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
