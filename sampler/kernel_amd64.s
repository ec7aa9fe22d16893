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

// func dotFMA(x, y []float64) float64
//
// The arithmetic is that of dotGeneric: sixteen lane accumulators (four
// YMM registers) over blocks of 16, then blocks of 4 into the first
// register, a fixed reduction tree, and a scalar FMA tail. len(y) ≥ len(x)
// is checked by the caller.
TEXT ·dotFMA(SB), NOSPLIT, $0-56
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	MOVQ y_base+24(FP), DI
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-16, DX
	JZ   dot4

dot16:
	VMOVUPD     (SI)(AX*8), Y4
	VMOVUPD     32(SI)(AX*8), Y5
	VMOVUPD     64(SI)(AX*8), Y6
	VMOVUPD     96(SI)(AX*8), Y7
	VFMADD231PD (DI)(AX*8), Y4, Y0
	VFMADD231PD 32(DI)(AX*8), Y5, Y1
	VFMADD231PD 64(DI)(AX*8), Y6, Y2
	VFMADD231PD 96(DI)(AX*8), Y7, Y3
	ADDQ        $16, AX
	CMPQ        AX, DX
	JLT         dot16

dot4:
	MOVQ CX, DX
	ANDQ $-4, DX
	CMPQ AX, DX
	JGE  dotreduce

dot4loop:
	VMOVUPD     (SI)(AX*8), Y4
	VFMADD231PD (DI)(AX*8), Y4, Y0
	ADDQ        $4, AX
	CMPQ        AX, DX
	JLT         dot4loop

dotreduce:
	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y2, Y0, Y0
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
