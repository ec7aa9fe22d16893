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
