//go:build !purego

#include "textflag.h"

// PAIR loads coefficients off/8 and off/8+1 of the four lanes' pieces
// (element indices in R10, R11, R12, R13) into even and odd: two 16-byte
// loads per half, transposed by unpacking. Clobbers Y8, Y10.
#define PAIR(off, tab, even, odd) \
	VMOVUPD     off(tab)(R10*8), X8; \
	VINSERTF128 $1, off(tab)(R12*8), Y8, Y8; \
	VMOVUPD     off(tab)(R11*8), X10; \
	VINSERTF128 $1, off(tab)(R13*8), Y10, Y10; \
	VUNPCKLPD   Y10, Y8, even; \
	VUNPCKHPD   Y10, Y8, odd

// ESTRIN evaluates each lane's degree-10 polynomial of table tab at u
// (Y11), with u² in Y12 and u⁴ in Y13, into Y3, by the fused
// multiply-adds of estrin in normal.go, in its order. Clobbers Y4, Y6,
// Y7, Y8, Y10.
#define ESTRIN(tab) \
	PAIR(0, tab, Y3, Y7); VFMADD231PD Y11, Y7, Y3; \
	PAIR(16, tab, Y4, Y7); VFMADD231PD Y11, Y7, Y4; \
	VFMADD231PD Y12, Y4, Y3; \
	PAIR(32, tab, Y4, Y7); VFMADD231PD Y11, Y7, Y4; \
	PAIR(48, tab, Y6, Y7); VFMADD231PD Y11, Y7, Y6; \
	VFMADD231PD Y12, Y6, Y4; \
	PAIR(64, tab, Y6, Y7); VFMADD231PD Y11, Y7, Y6; \
	PAIR(80, tab, Y7, Y8); VFMADD231PD Y12, Y7, Y6; \
	VFMADD231PD Y13, Y6, Y4; \
	VFMADD231PD Y13, Y4, Y3

// NPDF computes φ(x) for x in X into R as npdf in normal.go does:
// p = x², e = x·x − p (fused), 1/√(2π)·exp(−p/2)·(1 − e/2), with exp as
// the FMA branch of the Go runtime's math.Exp on amd64 (archExp: exponent
// k = round(a·log₂e), reduction by the two halves of ln 2, r/16, the
// degree-8 Taylor polynomial and four squarings, then scaling by 2^k),
// for |x| < 37 (no special case of archExp arises). K must be the ymm
// register of KX. Clobbers E, K, T.
#define NPDF(X, R, E, K, KX, T) \
	VMULPD       X, X, R; \
	VMOVUPD      R, E; \
	VFMSUB231PD  X, X, E; \
	VMULPD       ·cdfConsts+32(SB), R, R; \
	VMULPD       ·cdfConsts+64(SB), R, K; \
	VCVTPD2DQY   K, KX; \
	VCVTDQ2PD    KX, T; \
	VFNMADD231PD ·cdfConsts+96(SB), T, R; \
	VFNMADD231PD ·cdfConsts+128(SB), T, R; \
	VMULPD       ·cdfConsts+160(SB), R, R; \
	VMOVUPD      ·cdfConsts+192(SB), T; \
	VFMADD213PD  ·cdfConsts+224(SB), R, T; \
	VFMADD213PD  ·cdfConsts+256(SB), R, T; \
	VFMADD213PD  ·cdfConsts+288(SB), R, T; \
	VFMADD213PD  ·cdfConsts+320(SB), R, T; \
	VFMADD213PD  ·cdfConsts+352(SB), R, T; \
	VFMADD213PD  ·cdfConsts+384(SB), R, T; \
	VFMADD213PD  ·cdfConsts+416(SB), R, T; \
	VMULPD       T, R, R; \
	VADDPD       ·cdfConsts+448(SB), R, T; \
	VMULPD       T, R, R; \
	VADDPD       ·cdfConsts+448(SB), R, T; \
	VMULPD       T, R, R; \
	VADDPD       ·cdfConsts+448(SB), R, T; \
	VMULPD       T, R, R; \
	VADDPD       ·cdfConsts+448(SB), R, T; \
	VFMADD213PD  ·cdfConsts+416(SB), T, R; \
	VPMOVSXDQ    KX, K; \
	VPADDQ       ·cdfInts+0(SB), K, K; \
	VPSLLQ       $52, K, K; \
	VMULPD       K, R, R; \
	VMULPD       ·cdfConsts+480(SB), R, R; \
	VMULPD       ·polyRowsConsts+160(SB), E, E; \
	VXORPD       ·polyRowsConsts+224(SB), E, E; \
	VMOVUPD      ·cdfConsts+416(SB), T; \
	VSUBPD       E, T, T; \
	VMULPD       T, R, R

