package model

// specialGroup is the number of rows specialRows takes at a time: their
// sums of log Φ are added in one loop, so that four chains of additions
// are in flight instead of one.
const specialGroup = 4

// specialMode is the mode of specialRows for a data term that computes
// the log-joint, the gradient or both.
func specialMode(logj, grad bool) int {
	mode := 0
	if logj {
		mode |= polyLog
	}
	if grad {
		mode |= polyLam
	}
	return mode
}

// specialRows applies the special functions of mode (polyLog, polyLam or
// both) to rows r = 0 … rows−1 of the margin block m (row r at
// m[r·stride:], n margins, signs sg): with x_j = s_j·m_rj,
//
//	polyLam: m_rj = scale·s_j·λ(x_j),
//	polyLog: sums[r] += log Φ(x_j), for j in order.
//
// Each value is that of the row functions (logPhiMillsRow, logPhiRow,
// invMillsRow) and each sum is added in order of j, so a row cut into
// consecutive pieces gives the sums of the whole row bit for bit, provided
// every piece but the last is a whole number of the kernel's groups (the
// last may end with a remainder: it goes to the generic loops). It uses
// the row kernel in use (RowKernel) and allocates nothing.
func specialRows(m []float64, rows, stride, n int, sg []float64, scale float64, sums []float64, mode int) {
	sg = sg[:n]
	nv := 0
	if usePolyRows {
		w := polyGroup()
		nv = n &^ (w - 1)
		var lp [specialGroup][polyChunk]float64
		var out [polyChunk / 4]uint8
		for r0 := 0; r0 < rows; r0 += specialGroup {
			g := min(specialGroup, rows-r0)
			for c0 := 0; c0 < nv; c0 += polyChunk {
				c1 := min(c0+polyChunk, nv)
				s := sg[c0:c1]
				for i := range g {
					row := m[(r0+i)*stride+c0 : (r0+i)*stride+c1]
					polyRows(row, s, scale, &lp[i][0], &out[0], mode)
					finishFlagged(row, s, lp[i][:len(row)], out[:len(row)/w], w, scale, mode)
				}
				if mode&polyLog != 0 {
					addSums(sums[r0:r0+g], &lp, c1-c0)
				}
			}
		}
	}
	if nv == n {
		return
	}
	for r := range rows {
		row, s := m[r*stride+nv:r*stride+n], sg[nv:]
		switch mode {
		case polyLam:
			invMillsRowGeneric(row, s, scale)
		case polyLog:
			sums[r] = logPhiRowAcc(sums[r], row, s)
		default:
			sums[r] = logPhiMillsRowAcc(sums[r], row, s, scale)
		}
	}
}

// finishFlagged computes the margins of a kernel chunk that the kernel
// left to the scalar functions (bit b of out[g]: margin w·g + b), as the
// row functions do.
func finishFlagged(row, s, lp []float64, out []uint8, w int, scale float64, mode int) {
	for g, o := range out {
		for b := 0; o != 0; b, o = b+1, o>>1 {
			if o&1 == 0 {
				continue
			}
			j := w*g + b
			x := s[j] * row[j]
			switch mode {
			case polyLam:
				row[j] = scale * s[j] * InvMills(x)
			case polyLog:
				lp[j] = LogPhi(x)
			default:
				var lam float64
				lp[j], lam = LogPhiMills(x)
				row[j] = scale * s[j] * lam
			}
		}
	}
}

// addSums adds lp[i][0 … n−1] to sums[i] in order, for the len(sums) ≤
// specialGroup rows of a group, the rows' chains of additions
// interleaved.
func addSums(sums []float64, lp *[specialGroup][polyChunk]float64, n int) {
	if len(sums) == specialGroup {
		s0, s1, s2, s3 := sums[0], sums[1], sums[2], sums[3]
		l0, l1, l2, l3 := lp[0][:n], lp[1][:n], lp[2][:n], lp[3][:n]
		for j := range l0 {
			s0 += l0[j]
			s1 += l1[j]
			s2 += l2[j]
			s3 += l3[j]
		}
		sums[0], sums[1], sums[2], sums[3] = s0, s1, s2, s3
		return
	}
	for i := range sums {
		s := sums[i]
		for _, v := range lp[i][:n] {
			s += v
		}
		sums[i] = s
	}
}
