//go:build !purego

#include "textflag.h"

// func fmaPeak256(n int)
//
// n rounds of 12 independent VFMADD231PD on 256-bit registers: 48 fused
// multiply-adds (96 flops) a round, enough independent chains to keep
// both FMA ports of a core busy whatever its latency (4–5 cycles).
TEXT ·fmaPeak256(SB), NOSPLIT, $0-8
	MOVQ   n+0(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	VXORPD Y12, Y12, Y12
	VXORPD Y13, Y13, Y13
	TESTQ  CX, CX
	JLE    done256

loop256:
	VFMADD231PD Y12, Y13, Y0
	VFMADD231PD Y12, Y13, Y1
	VFMADD231PD Y12, Y13, Y2
	VFMADD231PD Y12, Y13, Y3
	VFMADD231PD Y12, Y13, Y4
	VFMADD231PD Y12, Y13, Y5
	VFMADD231PD Y12, Y13, Y6
	VFMADD231PD Y12, Y13, Y7
	VFMADD231PD Y12, Y13, Y8
	VFMADD231PD Y12, Y13, Y9
	VFMADD231PD Y12, Y13, Y10
	VFMADD231PD Y12, Y13, Y11
	DECQ        CX
	JNZ         loop256

done256:
	VZEROUPPER
	RET

// func fmaPeak512(n int)
//
// The same with 512-bit registers: 12 VFMADD231PD of 8 lanes, 192 flops
// a round.
TEXT ·fmaPeak512(SB), NOSPLIT, $0-8
	MOVQ    n+0(FP), CX
	VPXORQ  Z0, Z0, Z0
	VPXORQ  Z1, Z1, Z1
	VPXORQ  Z2, Z2, Z2
	VPXORQ  Z3, Z3, Z3
	VPXORQ  Z4, Z4, Z4
	VPXORQ  Z5, Z5, Z5
	VPXORQ  Z6, Z6, Z6
	VPXORQ  Z7, Z7, Z7
	VPXORQ  Z8, Z8, Z8
	VPXORQ  Z9, Z9, Z9
	VPXORQ  Z10, Z10, Z10
	VPXORQ  Z11, Z11, Z11
	VPXORQ  Z12, Z12, Z12
	VPXORQ  Z13, Z13, Z13
	TESTQ   CX, CX
	JLE     done512

loop512:
	VFMADD231PD Z12, Z13, Z0
	VFMADD231PD Z12, Z13, Z1
	VFMADD231PD Z12, Z13, Z2
	VFMADD231PD Z12, Z13, Z3
	VFMADD231PD Z12, Z13, Z4
	VFMADD231PD Z12, Z13, Z5
	VFMADD231PD Z12, Z13, Z6
	VFMADD231PD Z12, Z13, Z7
	VFMADD231PD Z12, Z13, Z8
	VFMADD231PD Z12, Z13, Z9
	VFMADD231PD Z12, Z13, Z10
	VFMADD231PD Z12, Z13, Z11
	DECQ        CX
	JNZ         loop512

done512:
	VZEROUPPER
	RET

// func divPeak256(n int)
//
// n rounds of 12 independent VDIVPD on 256-bit registers (48 divisions a
// round): enough chains to keep a core's divider busy whatever its latency.
TEXT ·divPeak256(SB), NOSPLIT, $0-8
	MOVQ         n+0(FP), CX
	VBROADCASTSD divnum<>+0(SB), Y0
	VMOVUPD      Y0, Y1
	VMOVUPD      Y0, Y2
	VMOVUPD      Y0, Y3
	VMOVUPD      Y0, Y4
	VMOVUPD      Y0, Y5
	VMOVUPD      Y0, Y6
	VMOVUPD      Y0, Y7
	VMOVUPD      Y0, Y8
	VMOVUPD      Y0, Y9
	VMOVUPD      Y0, Y10
	VMOVUPD      Y0, Y11
	VBROADCASTSD divnum<>+8(SB), Y12
	TESTQ        CX, CX
	JLE          ddone256

dloop256:
	VDIVPD Y12, Y0, Y0
	VDIVPD Y12, Y1, Y1
	VDIVPD Y12, Y2, Y2
	VDIVPD Y12, Y3, Y3
	VDIVPD Y12, Y4, Y4
	VDIVPD Y12, Y5, Y5
	VDIVPD Y12, Y6, Y6
	VDIVPD Y12, Y7, Y7
	VDIVPD Y12, Y8, Y8
	VDIVPD Y12, Y9, Y9
	VDIVPD Y12, Y10, Y10
	VDIVPD Y12, Y11, Y11
	DECQ   CX
	JNZ    dloop256

ddone256:
	VZEROUPPER
	RET

// func divPeak512(n int)
//
// The same with 512-bit registers: 96 divisions a round.
TEXT ·divPeak512(SB), NOSPLIT, $0-8
	MOVQ         n+0(FP), CX
	VBROADCASTSD divnum<>+0(SB), Z0
	VMOVUPD      Z0, Z1
	VMOVUPD      Z0, Z2
	VMOVUPD      Z0, Z3
	VMOVUPD      Z0, Z4
	VMOVUPD      Z0, Z5
	VMOVUPD      Z0, Z6
	VMOVUPD      Z0, Z7
	VMOVUPD      Z0, Z8
	VMOVUPD      Z0, Z9
	VMOVUPD      Z0, Z10
	VMOVUPD      Z0, Z11
	VBROADCASTSD divnum<>+8(SB), Z12
	TESTQ        CX, CX
	JLE          ddone512

dloop512:
	VDIVPD Z12, Z0, Z0
	VDIVPD Z12, Z1, Z1
	VDIVPD Z12, Z2, Z2
	VDIVPD Z12, Z3, Z3
	VDIVPD Z12, Z4, Z4
	VDIVPD Z12, Z5, Z5
	VDIVPD Z12, Z6, Z6
	VDIVPD Z12, Z7, Z7
	VDIVPD Z12, Z8, Z8
	VDIVPD Z12, Z9, Z9
	VDIVPD Z12, Z10, Z10
	VDIVPD Z12, Z11, Z11
	DECQ   CX
	JNZ    dloop512

ddone512:
	VZEROUPPER
	RET

// The dividend's start (a continued fraction's size) and a divisor that
// keeps it normal for billions of rounds.
DATA divnum<>+0(SB)/8, $17.3
DATA divnum<>+8(SB)/8, $1.0000001
GLOBL divnum<>(SB), RODATA, $16
