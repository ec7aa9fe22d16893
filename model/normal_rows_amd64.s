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

// func polyRowsAVX2(row, sg []float64, scale float64, lp *float64, out *uint8, mode int)
//
// For each group of four margins j: x = s_j·row[j]; lanes with 0 < x < 6
// (right) or −8 < x ≤ 0 (left) are evaluated by the tables polyLamTab and
// polyLogTab; out[j/4] gets a bit per lane outside both ranges (left for
// the caller). Mode bit 1: row[j] = (scale·s_j)·λ for evaluated lanes;
// mode bit 2: lp[j] = log Φ(x) (evaluated lanes; the others undefined).
// len(row) must be a multiple of 4 and len(sg) ≥ len(row).
TEXT ·polyRowsAVX2(SB), NOSPLIT, $0-80
	MOVQ row_base+0(FP), SI
	MOVQ row_len+8(FP), CX
	MOVQ sg_base+24(FP), DX
	VBROADCASTSD scale+48(FP), Y15
	MOVQ lp+56(FP), DI
	MOVQ out+64(FP), R8
	LEAQ ·polyLamTab(SB), BX
	LEAQ ·polyLogTab(SB), R9
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
	VMOVMSKPD Y14, R13
	XORQ    $15, R13
	MOVB    R13, (R8)
	INCQ    R8

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
	VMULPD    Y15, Y1, Y4                      // scale·s
	VMULPD    Y3, Y4, Y4                       // (scale·s)·λ
	VBLENDVPD Y14, Y4, Y0, Y4
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
	VMOVUPD   Y4, (DI)(AX*1)

next:
	ADDQ $32, AX
	CMPQ AX, CX
	JLT  loop

done:
	VZEROUPPER
	RET
