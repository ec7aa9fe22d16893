//go:build !purego

#include "textflag.h"

// func dotCols5AVX2(t *[5]float64, c0, c1, c2, c3, c4, out *float64, n int)
//
// Four margins a round: Y0–Y4 hold t0…t4 broadcast; each product is one
// VMULPD and each sum one VADDPD, in dotRows5's order (s0 = t0·c0 + t4·c4,
// then (s0 + t2·c2) + (t1·c1 + t3·c3)), so the lanes round as the scalar
// loop does.
TEXT ·dotCols5AVX2(SB), NOSPLIT, $0-64
	MOVQ         t+0(FP), AX
	MOVQ         c0+8(FP), R8
	MOVQ         c1+16(FP), R9
	MOVQ         c2+24(FP), R10
	MOVQ         c3+32(FP), R11
	MOVQ         c4+40(FP), R12
	MOVQ         out+48(FP), DI
	MOVQ         n+56(FP), CX
	VBROADCASTSD 0(AX), Y0
	VBROADCASTSD 8(AX), Y1
	VBROADCASTSD 16(AX), Y2
	VBROADCASTSD 24(AX), Y3
	VBROADCASTSD 32(AX), Y4
	XORQ         SI, SI
	SHRQ         $2, CX
	JZ           done

loop:
	VMULPD (R8)(SI*8), Y0, Y5
	VMULPD (R12)(SI*8), Y4, Y6
	VADDPD Y6, Y5, Y5
	VMULPD (R10)(SI*8), Y2, Y6
	VADDPD Y6, Y5, Y5
	VMULPD (R9)(SI*8), Y1, Y6
	VMULPD (R11)(SI*8), Y3, Y7
	VADDPD Y7, Y6, Y6
	VADDPD Y6, Y5, Y5
	VMOVUPD Y5, (DI)(SI*8)
	ADDQ   $4, SI
	DECQ   CX
	JNZ    loop

done:
	VZEROUPPER
	RET

// func addRows5x4AVX2(gr *float64, gs int, w *float64, ws int, u *float64, us int, n int)
//
// Four gradient rows at once: row i (gr + i·gs, five entries) gets
// w_i[k]·u_k added for k = 0 … n−1 in order (w_i at w + i·ws, u_k at
// u + k·us), each product rounded by VMULPD/VMULSD and added by
// VADDPD/VADDSD, as addRows5 does. Entries 0–3 of a row are one Y
// accumulator (Y0–Y3), entry 4 a scalar (X4–X7): eight chains of
// additions in flight.
TEXT ·addRows5x4AVX2(SB), NOSPLIT, $0-56
	MOVQ gr+0(FP), DI
	MOVQ gs+8(FP), R13
	SHLQ $3, R13
	LEAQ (DI)(R13*1), AX
	LEAQ (AX)(R13*1), BX
	LEAQ (BX)(R13*1), DX
	MOVQ w+16(FP), R8
	MOVQ ws+24(FP), R13
	SHLQ $3, R13
	LEAQ (R8)(R13*1), R9
	LEAQ (R9)(R13*1), R10
	LEAQ (R10)(R13*1), R11
	MOVQ u+32(FP), SI
	MOVQ us+40(FP), R12
	SHLQ $3, R12
	MOVQ n+48(FP), CX

	// Rows: gr at DI, AX, BX, DX; w at R8, R9, R10, R11.
	VMOVUPD 0(DI), Y0
	VMOVUPD 0(AX), Y1
	VMOVUPD 0(BX), Y2
	VMOVUPD 0(DX), Y3
	VMOVSD  32(DI), X4
	VMOVSD  32(AX), X5
	VMOVSD  32(BX), X6
	VMOVSD  32(DX), X7
	XORQ    R14, R14
	TESTQ   CX, CX
	JZ      store

loop:
	VMOVUPD      0(SI), Y8
	VMOVSD       32(SI), X9
	VBROADCASTSD (R8)(R14*8), Y10
	VBROADCASTSD (R9)(R14*8), Y11
	VBROADCASTSD (R10)(R14*8), Y12
	VBROADCASTSD (R11)(R14*8), Y13
	VMULPD       Y8, Y10, Y14
	VADDPD       Y14, Y0, Y0
	VMULPD       Y8, Y11, Y15
	VADDPD       Y15, Y1, Y1
	VMULPD       Y8, Y12, Y14
	VADDPD       Y14, Y2, Y2
	VMULPD       Y8, Y13, Y15
	VADDPD       Y15, Y3, Y3
	VMULSD       X9, X10, X10
	VADDSD       X10, X4, X4
	VMULSD       X9, X11, X11
	VADDSD       X11, X5, X5
	VMULSD       X9, X12, X12
	VADDSD       X12, X6, X6
	VMULSD       X9, X13, X13
	VADDSD       X13, X7, X7
	ADDQ         R12, SI
	INCQ         R14
	CMPQ         R14, CX
	JLT          loop

store:
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 0(AX)
	VMOVUPD Y2, 0(BX)
	VMOVUPD Y3, 0(DX)
	VMOVSD  X4, 32(DI)
	VMOVSD  X5, 32(AX)
	VMOVSD  X6, 32(BX)
	VMOVSD  X7, 32(DX)
	VZEROUPPER
	RET