// func polyRowsAVX2(row, sg []float64, scale float64, lp *float64, out *uint8, mode int)
//
// For each group of four margins j: x = s_j·row[j]; lanes with 0 < x < 6
// (right) or −8 < x ≤ 0 (left) are evaluated by the tables polyLamTab and
// polyLogTab, lanes with 8 ≤ x < 37 (the right tail) as LogPhiMills does
// there (λ = φ(x), log Φ = −φ(x)/f(x), f from millsTail's continued
// fraction at each lane's depth); out[j/4] gets a bit per lane outside
// these ranges (left for the caller). Mode bit 1: row[j] = (scale·s_j)·λ
// for evaluated lanes; mode bit 2: lp[j] = log Φ(x) (evaluated lanes; the
// others undefined). len(row) must be a multiple of 4 and
// len(sg) ≥ len(row).
//
// Locals: 0(SP) the tail lanes' φ, 32(SP) their log Φ, 64(SP) their mask;
// 96(SP) and 128(SP) the next group's φ and log Φ, 192(SP) whether they are
// computed.
TEXT ·polyRowsAVX2(SB), NOSPLIT, $200-80
	MOVQ row_base+0(FP), SI
	MOVQ row_len+8(FP), CX
	MOVQ sg_base+24(FP), DX
	VBROADCASTSD scale+48(FP), Y15
	MOVQ lp+56(FP), DI
	MOVQ out+64(FP), R8
	LEAQ ·polyLamTab(SB), BX
	LEAQ ·polyLogTab(SB), R9
	MOVQ $0, 192(SP)
	SHLQ $3, CX
	XORQ AX, AX
	TESTQ CX, CX
	JLE  done

loop:
	VMOVUPD (SI)(AX*1), Y0           // m
	VMOVUPD (DX)(AX*1), Y1           // s
	VMULPD  Y0, Y1, Y2               // x = s·m

	// Y5 = right (0 < x < 6), Y6 = left (x ≤ 0 and x > −8), Y14 = either.
	VXORPD  Y3, Y3, Y3
	VCMPPD  $0x1e, Y3, Y2, Y4                   // x > 0
	VCMPPD  $0x11, ·polyRowsConsts+0(SB), Y2, Y5 // x < rightPolyMax
	VANDPD  Y4, Y5, Y5
	VCMPPD  $0x12, Y3, Y2, Y6                   // x ≤ 0
	VCMPPD  $0x1e, ·polyRowsConsts+32(SB), Y2, Y7 // x > tailSwitch
	VANDPD  Y7, Y6, Y6
	VORPD   Y6, Y5, Y14

	// The right tail: Y13 = (x ≥ 8 and x < 37), kept at 64(SP). Its
	// continued fraction is a chain of divisions, so the tails of this
	// group and the next are computed together (two chains in flight) and
	// the next group's kept at 96(SP) (φ), 128(SP) (log Φ), with 192(SP)
	// set.
	VCMPPD    $0x1d, ·tailConsts+0(SB), Y2, Y6  // x ≥ −tailSwitch
	VCMPPD    $0x11, ·tailConsts+32(SB), Y2, Y7 // x < tailMax
	VANDPD    Y7, Y6, Y13
	VMOVUPD   Y13, 64(SP)
	VORPD     Y13, Y14, Y6
	VMOVMSKPD Y6, R13
	XORQ      $15, R13
	MOVB      R13, (R8)
	INCQ      R8
	CMPQ      192(SP), $0
	JEQ       tailcompute
	MOVQ      $0, 192(SP)                      // computed with the previous group
	VMOVUPD   96(SP), Y6
	VMOVUPD   Y6, 0(SP)
	VMOVUPD   128(SP), Y6
	VMOVUPD   Y6, 32(SP)
	JMP       notail

