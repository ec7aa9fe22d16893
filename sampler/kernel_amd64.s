//go:build !purego

#include "textflag.h"

// func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL eaxArg+0(FP), AX
	MOVL ecxArg+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbv0() (eax uint32)
TEXT ·xgetbv0(SB), NOSPLIT, $0-4
	MOVL $0, CX
	XGETBV
	MOVL AX, eax+0(FP)
	RET

// func prefetch(x []float64)
TEXT ·prefetch(SB), NOSPLIT, $0-24
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	LEAQ (SI)(CX*8), CX

pfloop:
	CMPQ       SI, CX
	JGE        pfdone
	PREFETCHT0 (SI)
	ADDQ       $64, SI
	JMP        pfloop

pfdone:
	RET

// func dotFMA(x, y []float64) float64
//
// The arithmetic of dotGeneric: eight lane accumulators (two YMM registers)
// over blocks of 8, then one block of 4 into the first register, a fixed
// reduction tree, and a scalar FMA tail. len(y) ≥ len(x) is checked by the
// caller.
TEXT ·dotFMA(SB), NOSPLIT, $0-56
	MOVQ   x_base+0(FP), SI
	MOVQ   x_len+8(FP), CX
	MOVQ   y_base+24(FP), DI
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	XORQ   AX, AX
	MOVQ   CX, DX
	ANDQ   $-8, DX
	JZ     dot4

dot8:
	VMOVUPD     (SI)(AX*8), Y4
	VMOVUPD     32(SI)(AX*8), Y5
	VFMADD231PD (DI)(AX*8), Y4, Y0
	VFMADD231PD 32(DI)(AX*8), Y5, Y1
	ADDQ        $8, AX
	CMPQ        AX, DX
	JLT         dot8

dot4:
	MOVQ CX, DX
	ANDQ $-4, DX
	CMPQ AX, DX
	JGE  dotreduce
	VMOVUPD     (SI)(AX*8), Y4
	VFMADD231PD (DI)(AX*8), Y4, Y0
	ADDQ        $4, AX

dotreduce:
	VADDPD       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VADDSD       X1, X0, X0
	CMPQ         AX, CX
	JGE          dotdone

dot1:
	VMOVSD      (SI)(AX*8), X4
	VFMADD231SD (DI)(AX*8), X4, X0
	INCQ        AX
	CMPQ        AX, CX
	JLT         dot1

dotdone:
	VZEROUPPER
	MOVSD X0, ret+48(FP)
	RET

// func dot4FMA(dst *[4]float64, x []float64, stride int, y []float64)
//
// dst[r] = dotFMA(x[r*stride : r*stride+len(y)], y) for r < 4, with the
// same arithmetic, y loaded once for the four rows. The caller checks
// len(x) ≥ 3*stride + len(y).
TEXT ·dot4FMA(SB), NOSPLIT, $0-64
	MOVQ   dst+0(FP), BX
	MOVQ   x_base+8(FP), SI
	MOVQ   stride+32(FP), R11
	MOVQ   y_base+40(FP), DI
	MOVQ   y_len+48(FP), CX
	SHLQ   $3, R11
	LEAQ   (SI)(R11*1), R8
	LEAQ   (R8)(R11*1), R9
	LEAQ   (R9)(R11*1), R10
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	XORQ   AX, AX
	MOVQ   CX, DX
	ANDQ   $-8, DX
	JZ     d4tail4

d4loop8:
	VMOVUPD     (DI)(AX*8), Y8
	VMOVUPD     32(DI)(AX*8), Y9
	VFMADD231PD (SI)(AX*8), Y8, Y0
	VFMADD231PD 32(SI)(AX*8), Y9, Y1
	VFMADD231PD (R8)(AX*8), Y8, Y2
	VFMADD231PD 32(R8)(AX*8), Y9, Y3
	VFMADD231PD (R9)(AX*8), Y8, Y4
	VFMADD231PD 32(R9)(AX*8), Y9, Y5
	VFMADD231PD (R10)(AX*8), Y8, Y6
	VFMADD231PD 32(R10)(AX*8), Y9, Y7
	ADDQ        $8, AX
	CMPQ        AX, DX
	JLT         d4loop8

d4tail4:
	MOVQ CX, DX
	ANDQ $-4, DX
	CMPQ AX, DX
	JGE  d4reduce
	VMOVUPD     (DI)(AX*8), Y8
	VFMADD231PD (SI)(AX*8), Y8, Y0
	VFMADD231PD (R8)(AX*8), Y8, Y2
	VFMADD231PD (R9)(AX*8), Y8, Y4
	VFMADD231PD (R10)(AX*8), Y8, Y6
	ADDQ        $4, AX