tailcompute:
	VXORPD    Y12, Y12, Y12                    // the next group's tail lanes
	VMOVUPD   Y2, Y10                          // the next group's x (this one's if none)
	LEAQ      32(AX), R12
	CMPQ      R12, CX
	JGE       tailany
	VMOVUPD   (SI)(R12*1), Y10
	VMULPD    (DX)(R12*1), Y10, Y10            // s·m
	VCMPPD    $0x1d, ·tailConsts+0(SB), Y10, Y6
	VCMPPD    $0x11, ·tailConsts+32(SB), Y10, Y7
	VANDPD    Y7, Y6, Y12

tailany:
	VORPD     Y12, Y13, Y6
	VMOVMSKPD Y6, R13
	TESTQ     R13, R13
	JZ        notail
	MOVQ      $1, 192(SP)
	NPDF(Y2, Y3, Y6, Y4, X4, Y7)               // φ(x)
	VMOVUPD   Y3, 0(SP)
	NPDF(Y10, Y3, Y6, Y4, X4, Y7)              // the next group's
	VMOVUPD   Y3, 96(SP)
	// f = x + 1/g, g from x by g = x + k/g for k = n, …, 2, n = min(20,
	// 9 + int(500/x²)) ≤ 16 per lane: every lane steps from k = 16 and
	// keeps its g while k > n.
	VMULPD      Y2, Y2, Y6
	VMOVUPD     ·tailConsts+64(SB), Y7         // 500
	VDIVPD      Y6, Y7, Y7
	VCVTTPD2DQY Y7, X7
	VPADDD      ·tailInts+0(SB), X7, X7        // + 9
	VPMINSD     ·tailInts+16(SB), X7, X7       // min(tailTerms, ·)
	VCVTDQ2PD   X7, Y7                         // n
	VMULPD      Y10, Y10, Y6
	VMOVUPD     ·tailConsts+64(SB), Y11
	VDIVPD      Y6, Y11, Y11
	VCVTTPD2DQY Y11, X11
	VPADDD      ·tailInts+0(SB), X11, X11
	VPMINSD     ·tailInts+16(SB), X11, X11
	VCVTDQ2PD   X11, Y11                       // the next group's n
	VMOVUPD     Y2, Y8                         // g = x
	VMOVUPD     Y10, Y13
	MOVQ        $16, R12
tailloop:
	CVTSQ2SD     R12, X9
	VBROADCASTSD X9, Y9                        // k
	VCMPPD       $0x12, Y7, Y9, Y6             // k ≤ n
	VDIVPD       Y8, Y9, Y4
	VADDPD       Y2, Y4, Y4                    // x + k/g
	VBLENDVPD    Y6, Y4, Y8, Y8
	VCMPPD       $0x12, Y11, Y9, Y6
	VDIVPD       Y13, Y9, Y3
	VADDPD       Y10, Y3, Y3
	VBLENDVPD    Y6, Y3, Y13, Y13
	DECQ         R12
	CMPQ         R12, $2
	JGE          tailloop
	VMOVUPD      ·cdfConsts+416(SB), Y9
	VDIVPD       Y8, Y9, Y4                    // rem = 1/g
	VADDPD       Y2, Y4, Y4                    // f = x + rem
	VMOVUPD      0(SP), Y3
	VXORPD       ·polyRowsConsts+224(SB), Y3, Y3
	VDIVPD       Y4, Y3, Y3                    // −φ/f
	VMOVUPD      Y3, 32(SP)
	VDIVPD       Y13, Y9, Y4
	VADDPD       Y10, Y4, Y4
	VMOVUPD      96(SP), Y3
	VXORPD       ·polyRowsConsts+224(SB), Y3, Y3
	VDIVPD       Y4, Y3, Y3
	VMOVUPD      Y3, 128(SP)

notail:
	// y = x (right) or t = −x (left); k = int(y·8) or int(t·4) (0 on the
	// lanes outside, so that their loads stay in the tables);
	// u = 16·y − (2k+1) or 8·t − (2k+1), as in polyRight and polyLeft.
	VXORPD    ·polyRowsConsts+224(SB), Y2, Y7  // −x
	VBLENDVPD Y5, Y2, Y7, Y7                   // y
	VMOVUPD   ·polyRowsConsts+96(SB), Y8       // leftScale
	VBLENDVPD Y5, ·polyRowsConsts+64(SB), Y8, Y8 // rightScale or leftScale
	VMULPD    Y8, Y7, Y9
	VANDPD    Y14, Y9, Y9
	VCVTTPD2DQY Y9, X9                         // k
	VPADDD    X9, X9, X10
	VPADDD    ·polyRowsInts+0(SB), X10, X10    // 2k+1
	VCVTDQ2PD X10, Y10
	VMOVUPD   ·polyRowsConsts+64(SB), Y11      // 2·leftScale (= rightScale)
	VBLENDVPD Y5, ·polyRowsConsts+128(SB), Y11, Y11 // 2·rightScale or 2·leftScale
	VMULPD    Y7, Y11, Y11
	VSUBPD    Y10, Y11, Y11                    // u
	VMULPD    Y11, Y11, Y12                    // u²
	VMULPD    Y12, Y12, Y13                    // u⁴

	// Element index of each lane's piece in the combined tables:
	// (k + leftPieces on the right lanes)·polyStride.
	VANDPD      ·polyRowsConsts+256(SB), Y5, Y10
	VCVTTPD2DQY Y10, X10
	VPADDD      X10, X9, X9
	VPMULLD     ·polyRowsInts+16(SB), X9, X9
	VMOVD       X9, R10
	VPEXTRD     $1, X9, R11
	VPEXTRD     $2, X9, R12
	VPEXTRD     $3, X9, R13

	TESTQ $1, mode+72(FP)
	JZ    logpart
	ESTRIN(BX)                                 // λ
	VMOVUPD   64(SP), Y6
	VBLENDVPD Y6, 0(SP), Y3, Y3                // the tail: λ = φ
	VMULPD    Y15, Y1, Y4                      // scale·s
	VMULPD    Y3, Y4, Y4                       // (scale·s)·λ
	VORPD     Y6, Y14, Y6
	VBLENDVPD Y6, Y4, Y0, Y4
	VMOVUPD   Y4, (SI)(AX*1)

logpart:
	TESTQ $2, mode+72(FP)
	JZ    next
	ESTRIN(R9)                                 // G (left) or −log Φ (right)
	VXORPD    ·polyRowsConsts+224(SB), Y3, Y4  // right: log Φ = −(−log Φ)
	VMULPD    ·polyRowsConsts+160(SB), Y2, Y6  // left: ((−0.5·x)·x − ½log 2π) + G
	VMULPD    Y2, Y6, Y6
	VSUBPD    ·polyRowsConsts+192(SB), Y6, Y6
	VADDPD    Y3, Y6, Y6
	VBLENDVPD Y5, Y4, Y6, Y4
	VMOVUPD   64(SP), Y6
	VBLENDVPD Y6, 32(SP), Y4, Y4               // the tail: −φ/f
	VMOVUPD   Y4, (DI)(AX*1)

next:
	ADDQ $32, AX
	CMPQ AX, CX
	JLT  loop

done:
	VZEROUPPER
	RET