d4reduce:
	// Row r: lanes in Y(2r), Y(2r+1) → low element of X(2r).
	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y5, Y4, Y4
	VADDPD       Y7, Y6, Y6
	VEXTRACTF128 $1, Y0, X1
	VEXTRACTF128 $1, Y2, X3
	VEXTRACTF128 $1, Y4, X5
	VEXTRACTF128 $1, Y6, X7
	VADDPD       X1, X0, X0
	VADDPD       X3, X2, X2
	VADDPD       X5, X4, X4
	VADDPD       X7, X6, X6
	VPERMILPD    $1, X0, X1
	VPERMILPD    $1, X2, X3
	VPERMILPD    $1, X4, X5
	VPERMILPD    $1, X6, X7
	VADDSD       X1, X0, X0
	VADDSD       X3, X2, X2
	VADDSD       X5, X4, X4
	VADDSD       X7, X6, X6
	CMPQ         AX, CX
	JGE          d4done

d4loop1:
	VMOVSD      (DI)(AX*8), X8
	VFMADD231SD (SI)(AX*8), X8, X0
	VFMADD231SD (R8)(AX*8), X8, X2
	VFMADD231SD (R9)(AX*8), X8, X4
	VFMADD231SD (R10)(AX*8), X8, X6
	INCQ        AX
	CMPQ        AX, CX
	JLT         d4loop1

d4done:
	VMOVSD X0, 0(BX)
	VMOVSD X2, 8(BX)
	VMOVSD X4, 16(BX)
	VMOVSD X6, 24(BX)
	VZEROUPPER
	RET

// func axpyFMA(alpha float64, x, y []float64)
//
// y[i] = fma(alpha, x[i], y[i]) for i < len(x); len(y) ≥ len(x) is checked
// by the caller.
TEXT ·axpyFMA(SB), NOSPLIT, $0-56
	VBROADCASTSD alpha+0(FP), Y15
	MOVQ         x_base+8(FP), SI
	MOVQ         x_len+16(FP), CX
	MOVQ         y_base+32(FP), DI
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-16, DX
	JZ           axpy4

axpy16:
	VMOVUPD     (DI)(AX*8), Y0
	VMOVUPD     32(DI)(AX*8), Y1
	VMOVUPD     64(DI)(AX*8), Y2
	VMOVUPD     96(DI)(AX*8), Y3
	VFMADD231PD (SI)(AX*8), Y15, Y0
	VFMADD231PD 32(SI)(AX*8), Y15, Y1
	VFMADD231PD 64(SI)(AX*8), Y15, Y2
	VFMADD231PD 96(SI)(AX*8), Y15, Y3
	VMOVUPD     Y0, (DI)(AX*8)
	VMOVUPD     Y1, 32(DI)(AX*8)
	VMOVUPD     Y2, 64(DI)(AX*8)
	VMOVUPD     Y3, 96(DI)(AX*8)
	ADDQ        $16, AX
	CMPQ        AX, DX
	JLT         axpy16

axpy4:
	MOVQ CX, DX
	ANDQ $-4, DX
	CMPQ AX, DX
	JGE  axpy1check

axpy4loop:
	VMOVUPD     (DI)(AX*8), Y0
	VFMADD231PD (SI)(AX*8), Y15, Y0
	VMOVUPD     Y0, (DI)(AX*8)
	ADDQ        $4, AX
	CMPQ        AX, DX
	JLT         axpy4loop

axpy1check:
	CMPQ AX, CX
	JGE  axpydone

axpy1:
	VMOVSD      (DI)(AX*8), X0
	VFMADD231SD (SI)(AX*8), X15, X0
	VMOVSD      X0, (DI)(AX*8)
	INCQ        AX
	CMPQ        AX, CX
	JLT         axpy1

axpydone:
	VZEROUPPER
	RET

// func axpy4FMA(alpha *[4]float64, x []float64, stride int, y []float64)
//
// For r = 0, 1, 2, 3 in turn, y[i] = fma(alpha[r], x[r*stride+i], y[i]),
// i < len(y): four axpyFMA calls with one load and store of y. The caller
// checks len(x) ≥ 3*stride + len(y).
TEXT ·axpy4FMA(SB), NOSPLIT, $0-64
	MOVQ         alpha+0(FP), BX
	MOVQ         x_base+8(FP), SI
	MOVQ         stride+32(FP), R11
	MOVQ         y_base+40(FP), DI
	MOVQ         y_len+48(FP), CX
	VBROADCASTSD 0(BX), Y12
	VBROADCASTSD 8(BX), Y13
	VBROADCASTSD 16(BX), Y14
	VBROADCASTSD 24(BX), Y15
	SHLQ         $3, R11
	LEAQ         (SI)(R11*1), R8
	LEAQ         (R8)(R11*1), R9
	LEAQ         (R9)(R11*1), R10
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-16, DX
	JZ           a4tail4

a4loop16:
	VMOVUPD     (DI)(AX*8), Y0
	VMOVUPD     32(DI)(AX*8), Y1
	VMOVUPD     64(DI)(AX*8), Y2
	VMOVUPD     96(DI)(AX*8), Y3
	VFMADD231PD (SI)(AX*8), Y12, Y0
	VFMADD231PD 32(SI)(AX*8), Y12, Y1
	VFMADD231PD 64(SI)(AX*8), Y12, Y2
	VFMADD231PD 96(SI)(AX*8), Y12, Y3
	VFMADD231PD (R8)(AX*8), Y13, Y0
	VFMADD231PD 32(R8)(AX*8), Y13, Y1
	VFMADD231PD 64(R8)(AX*8), Y13, Y2
	VFMADD231PD 96(R8)(AX*8), Y13, Y3
	VFMADD231PD (R9)(AX*8), Y14, Y0
	VFMADD231PD 32(R9)(AX*8), Y14, Y1
	VFMADD231PD 64(R9)(AX*8), Y14, Y2
	VFMADD231PD 96(R9)(AX*8), Y14, Y3
	VFMADD231PD (R10)(AX*8), Y15, Y0
	VFMADD231PD 32(R10)(AX*8), Y15, Y1
	VFMADD231PD 64(R10)(AX*8), Y15, Y2
	VFMADD231PD 96(R10)(AX*8), Y15, Y3
	VMOVUPD     Y0, (DI)(AX*8)
	VMOVUPD     Y1, 32(DI)(AX*8)
	VMOVUPD     Y2, 64(DI)(AX*8)
	VMOVUPD     Y3, 96(DI)(AX*8)
	ADDQ        $16, AX
	CMPQ        AX, DX
	JLT         a4loop16

a4tail4:
	MOVQ CX, DX
	ANDQ $-4, DX
	CMPQ AX, DX
	JGE  a4tail1

a4loop4:
	VMOVUPD     (DI)(AX*8), Y0
	VFMADD231PD (SI)(AX*8), Y12, Y0
	VFMADD231PD (R8)(AX*8), Y13, Y0
	VFMADD231PD (R9)(AX*8), Y14, Y0
	VFMADD231PD (R10)(AX*8), Y15, Y0
	VMOVUPD     Y0, (DI)(AX*8)
	ADDQ        $4, AX
	CMPQ        AX, DX
	JLT         a4loop4

a4tail1:
	CMPQ AX, CX
	JGE  a4done

a4loop1:
	VMOVSD      (DI)(AX*8), X0
	VFMADD231SD (SI)(AX*8), X12, X0
	VFMADD231SD (R8)(AX*8), X13, X0
	VFMADD231SD (R9)(AX*8), X14, X0
	VFMADD231SD (R10)(AX*8), X15, X0
	VMOVSD      X0, (DI)(AX*8)
	INCQ        AX
	CMPQ        AX, CX
	JLT         a4loop1

a4done:
	VZEROUPPER
	RET

// func dot4F32FMA(dst *[4]float64, x []float32, stride int, y []float64)
//
// dot4FMA on float32 rows: each block of four entries of a row is widened
// to float64 (VCVTPS2PD, exact) and then used as in dot4FMA. The caller
// checks len(x) ≥ 3*stride + len(y).
TEXT ·dot4F32FMA(SB), NOSPLIT, $0-64
	MOVQ   dst+0(FP), BX
	MOVQ   x_base+8(FP), SI
	MOVQ   stride+32(FP), R11
	MOVQ   y_base+40(FP), DI
	MOVQ   y_len+48(FP), CX
	SHLQ   $2, R11
	LEAQ   (R11)(R11*2), R12
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	MOVQ   CX, DX
	SHRQ   $3, DX
	JZ     h4tail4

h4loop8:
	VMOVUPD     (DI), Y8
	VMOVUPD     32(DI), Y9
	VCVTPS2PD   (SI), Y10
	VCVTPS2PD   16(SI), Y11
	VCVTPS2PD   (SI)(R11*1), Y12
	VCVTPS2PD   16(SI)(R11*1), Y13
	VFMADD231PD Y10, Y8, Y0
	VFMADD231PD Y11, Y9, Y1
	VFMADD231PD Y12, Y8, Y2
	VFMADD231PD Y13, Y9, Y3
	VCVTPS2PD   (SI)(R11*2), Y10
	VCVTPS2PD   16(SI)(R11*2), Y11
	VCVTPS2PD   (SI)(R12*1), Y12
	VCVTPS2PD   16(SI)(R12*1), Y13
	VFMADD231PD Y10, Y8, Y4
	VFMADD231PD Y11, Y9, Y5
	VFMADD231PD Y12, Y8, Y6
	VFMADD231PD Y13, Y9, Y7
	ADDQ        $32, SI
	ADDQ        $64, DI
	DECQ        DX
	JNZ         h4loop8