// func cdfRowsAVX2(out, m []float64, flags *uint8)
//
// For each group of four margins j: out[j] += Φ(m_j) for lanes with
// −8 < m ≤ 0 (npdf(m)/M(−m)) or 0 < m < 8 (1/P(m)), with the arithmetic of
// normCDF: the pieces of polyLeft, estrin's fused multiply-adds, and
// npdf's exponential computed as the FMA branch of the Go runtime's
// math.Exp on amd64 (archExp: exponent k = round(a·log₂e), reduction by
// the two halves of ln 2, r/16, the degree-8 Taylor polynomial and four
// squarings, then scaling by 2^k; the arguments here, −m²/2 > −32, need
// none of its special cases). flags[j/4] gets a bit per lane outside both
// ranges (for the caller). len(m) must be a multiple of 4 and
// len(out) ≥ len(m).
TEXT ·cdfRowsAVX2(SB), NOSPLIT, $0-56
	MOVQ out_base+0(FP), DI
	MOVQ m_base+24(FP), SI
	MOVQ m_len+32(FP), CX
	MOVQ flags+48(FP), R8
	LEAQ ·cdfTab(SB), BX
	SHLQ $3, CX
	XORQ AX, AX
	TESTQ CX, CX
	JLE  cdfdone

cdfloop:
	VMOVUPD (SI)(AX*1), Y2                      // x = m

	// Y5 = right (0 < x < 8), Y6 = left (x ≤ 0 and x > −8), Y14 = either.
	VXORPD  Y3, Y3, Y3
	VCMPPD  $0x1e, Y3, Y2, Y4                   // x > 0
	VXORPD  ·polyRowsConsts+224(SB), Y2, Y7     // −x
	VCMPPD  $0x1e, ·polyRowsConsts+32(SB), Y7, Y5 // −x > tailSwitch, i.e. x < −tailSwitch
	VANDPD  Y4, Y5, Y5
	VCMPPD  $0x12, Y3, Y2, Y6                   // x ≤ 0
	VCMPPD  $0x1e, ·polyRowsConsts+32(SB), Y2, Y4 // x > tailSwitch
	VANDPD  Y4, Y6, Y6
	VORPD   Y6, Y5, Y14
	VMOVMSKPD Y14, R13
	XORQ    $15, R13
	MOVB    R13, (R8)
	INCQ    R8

	// y = x (right) or −x (left); k = int(4y) (0 outside); u = 8y − (2k+1).
	VBLENDVPD Y5, Y2, Y7, Y7                    // y
	VMULPD    ·polyRowsConsts+96(SB), Y7, Y9    // y·leftScale
	VANDPD    Y14, Y9, Y9
	VCVTTPD2DQY Y9, X9                          // k
	VPADDD    X9, X9, X10
	VPADDD    ·polyRowsInts+0(SB), X10, X10     // 2k+1
	VCVTDQ2PD X10, Y10
	VMULPD    ·polyRowsConsts+64(SB), Y7, Y11   // 2·leftScale·y
	VSUBPD    Y10, Y11, Y11                     // u
	VMULPD    Y11, Y11, Y12                     // u²
	VMULPD    Y12, Y12, Y13                     // u⁴
	VANDPD    ·cdfConsts+0(SB), Y5, Y10         // cdfPieces/2 on the right lanes
	VCVTTPD2DQY Y10, X10
	VPADDD    X10, X9, X9
	VPMULLD   ·polyRowsInts+16(SB), X9, X9
	VMOVD     X9, R10
	VPEXTRD   $1, X9, R11
	VPEXTRD   $2, X9, R12
	VPEXTRD   $3, X9, R13
	ESTRIN(BX)                                  // M(−x) (left) or P(x) (right)
	VMOVUPD   Y3, Y15

	NPDF(Y2, Y0, Y1, Y4, X4, Y6)                // npdf(x)
	VDIVPD    Y15, Y0, Y0                       // left: npdf(x)/M(−x)
	VMOVUPD   ·cdfConsts+416(SB), Y6
	VDIVPD    Y15, Y6, Y6                       // right: 1/P(x)
	VBLENDVPD Y5, Y6, Y0, Y0                    // Φ(x)
	VMOVUPD   (DI)(AX*1), Y3
	VADDPD    Y3, Y0, Y0                        // out[j] + Φ(x)
	VBLENDVPD Y14, Y0, Y3, Y0                   // out[j] unchanged outside
	VMOVUPD   Y0, (DI)(AX*1)

	ADDQ $32, AX
	CMPQ AX, CX
	JLT  cdfloop

cdfdone:
	VZEROUPPER
	RET