h4tail4:
	TESTQ       $4, CX
	JZ          h4reduce
	VMOVUPD     (DI), Y8
	VCVTPS2PD   (SI), Y10
	VCVTPS2PD   (SI)(R11*1), Y11
	VCVTPS2PD   (SI)(R11*2), Y12
	VCVTPS2PD   (SI)(R12*1), Y13
	VFMADD231PD Y10, Y8, Y0
	VFMADD231PD Y11, Y8, Y2
	VFMADD231PD Y12, Y8, Y4
	VFMADD231PD Y13, Y8, Y6
	ADDQ        $16, SI
	ADDQ        $32, DI

h4reduce:
	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y5, Y4, Y4
	VADDPD       Y7, Y6, Y6
	VEXTRACTF128 $1, Y0, X1
	VEXTRACTF128 $1, Y2, X3
	VEXTRACTF128 $1, Y4, X5
	VEXTRACTF128 $1, Y6, X7
	VADDPD       X1, X0, X0
	VADDPD       X3, X2, X2
	VADDPD       X5, X4, X4
	VADDPD       X7, X6, X6
	VPERMILPD    $1, X0, X1
	VPERMILPD    $1, X2, X3
	VPERMILPD    $1, X4, X5
	VPERMILPD    $1, X6, X7
	VADDSD       X1, X0, X0
	VADDSD       X3, X2, X2
	VADDSD       X5, X4, X4
	VADDSD       X7, X6, X6
	ANDQ         $3, CX
	JZ           h4done

h4loop1:
	VMOVSD      (DI), X8
	VCVTSS2SD   (SI), X10, X10
	VCVTSS2SD   (SI)(R11*1), X11, X11
	VCVTSS2SD   (SI)(R11*2), X12, X12
	VCVTSS2SD   (SI)(R12*1), X13, X13
	VFMADD231SD X10, X8, X0
	VFMADD231SD X11, X8, X2
	VFMADD231SD X12, X8, X4
	VFMADD231SD X13, X8, X6
	ADDQ        $4, SI
	ADDQ        $8, DI
	DECQ        CX
	JNZ         h4loop1

h4done:
	VMOVSD X0, 0(BX)
	VMOVSD X2, 8(BX)
	VMOVSD X4, 16(BX)
	VMOVSD X6, 24(BX)
	VZEROUPPER
	RET

// func axpy4F32FMA(alpha *[4]float64, x []float32, stride int, y []float64)
//
// axpy4FMA on float32 rows, four entries at a time, widened as in
// dot4F32FMA. The caller checks len(x) ≥ 3*stride + len(y).
TEXT ·axpy4F32FMA(SB), NOSPLIT, $0-64
	MOVQ         alpha+0(FP), BX
	MOVQ         x_base+8(FP), SI
	MOVQ         stride+32(FP), R11
	MOVQ         y_base+40(FP), DI
	MOVQ         y_len+48(FP), CX
	VBROADCASTSD 0(BX), Y12
	VBROADCASTSD 8(BX), Y13
	VBROADCASTSD 16(BX), Y14
	VBROADCASTSD 24(BX), Y15
	SHLQ         $2, R11
	LEAQ         (R11)(R11*2), R12
	MOVQ         CX, DX
	SHRQ         $2, DX
	JZ           b4tail1

b4loop4:
	VCVTPS2PD   (SI), Y4
	VCVTPS2PD   (SI)(R11*1), Y5
	VCVTPS2PD   (SI)(R11*2), Y6
	VCVTPS2PD   (SI)(R12*1), Y7
	VMOVUPD     (DI), Y0
	VFMADD231PD Y4, Y12, Y0
	VFMADD231PD Y5, Y13, Y0
	VFMADD231PD Y6, Y14, Y0
	VFMADD231PD Y7, Y15, Y0
	VMOVUPD     Y0, (DI)
	ADDQ        $16, SI
	ADDQ        $32, DI
	DECQ        DX
	JNZ         b4loop4

b4tail1:
	ANDQ $3, CX
	JZ   b4done

b4loop1:
	VCVTSS2SD   (SI), X4, X4
	VCVTSS2SD   (SI)(R11*1), X5, X5
	VCVTSS2SD   (SI)(R11*2), X6, X6
	VCVTSS2SD   (SI)(R12*1), X7, X7
	VMOVSD      (DI), X0
	VFMADD231SD X4, X12, X0
	VFMADD231SD X5, X13, X0
	VFMADD231SD X6, X14, X0
	VFMADD231SD X7, X15, X0
	VMOVSD      X0, (DI)
	ADDQ        $4, SI
	ADDQ        $8, DI
	DECQ        CX
	JNZ         b4loop1

b4done:
	VZEROUPPER
	RET
